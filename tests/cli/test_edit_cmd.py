from fxstudio import cli


def test_edit_prints_the_code_and_saves_a_session_that_exports(tmp_path, capsys):
    session = tmp_path / "e.fxstudio"
    args = ["edit", "examples:negrelu", "-o", str(session)]
    for edit in (
        "target relu torch.tanh",
        "splice neg add nn.Linear(8, 8)",
        "insert mul .softmax dim=-1",
        "rename softmax probs",
        "outputs probs",
    ):
        args += ["-e", edit]
    assert cli.main(args) == 0
    out, err = capsys.readouterr()
    assert "relu = torch.tanh(y)" in out and "return probs" in out
    assert "Insert linear between neg and add" in err and session.exists()
    module = tmp_path / "m.py"
    assert cli.main(["export", str(session), "-o", str(module), "--verify"]) == 0
    assert "bit for bit" in capsys.readouterr().out


def test_a_refused_edit_stops_with_a_message_and_writes_nothing(tmp_path, capsys):
    session = tmp_path / "e.fxstudio"
    code = cli.main(
        ["edit", "examples:negrelu", "-e", "delete relu", "-e", "delete x", "-o", str(session)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "edit 2 (delete x) was refused: The input 'x' is used" in err
    assert not session.exists()
    assert cli.main(["edit", "examples:negrelu", "-e", "frobnicate"]) == 2
    assert "Unknown edit 'frobnicate'" in capsys.readouterr().err


def test_a_call_that_cannot_run_is_refused_and_a_mismatch_after_it_kept(capsys):
    assert cli.main(["edit", "examples:simple", "-e", "args fc2 x"]) == 2
    err = capsys.readouterr().err
    assert "edit 1 (args fc2 x) was refused: 'fc2' cannot run fc2 on its inputs" in err
    assert "mat1 and mat2 shapes cannot be multiplied (2x16 and 32x4)" in err
    assert cli.main(["edit", "examples:simple", "-e", "target act fc2"]) == 0
    err = capsys.readouterr().err
    assert "the shapes no longer fit at fc2: mat1 and mat2 shapes cannot be multiplied" in err
