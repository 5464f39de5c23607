"""The window and the command line run the same flow: what a user saves from the Run dock
is the JSON ``fxstudio profile --json`` writes, and the Patterns dock's report is what
``fxstudio rewrite --json`` prints, for the same model and options.

Timings differ between two runs, so a profile is compared by its shape (every key, every
value's kind) and its measured-once parts (options, environment, output check); a rewrite
is compared whole, its seconds apart.  Both sides run in this one process."""

import json

from fxstudio import cli


def shape(value):
    """The keys, all the way down, not the values (a time is whatever it measured, and so
    whether a node's achieved rate makes it memory- or compute-bound); the records of a list
    by the keys they have."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    if isinstance(value, list):  # (a list of notes or warnings may be empty one run)
        return sorted({json.dumps(shape(v), sort_keys=True) for v in value if isinstance(v, dict)})
    return "value"


def test_the_run_docks_json_is_the_clis(qtbot, docks, tmp_path):
    ctx = docks("run")
    ctx.open("examples:negrelu")
    panel = ctx.panels["run"]
    panel.min_time.setValue(0.05)
    panel.threads.setValue(1)
    panel.per_node.setChecked(True)
    with qtbot.waitSignal(panel.finished, timeout=120000):
        panel.run_button.click()
    assert panel.export("json", tmp_path / "window.json")
    args = ["profile", "examples:negrelu", "--threads", "1", "--min-time", "0.05"]
    assert cli.main([*args, "--per-node", "--json", str(tmp_path / "cli.json")]) == 0
    ours, theirs = (json.loads((tmp_path / f).read_text()) for f in ("window.json", "cli.json"))
    assert shape(ours) == shape(theirs)
    for key in ("options", "env", "check", "notes"):
        assert ours[key] == theirs[key], key
    assert {n["name"] for n in ours["nodes"]} == {n["name"] for n in theirs["nodes"]}


def test_the_patterns_docks_report_is_the_clis(qtbot, docks, tmp_path, capsys):
    ctx = docks("patterns")
    patterns = tmp_path / "negrelu_pattern.py"
    patterns.write_text(
        "import torch\n\n\n"
        "def pattern(x, y):\n    return torch.neg(x) + torch.relu(y)\n\n\n"
        "def replacement(x, y):\n    return torch.relu(y) - x\n"
    )
    ctx.open("examples:negrelu")
    panel = ctx.panels["patterns"]
    with qtbot.waitSignal(panel.found, timeout=60000):
        assert panel.open_file(str(patterns))
    with qtbot.waitSignal(panel.rewritten, timeout=60000):
        panel.replace_button.click()
    assert panel.save_report(str(tmp_path / "window.json"))
    capsys.readouterr()
    args = ["rewrite", "examples:negrelu", "--pattern", f"{patterns}:pattern"]
    assert cli.main([*args, "--replacement", f"{patterns}:replacement", "--json"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    ours = json.loads((tmp_path / "window.json").read_text())
    for data in (ours, theirs):
        data.pop("seconds")
    assert ours == theirs
    assert ours["replaced"] == 1 and ours["check"]["ok"]
