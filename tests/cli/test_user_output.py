"""A model's own output never spoils a command's data: what the model prints while its file
is imported, while it is built and while it runs goes to stderr, and stdout carries only
the table, code or JSON the command writes."""

import json

import pytest

from fxstudio import cli
from tests.conftest import run_fxstudio

#: Prints at import, in __init__ and in forward: with print, and to file descriptor 1 as C
#: code does (os.write bypasses sys.stdout).
CHATTY = (
    "import os\nimport torch\n"
    "print('chatter: importing')\n"
    "class Net(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        print('chatter: building')\n"
    "        self.fc = torch.nn.Linear(4, 4)\n"
    "    def forward(self, x):\n"
    "        print('chatter: running')\n"
    "        os.write(1, b'chatter: from C\\n')\n"
    "        return torch.relu(self.fc(x))\n"
    "def example_inputs():\n    return (torch.randn(2, 4),)\n"
)


def test_show_json_parses_while_the_model_prints_in_a_real_process(tmp_path):
    (tmp_path / "chatty.py").write_text(CHATTY)
    result = run_fxstudio("show", "chatty.py:Net", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)  # nothing but the JSON
    assert "fc" in json.dumps(data)
    for said in ("importing", "building", "running", "from C"):
        assert f"chatter: {said}" in result.stderr


def test_step_json_and_export_in_a_real_process(tmp_path):
    (tmp_path / "chatty.py").write_text(CHATTY)
    step = run_fxstudio("step", "chatty.py:Net", "--format", "json", cwd=tmp_path)
    assert step.returncode == 0, step.stderr
    assert [n["name"] for n in json.loads(step.stdout)["nodes"]][:2] == ["x", "fc"]
    assert "chatter: running" in step.stderr and "chatter: from C" in step.stderr
    saved = run_fxstudio("export", "chatty.py:Net", "-o", "net.py", "--verify", cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    assert "chatter" not in saved.stdout and "chatter: running" in saved.stderr
    assert saved.stdout.startswith("wrote ") and "bit for bit" in saved.stdout


@pytest.mark.parametrize(
    "args, check",
    [
        (["show", "{m}", "--format", "json"], lambda out: json.loads(out)["nodes"]),
        (["show", "{m}", "--format", "code"], lambda out: compile(out, "code", "exec")),
        (["show", "{m}"], lambda out: out.splitlines()[0].split()[:2] == ["opcode", "name"]),
        (["step", "{m}", "--format", "json"], lambda out: json.loads(out)["nodes"]),
        (["rewrite", "{m}", "--builtin", "remove-noops", "--json"], json.loads),
        (["edit", "{m}", "-e", "rename fc fc_renamed"], lambda out: "fc_renamed" in out),
        (["layout", "{m}"], lambda out: "nodes" in out),
        (["diff", "{m}", "--right-frontend", "export"], lambda out: " vs " in out),
        (["profile", "{m}", "--min-time", "0.05"], lambda out: out.startswith("{m}")),
        (["compile", "--explain", "{m}"], lambda out: out.startswith("{m}: ")),
    ],
    ids=lambda a: " ".join(a) if isinstance(a, list) else "",
)
def test_every_command_keeps_the_models_output_off_stdout(write_model, capsys, args, check):
    spec = f"{write_model(CHATTY, 'chatty.py')}:Net"
    assert cli.main([a.replace("{m}", spec) for a in args]) == 0
    captured = capsys.readouterr()
    assert "chatter" not in captured.out
    assert "chatter: building" in captured.err
    assert check(captured.out.replace(spec, "{m}"))  # the data, whole


def test_help_still_goes_to_stdout(capsys):
    assert cli.main(["show", "--help"]) == 0
    assert "usage: fxstudio show" in capsys.readouterr().out
