"""``fxstudio step`` headless: the table, JSON, --until, an unknown node."""

import json

from fxstudio import cli


def test_table_until_a_node(capsys) -> None:
    assert cli.main(["step", "examples:resnet", "--until", "layer1_0_bn1"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["#", "node", "op", "value"]
    assert lines[-3].split()[1] == "layer1_0_bn1"  # stopped after it
    assert "[1, 16, 32, 32] float32" in out
    assert "matches the eager model at all" in out


def test_json_has_every_node_and_the_verdict(capsys) -> None:
    assert cli.main(["step", "examples:simple", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [n["name"] for n in data["nodes"]] == ["x", "fc1", "act", "fc2", "output"]
    assert data["nodes"][1]["value"]["shape"] == [2, 32]
    assert data["nodes"][1]["eager"]["same"] is True and data["first_difference"] is None


def test_an_unknown_node_is_refused(capsys) -> None:
    assert cli.main(["step", "examples:simple", "--until", "nope", "--no-eager"]) == 2
    assert "no node 'nope'" in capsys.readouterr().err


def test_model_explorer_node_data_of_each_nodes_largest_value(tmp_path, capsys) -> None:
    out = tmp_path / "values.json"
    assert cli.main(["step", "examples:simple", "--model-explorer", str(out)]) == 0
    results = json.loads(out.read_text())["graph"]["results"]
    assert set(results) == {"x", "fc1", "act", "fc2", "output"}  # every node holding a tensor
    assert all(r["value"] >= 0 for r in results.values())
    before = out.read_text()
    assert cli.main(["step", "examples:simple", "--model-explorer", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and out.read_text() == before
