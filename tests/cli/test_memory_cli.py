"""``fxstudio memory`` headless: the JSON, per-node data for other viewers, a baseline, a
structure-only model at a size no machine here could run, and bad input said plainly."""

import json
import math

from fxstudio import cli


def test_json_and_per_node_data_for_model_explorer_and_netron(tmp_path, capsys) -> None:
    out, explorer, netron = tmp_path / "m.json", tmp_path / "me.json", tmp_path / "n.json"
    args = ["memory", "examples:resnet", "--input", "2x3x32x32", "--json", str(out)]
    args += ["--model-explorer", str(explorer), "--netron", str(netron)]
    assert cli.main(args) == 0
    said = capsys.readouterr().out
    assert "peak" in said and ("KiB" in said or "MiB" in said)
    data = json.loads(out.read_text())
    assert {"params_bytes", "peak_bytes", "peak_node", "nodes", "modules", "live_at_peak"} <= set(
        data
    )
    assert data["inputs"] == ["2x3x32x32:float32"]
    nodes = {n["name"]: n for n in data["nodes"]}
    assert data["peak_node"] in nodes and data["peak_bytes"] >= max(
        n["live_bytes"] for n in data["nodes"]
    )
    assert all({"name", "bytes", "live_bytes"} <= set(n) for n in data["nodes"])
    # Model Explorer node data and Netron metrics: each node's bytes in MiB, by FX node name
    results = json.loads(explorer.read_text())["graph"]["results"]
    assert set(results) == set(nodes)
    name = max(nodes, key=lambda k: nodes[k]["bytes"])
    assert math.isclose(results[name]["value"], nodes[name]["bytes"] / 2**20)
    metrics = json.loads(netron.read_text())
    assert {m["target"] for m in metrics["metrics"]} == set(nodes)
    # an existing output is kept without --force
    before = out.read_text()
    assert cli.main(["memory", "examples:simple", "--json", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and out.read_text() == before


def test_a_bigger_batch_against_the_model_at_its_own(tmp_path, capsys) -> None:
    out = tmp_path / "c.json"
    args = ["memory", "examples:simple", "--input", "64x16", "--against", "examples:simple"]
    assert cli.main([*args, "--json", str(out)]) == 0
    assert "against examples:simple" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["before"]["peak_bytes"] == data["after"]["peak_bytes"] == data["peak_bytes"]
    assert data["difference"]["peak_bytes"] == 0 and data["difference"]["gone"] == []


def test_a_structure_only_llama_at_8192_tokens(tmp_path, capsys) -> None:
    out = tmp_path / "l.json"
    spec = (
        "hf:llama(num_hidden_layers=2, hidden_size=1024, intermediate_size=4096, "
        "num_attention_heads=16, num_key_value_heads=4, vocab_size=32000)"
    )
    args = ["memory", spec, "--no-weights", "--input", "1x8192:int64", "--module", "layers.1"]
    assert cli.main([*args, "--json", str(out)]) == 0
    said = capsys.readouterr().out
    assert "layers.1: allocates" in said and "MiB" in said
    data = json.loads(out.read_text())
    assert data["how"] == "recorded+calls"  # the record's shapes, not a run of the graph
    assert any(n["bytes"] == 8192 * 4096 * 4 for n in data["nodes"])  # the MLP's 128 MiB


def test_bad_input_is_said_with_what_to_do(capsys) -> None:
    assert cli.main(["memory", "examples:simple", "--input", "2x15"]) == 2
    err = capsys.readouterr().err
    assert "2x15:float32" in err and "--input" in err and "Traceback" not in err
    assert cli.main(["memory", "examples:simple", "--module", "encoder"]) == 2
    err = capsys.readouterr().err
    assert "no module 'encoder'" in err and "fc1" in err
    assert cli.main(["memory", "examples:simple", "--optimizer", "lion"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_model_without_example_inputs_asks_for_their_sizes(write_model, capsys) -> None:
    path = write_model(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
    )
    assert cli.main(["memory", f"{path}:Net"]) == 2
    err = capsys.readouterr().err
    assert "takes 1 input(s) (x), but 0 were given" in err and "--input" in err
    assert cli.main(["memory", f"{path}:Net", "--input", "3x4"]) == 0
    assert "peak 96 B" in capsys.readouterr().out  # x and fc's output, 48 B each


def test_measured_against_a_baseline_gives_both_measured_peaks(tmp_path, capsys) -> None:
    out = tmp_path / "m.json"
    args = ["memory", "examples:resnet", "--against", "examples:resnet", "--measure"]
    assert cli.main([*args, "--json", str(out)]) == 0
    assert "measured: peak" in capsys.readouterr().out
    data = json.loads(out.read_text())
    before, after = data["before"]["measured_peak_bytes"], data["after"]["measured_peak_bytes"]
    assert data["difference"]["measured_peak_bytes"] == after - before
    assert after > 0 and data["measured_peak_bytes"] == after
