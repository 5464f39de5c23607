import json

import pytest

from fxstudio import cli
from fxstudio.core.sessions.documents import open_document
from tests.conftest import EXAMPLES, run_fxstudio


def test_show_table_lists_every_node_with_its_shape(capsys):
    assert cli.main(["show", "examples:resnet", "--format", "table"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == [
        "opcode",
        "name",
        "target",
        "args",
        "kwargs",
        "shape",
        "dtype",
        "module_path",
    ]
    doc = open_document("examples:resnet")
    body = {line.split()[1]: line for line in lines[2:]}
    assert set(body) == set(doc.node_names())
    for row in doc.rows():
        if row.shape:
            assert row.shape in body[row.name].split(), row.name
    assert "1x10" in body["fc"]


def test_show_code_is_the_generated_forward(capsys):
    assert cli.main(["show", "examples:negrelu", "--format", "code"]) == 0
    out = capsys.readouterr().out
    assert out == open_document("examples:negrelu").code()
    assert "neg = torch.neg(x)" in out


def test_show_json_with_the_export_frontend(capsys):
    assert cli.main(["show", "examples:simple", "--format", "json", "--frontend", "export"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["frontend"] == "export"
    ops = {n["name"]: n for n in data["nodes"]}
    linear = next(n for n in data["nodes"] if n["target"].endswith("linear.default"))
    assert linear["shape"] == [2, 32]
    assert {"source", "target", "arg"} <= set(data["edges"][0])
    assert "x" in ops


def test_show_with_explicit_inputs(capsys):
    assert cli.main(["show", "examples:simple", "--input", "7x16"]) == 0
    assert "7x32" in capsys.readouterr().out


def test_branchy_exits_2_naming_file_and_line(capsys):
    assert cli.main(["show", "examples:branchy"]) == 2
    err = capsys.readouterr().err
    line = next(
        i
        for i, t in enumerate((EXAMPLES / "branchy.py").read_text().splitlines(), 1)
        if t.strip() == "if x.sum() > 0:"
    )
    assert f"branchy.py:{line}" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args, expected",
    [
        (["show", "missing.py:Net"], "No such file: missing.py"),
        (["show", "not a spec"], "is not a model spec"),
        (
            ["show", "examples:simple", "--input", "2x5"],
            "mat1 and mat2 shapes cannot be multiplied",
        ),
        (["show", "examples:simple", "--input", "2xq"], "is not an input spec"),
        (["show", "examples:nosuch"], "There is no built-in example 'nosuch'"),
    ],
)
def test_bad_input_exits_2_with_a_message(capsys, args, expected):
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert expected in err and err.startswith("fxstudio: error:")
    assert "Traceback" not in err


def test_syntax_error_in_model_file(capsys, write_model):
    path = write_model("import torch\ndef make(:\n    pass\n")
    assert cli.main(["show", f"{path}:make"]) == 2
    assert f"{path}:2" in capsys.readouterr().err


def test_debug_shows_the_traceback(capsys):
    assert cli.main(["show", "examples:branchy", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_usage_error_exits_2(capsys):
    assert cli.main(["show"]) == 2
    assert cli.main(["show", "examples:simple", "--format", "yaml"]) == 2


def test_an_fxstudio_bug_exits_1(capsys, monkeypatch):
    import fxstudio.core.flows as session  # (the front door the command line calls)

    def broken(_request):
        raise RuntimeError("something inside fxstudio broke")

    monkeypatch.setattr(session, "open_document", broken)
    assert cli.main(["show", "examples:simple"]) == 1
    err = capsys.readouterr().err
    assert "internal error" in err and "bug" in err


def test_a_real_process(tmp_path):
    result = run_fxstudio("show", "examples:negrelu", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "mul" in result.stdout
    failed = run_fxstudio("show", "examples:branchy", cwd=tmp_path)
    assert failed.returncode == 2
    assert "branchy.py:" in failed.stderr and "Traceback" not in failed.stderr


def test_a_bare_path_with_several_models_names_them_and_how_to_choose(write_model, capsys):
    """``fxstudio show model.py`` on a file with several models opens none of them: it names
    them, and the spec that chooses one."""
    from tests.core.test_modelfiles import TWO_MODELS_AND_A_FACTORY

    path = write_model(TWO_MODELS_AND_A_FACTORY)
    assert cli.main(["show", str(path)]) == 2
    err = capsys.readouterr().err
    assert "defines several models: small, tiny, Wide, Deep" in err
    assert f"Choose one: {path}:small" in err
