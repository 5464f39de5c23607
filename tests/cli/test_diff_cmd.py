"""``fxstudio diff`` headless: the summary, --json's fields, Model Explorer node data, and
bad input (exit 2, nothing written)."""

import json

from fxstudio import cli


def test_a_fold_diffed_lists_the_batchnorms_removed_and_the_convs_changed(tmp_path, capsys):
    out, me = tmp_path / "diff.json", tmp_path / "me.json"
    argv = ["diff", "examples:resnet", "--rewrite", "fold-conv-bn", "--json", str(out)]
    assert cli.main([*argv, "--model-explorer", str(me)]) == 0
    text = capsys.readouterr().out
    assert "15 changed, 15 removed, 0 added" in text and "all 39 compared pairs agree" in text
    data = json.loads(out.read_text())
    assert set(data) == {"pairs", "removed", "added", "values"}
    assert {"left", "right", "how", "status"} <= set(data["pairs"][0])
    assert "layer1_0_bn1" in data["removed"] and data["added"] == []
    conv = next(p for p in data["pairs"] if p["left"] == "layer1_0_conv1")
    assert conv == {**conv, "right": "layer1_0_conv1", "how": "provenance", "status": "changed"}
    assert data["values"]["first_difference"] is None
    row = data["values"]["nodes"][0]
    assert {"left", "right", "max_abs_diff", "max_rel_diff"} <= set(row)
    results = json.loads(me.read_text())["graph"]["results"]
    assert set(results) == {p["right"] for p in data["pairs"]}


def test_the_fx_and_export_captures_of_one_model(capsys):
    assert cli.main(["diff", "examples:resnet", "--right-frontend", "export"]) == 0
    text = capsys.readouterr().out
    assert "100% of the left's" in text and "0 changed, 0 removed" in text
    assert "agree" in text


def test_a_side_that_cannot_open_is_exit_2_and_nothing_is_written(tmp_path, capsys):
    out = tmp_path / "diff.json"
    assert (
        cli.main(["diff", "examples:resnet", str(tmp_path / "nope.py:M"), "--json", str(out)]) == 2
    )
    assert "No such file" in capsys.readouterr().err and not out.exists()


def test_right_or_a_rewrite_is_needed(capsys):
    assert cli.main(["diff", "examples:resnet"]) == 2
    assert "give RIGHT" in capsys.readouterr().err


def test_per_node_data_without_values_is_refused_before_any_work(tmp_path, capsys):
    out, me = tmp_path / "d.json", tmp_path / "me.json"
    argv = ["diff", "examples:simple", "--rewrite", "dce", "--no-values", "--json", str(out)]
    assert cli.main([*argv, "--model-explorer", str(me)]) == 2
    assert "needs the values" in capsys.readouterr().err
    assert not out.exists() and not me.exists()  # nothing written


def test_times_give_each_fold_the_time_of_the_conv_and_batchnorm_it_replaced(tmp_path, capsys):
    out = tmp_path / "diff.json"
    argv = ["diff", "examples:resnet", "--rewrite", "fold-conv-bn", "--times", "--min-time"]
    assert cli.main([*argv, "0.05", "--no-values", "--json", str(out)]) == 0
    assert "times: " in capsys.readouterr().out
    times = json.loads(out.read_text())["times"]
    assert {"speedup", "ci_low", "ci_high", "significant"} <= set(times["whole"])
    conv = next(p for p in times["pairs"] if p["right"] == ["layer1_0_conv1"])
    assert conv["left"] == ["layer1_0_conv1", "layer1_0_bn1"]  # the BatchNorm's time with it
    assert conv["ci_low"] <= conv["speedup"] <= conv["ci_high"]
    assert conv["delta_s"] == conv["after_s"] - conv["before_s"]
    assert any(m["before"] == ["layer1"] for m in times["modules"])  # module roll-up


def test_two_sessions_a_rewrite_apart(tmp_path, capsys):
    before, after = tmp_path / "before.fxstudio", tmp_path / "after.fxstudio"
    assert (
        cli.main(
            ["edit", "examples:resnet", "-e", "rename layer1_0_relu first_relu", "-o", str(before)]
        )
        == 0
    )
    assert cli.main(["rewrite", str(before), "--builtin", "fold-conv-bn", "-o", str(after)]) == 0
    capsys.readouterr()
    out = tmp_path / "d.json"
    assert cli.main(["diff", str(before), str(after), "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert len(data["removed"]) == 15 and data["added"] == []
    assert {"left": "first_relu", "right": "first_relu", "how": "name", "status": "same"} in data[
        "pairs"
    ]
    assert data["values"]["first_difference"] is None
