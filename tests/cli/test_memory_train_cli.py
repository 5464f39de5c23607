"""``fxstudio memory --train``: a training step headless -- of a structure-only LLaMA at a size
no machine here could train (the joint graph on fake tensors), and of one with weights measured
beside its estimate; the optimizers as the command names them."""

import json

from fxstudio import cli

LLAMA = (
    "hf:llama(num_hidden_layers=2, hidden_size=1024, intermediate_size=4096, "
    "num_attention_heads=16, num_key_value_heads=4, vocab_size=32000)"
)
TINY = (
    "hf:llama(num_hidden_layers=2, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=128, "
    "attn_implementation='eager')"
)


def test_a_structure_only_llamas_adamw_step_at_8192_tokens(tmp_path, capsys) -> None:
    out = tmp_path / "t.json"
    args = ["memory", LLAMA, "--no-weights", "--input", "1x8192:int64", "--train"]
    assert cli.main([*args, "--json", str(out)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "training step: adamw: peak" in said and "GiB" in said
    step = json.loads(out.read_text())["training"]
    params = step["grads_bytes"] // 4  # float32
    assert step["optimizer_bytes"] == 2 * step["grads_bytes"] + 4 * 20  # 20 parameter tensors
    layer = 2 * 1024 * 1024 + 2 * 1024 * 256 + 3 * 1024 * 4096 + 2 * 1024  # attn, MLP, norms
    assert params == 32000 * 1024 + 2 * layer + 1024
    assert step["saved_bytes"] > 2 * 8192 * 4096 * 4  # an MLP's activations in each layer
    assert step["peak_bytes"] > step["params_bytes"] + step["optimizer_bytes"]
    assert any(n["origin"] for n in step["backward"])  # linked to the document's nodes


def test_a_momentum_step_measured_beside_its_estimate(tmp_path, capsys) -> None:
    out = tmp_path / "m.json"
    args = ["memory", TINY, "--input", "1x64:int64", "--train", "--optimizer", "momentum"]
    assert cli.main([*args, "--measure", "--json", str(out)]) == 0
    said = capsys.readouterr().out
    assert "measured (cpu), estimate/measured" in said
    step = json.loads(out.read_text())["training"]
    assert step["optimizer_bytes"] == step["grads_bytes"]  # one momentum buffer each
    assert (
        abs(step["peak_bytes"] - step["measured_peak_bytes"]) <= 0.1 * step["measured_peak_bytes"]
    )
