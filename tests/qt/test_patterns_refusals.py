"""The Patterns dock says why a built-in changes nothing: the preview's summary counts the
places it looked at and why each was left alone, and lists each (the same result object the
command line prints)."""

from tests.qt.conftest import open_and_wait

QKV = ("2x4x8x16", "2x4x8x16", "2x4x8x16", "2x1x8x8")


def test_fuse_attention_preview_says_the_soft_cap_keeps_it_from_sdpa(qtbot, window):
    spec = "tests/core/attention_models.py:SoftCapped"
    open_and_wait(qtbot, window, spec, signal="layoutShown", frontend="export", inputs=QKV)
    panel = window.panels["patterns"]
    with qtbot.waitSignal(panel.found, timeout=60000):
        panel.choose_rewrite("fuse-attention")
    summary = panel.summary.text()
    assert summary.startswith(
        "Fuse attention into scaled_dot_product_attention: nothing to change -- 1 candidate, "
        "none fused: a tanh soft-cap on the scores, which scaled_dot_product_attention cannot "
        "express"
    ), summary
    rows = [panel.match_list.item(i).text() for i in range(panel.match_list.count())]
    assert len(rows) == 1 and "30 · tanh(s / 30)" in rows[0] and "fuse-attention-flex" in rows[0]
    # nothing to replace: Replace is off and says why; another built-in that has places
    # to change turns it on again
    assert not panel.replace_button.isEnabled()
    assert panel.replace_button.toolTip().startswith("Nothing to replace here: 1 candidate")
    with qtbot.waitSignal(panel.found, timeout=60000):
        panel.choose_rewrite("fuse-attention-flex")
    assert panel.replace_button.isEnabled() and panel.replace_button.toolTip() == ""
