"""The inspector shows long values whole: wrapped at word boundaries, rows as tall as their
lines -- not elided, not cut mid-word (a conv's constructor read '16, 16, ke…size=(3, …')."""

from PySide6.QtCore import Qt

from fxstudio.qt.wrapped_text import breakable


def _cut_mid_word(text: str, lines: list[str]) -> list[tuple[str, str]]:
    """Where a line ends inside a word of ``text`` (not at one of its own line ends)."""
    pairs = zip(lines, lines[1:], strict=False)
    return [(a, b) for a, b in pairs if a[-1:].isalnum() and b[:1].isalnum() and a + b in text]


def _shown(qtbot, panel, item) -> list[str]:
    """The lines ``item``'s value is drawn in, once its row is as tall as they are."""
    tree = panel.tree
    lines = panel.values.lines(tree.indexFromItem(item, 1))
    tall = len(lines) * tree.fontMetrics().lineSpacing()
    qtbot.waitUntil(lambda: tree.visualItemRect(item).height() >= tall)
    return lines


def test_a_long_value_wraps_at_word_boundaries_in_a_narrow_inspector(qtbot, docks):
    ctx = docks("inspector")
    ctx.open("examples:resnet")
    panel, tree = ctx.panels["inspector"], ctx.panels["inspector"].tree
    ctx.window.resizeDocks([panel.dock], [240], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: panel.dock.width() <= 260)
    ctx.selection.select(["layer1_0_conv1"])
    rows = {
        tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
    }
    for label in ("constructor", "source"):
        lines = _shown(qtbot, panel, rows[label])
        assert "".join(lines) == rows[label].text(1).replace("\n", "")  # all of it
        assert len(lines) >= 3, lines  # 240 px: it had to wrap
        assert not _cut_mid_word(rows[label].text(1), lines), lines

    # a wider dock: the rows lay out again, in fewer lines
    ctx.window.resizeDocks([panel.dock], [600], Qt.Orientation.Horizontal)
    constructor = rows["constructor"]
    qtbot.waitUntil(
        lambda: tree.visualItemRect(constructor).height() < 3 * tree.fontMetrics().lineSpacing()
    )
    assert len(_shown(qtbot, panel, constructor)) <= 2


def test_long_words_break_after_punctuation_only():
    assert breakable("a/b/c.py:12, x") == "a/\u200bb/\u200bc.\u200bpy:\u200b12, x"
    assert breakable("kernel_size=(3, 3)") == "kernel_size=(3, 3)"
