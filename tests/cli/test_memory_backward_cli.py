"""``fxstudio memory --train --backward``: the training step's backward nodes in words after
the summary, one line each in order -- the bytes it allocates, the live bytes after it, the
document's node it comes from -- as the JSON has them; without --train, said and refused."""

import json

from fxstudio import cli
from fxstudio.core.process.guard import format_bytes

TINY = (
    "hf:llama(num_hidden_layers=2, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=128, "
    "attn_implementation='eager')"
)


def test_the_backward_nodes_are_printed_in_order_with_where_they_come_from(tmp_path, capsys):
    out = tmp_path / "b.json"
    args = ["memory", TINY, "--input", "1x64:int64", "--train", "--backward"]
    assert cli.main([*args, "--json", str(out)]) == 0
    said = capsys.readouterr().out.splitlines()
    step = json.loads(out.read_text())["training"]
    rows = step["backward"]
    head = next(i for i, line in enumerate(said) if line.strip().startswith("backward:"))
    assert any("training step: adamw: peak" in line for line in said[:head])  # the summary first
    assert f"backward: {len(rows)} node(s) in order" in said[head]
    lines = said[head + 1 : head + 1 + len(rows)]
    assert len(lines) == len(rows)
    for k, (line, row) in enumerate(zip(lines, rows, strict=True)):
        words = line.split()
        assert words[:2] == [str(k), row["name"]]
        assert format_bytes(row["live_bytes"]) in line
        if row["bytes"]:
            assert format_bytes(row["bytes"]) in line
        if row["origin"]:
            assert line.endswith(f"from {row['origin']}")
    assert sum(1 for row in rows if row["origin"]) > len(rows) // 2  # most linked to the graph
    assert any(line.endswith("(the loss's gradient)") for line in lines)


def test_backward_without_train_is_refused_and_said(capsys):
    assert cli.main(["memory", TINY, "--backward"]) == 2
    assert "add --train" in capsys.readouterr().err
