import json
import subprocess
import sys
import textwrap

from fxstudio import cli

PATTERNS = textwrap.dedent(
    """
    import torch

    def pattern(x, y):
        return torch.neg(x) + torch.relu(y)

    def replacement(x, y):
        return torch.relu(y) - x

    def strict(x):
        return torch.relu(x + 1.0)

    def gelu(x):
        return torch.nn.functional.gelu(x + 1.0)
    """
)

MODEL = textwrap.dedent(
    """
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            return F.relu(self.fc(x) + 1.0)

    def example_inputs():
        return (torch.randn(2, 8),)
    """
)


def test_rewrite_json_and_a_session_that_chains(tmp_path, capsys):
    pats = tmp_path / "pats.py"
    pats.write_text(PATTERNS)
    session = tmp_path / "r.fxstudio"
    args = [
        "rewrite",
        "examples:negrelu",
        "--pattern",
        f"{pats}:pattern",
        "--replacement",
        f"{pats}:replacement",
        "--json",
        "-o",
        str(session),
    ]
    assert cli.main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["replaced"] == 1 and len(out["matches"]) == 1
    assert out["check"]["ok"] is True and out["check"]["max_abs_diff"] == 0.0
    assert set(out["seconds"]) == {"match", "replace"} and session.exists()
    # the session opens with the rewrite replayed, and rewrites chain on it
    assert cli.main(["show", str(session), "--format", "code"]) == 0
    assert "neg" not in capsys.readouterr().out


def test_a_pattern_with_no_match_explains_itself_and_exits_2(tmp_path, capsys):
    pats = tmp_path / "pats.py"
    pats.write_text(PATTERNS)
    model = tmp_path / "model.py"
    model.write_text(MODEL)
    code = cli.main(
        [
            "rewrite",
            f"{model}:Net",
            "--pattern",
            f"{pats}:strict",
            "--replacement",
            f"{pats}:gelu",
            "--fx-rules",
        ]
    )
    assert code == 2
    out = capsys.readouterr().out
    assert "target differs -- F.relu is not torch.relu" in out
    assert "equivalent spellings" in out


def test_fold_conv_bn_saves_a_module_without_batchnorm(tmp_path):
    out = tmp_path / "r.py"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fxstudio",
            "rewrite",
            "examples:resnet",
            "--builtin",
            "fold-conv-bn",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Check passed" in done.stdout and "15 replaced" in done.stdout
    assert "BatchNorm" not in out.read_text()


def test_list_and_a_bad_builtin(capsys):
    assert cli.main(["rewrite", "--list"]) == 0
    assert "fold-conv-bn" in capsys.readouterr().out
    assert cli.main(["rewrite", "examples:negrelu", "--builtin", "nope"]) == 2
    assert "There is no built-in rewrite 'nope'" in capsys.readouterr().err


def test_a_rewrite_meant_to_change_values_is_written(tmp_path, capsys):
    pats = tmp_path / "pats.py"
    pats.write_text(PATTERNS)
    out = tmp_path / "g.py"
    base = ["rewrite", "examples:negrelu", "--pattern", f"{pats}:pattern"]
    args = [*base, "--replacement", f"{pats}:strict", "-o", str(out)]
    # strict takes one input, the pattern two: refused before anything runs
    assert cli.main(args) == 2 and "takes 1 arguments" in capsys.readouterr().err
    other = textwrap.dedent(
        """
        import torch

        def pattern(x, y):
            return torch.neg(x) + torch.relu(y)

        def replacement(x, y):
            return torch.tanh(x)
        """
    )
    pats.write_text(other)
    args = [*base, "--replacement", f"{pats}:replacement", "-o", str(out)]
    assert cli.main(args) == 2 and not out.exists()
    assert "--allow-difference" in capsys.readouterr().err
    assert cli.main([*args, "--allow-difference"]) == 0 and out.exists()
    assert "found other values (as intended)" in capsys.readouterr().out


def test_explain_a_node_the_rewrite_replaces_or_one_that_is_not_there(tmp_path, capsys):
    pats = tmp_path / "pats.py"
    pats.write_text(PATTERNS)
    base = [
        "rewrite",
        "examples:negrelu",
        "--pattern",
        f"{pats}:pattern",
        "--replacement",
        f"{pats}:replacement",
    ]
    # relu is replaced: it is explained on the graph as matched, before the replacement
    assert cli.main([*base, "--explain", "relu"]) == 0
    assert "relu is in match 1 (neg, relu, add): it matches." in capsys.readouterr().out
    assert cli.main([*base, "--explain", "nope"]) == 2
    assert "There is no node named 'nope'" in capsys.readouterr().err


def test_a_replacement_that_returns_none_is_refused_in_words(tmp_path, capsys):
    patterns = tmp_path / "none.py"
    patterns.write_text(
        "import torch\n"
        "def pattern(x):\n    return torch.relu(x)\n"
        "def replacement(x):\n    return None\n"
    )
    args = ["rewrite", "examples:negrelu", "--pattern", f"{patterns}:pattern"]
    assert cli.main([*args, "--replacement", f"{patterns}:replacement"]) == 2
    err = capsys.readouterr().err
    assert "The replacement replacement returns None" in err and "Traceback" not in err


def test_a_built_in_dry_run_lists_what_it_would_change_and_changes_nothing(tmp_path, capsys):
    out = tmp_path / "never.py"
    code = cli.main(
        ["rewrite", "examples:resnet", "--builtin", "fold-conv-bn", "--dry-run", "--json",
         "-o", str(out)]
    )  # fmt: skip
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dry_run"] is True and report["replaced"] == 0
    assert len(report["would_replace"]) == 15
    assert report["check"] is None and not out.exists()  # nothing ran, nothing was written
