"""Repeated blocks on the canvas: a LLaMA's 32 identical layers, collapsed in the first
picture, are one box "layers.0–31 ×32"; a double-click expands the first and folds the rest;
the node table and search still reach every node."""

import pytest
from PySide6.QtCore import Qt

from fxstudio.core.graph.request import OpenRequest
from tests.models.test_real_models import needs_transformers

LLAMA_32 = ("tests/bench/synthetic.py:llama_32", "export", ("1x16:int64",))


def _draw(qtbot, window):
    with qtbot.waitSignal(window.layoutShown, timeout=120000) as shown:
        window.session.open(OpenRequest(*LLAMA_32))
    return shown.args[0]


@needs_transformers
@pytest.mark.slow
def test_identical_layers_fold_into_one_box_that_expands_one_at_a_time(qtbot, docks):
    ctx = docks("table")
    lay = _draw(qtbot, ctx)
    assert lay.folds["layers.0"] == [f"layers.{i}" for i in range(32)]
    scene = ctx.canvas.scene()
    box = scene.groups["layers.0"]
    assert box.label == "layers.0–31 ×32 : LlamaDecoderLayer" and box.collapsed
    assert not any(f"layers.{i}" in scene.groups for i in range(1, 32))
    ctx.selection.select(["layers_20_self_attn_q_proj_weight"])  # hidden in the fold
    assert box.isSelected()
    assert ctx.panels["table"].model.row_of("layers_31_mlp_down_proj_weight") is not None
    view = ctx.canvas
    at = view.mapFromScene(box.sceneBoundingRect().center())
    with qtbot.waitSignal(ctx.layoutShown, timeout=120000) as shown:
        qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=at)
    lay = shown.args[0]
    scene = ctx.canvas.scene()
    assert "layers.0" not in lay.collapsed  # expanded: a frame with its nodes
    assert lay.folds == {"layers.1": [f"layers.{i}" for i in range(1, 32)]}
    assert scene.groups["layers.1"].label == "layers.1–31 ×31 : LlamaDecoderLayer"
