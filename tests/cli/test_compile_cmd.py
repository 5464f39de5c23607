"""``fxstudio compile --explain`` headless: the breaks at their lines, JSON, refusals."""

import json

from fxstudio import cli
from tests.core.test_compiling import BRANCHY


def test_explain_prints_and_writes_the_breaks(write_model, tmp_path, capsys):
    path = write_model(BRANCHY)
    out = tmp_path / "breaks.json"
    assert cli.main(["compile", "--explain", f"{path}:Branchy", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "3 graphs" in text and f"{path}:12" in text and f"{path}:14" in text
    data = json.loads(out.read_text())
    assert data["graphs"] == 3 and [b["line"] for b in data["graph_breaks"]] == [12, 14]


def test_what_is_not_built_is_refused_and_a_broken_model_is_exit_2(tmp_path, capsys):
    assert cli.main(["compile", "examples:simple"]) == 2
    assert "--explain" in capsys.readouterr().err
    assert cli.main(["compile", "--explain", str(tmp_path / "nope.py:M")]) == 2
    assert "No such file" in capsys.readouterr().err
