"""Results where they can be read (#20 item 3): the Run, Step and Learn FX docks at the
shapes the task layouts give them -- a strip along the window's bottom (1280×320), a column
(420×700, 420×320, 380×860) -- show their results whole, and the heat's shares stay
readable with the whole graph fitted to the window."""

import pytest
from PySide6.QtCore import QEvent, QPoint, QRect
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication, QToolButton

WIDE, TALL, SHORT = (1280, 320), (420, 700), (420, 320)


def _float(qtbot, dock, size):
    """The dock floated at ``size`` (it must get that size: nothing in it forces it wider)."""
    dock.setFloating(True)
    dock.resize(*size)
    dock.show()
    qtbot.waitUntil(lambda: (dock.width(), dock.height()) == size, timeout=5000)
    qtbot.waitExposed(dock)
    for _ in range(3):  # the layouts the new shape asked for, done (nested ones in turn)
        QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
        QApplication.processEvents()


def _blocks(doc):
    block = doc.begin()
    while block.isValid():
        yield block
        block = block.next()


def _rect_in(widget, ancestor):
    return QRect(widget.mapTo(ancestor, QPoint(0, 0)), widget.size())


def _seen(widget, viewport):
    """``widget`` lies wholly inside ``viewport`` (no scrolling needed to read it)."""
    return widget.isVisible() and viewport.rect().contains(_rect_in(widget, viewport))


def _rows_seen(table):
    """Rows wholly visible in the table's viewport."""
    height = table.viewport().height()
    rows = 0
    for r in range(table.rowCount()):
        rect = table.visualRect(table.model().index(r, 0))
        if rect.top() >= 0 and rect.bottom() < height:
            rows += 1
    return rows


def _columns_seen(table, count):
    """The first ``count`` columns are wholly visible without scrolling sideways."""
    last = table.horizontalHeader().sectionViewportPosition(count - 1)
    return last + table.columnWidth(count - 1) <= table.viewport().width()


def _summary_whole(view):
    """The summary wraps (no sideways scrolling) and needs no scrolling down either."""
    return view.horizontalScrollBar().maximum() == 0 and view.verticalScrollBar().maximum() == 0


def _run(qtbot, panel, per_node):
    panel.min_time.setValue(0.05)
    panel.threads.setValue(1)
    panel.per_node.setChecked(per_node)
    with qtbot.waitSignal(panel.finished, timeout=120000):
        panel.run_button.click()


def test_the_run_dock_reads_as_a_strip_and_as_a_column(qtbot, docks):
    ctx = docks("run")
    ctx.open("examples:resnet")
    panel = ctx.panels["run"]
    dock = panel.dock
    assert not panel.options_box.isVisible() or not dock.isVisible()  # folded at first
    assert "at least 1 s" in panel.options_line.text() and "per node" in panel.options_line.text()
    _run(qtbot, panel, per_node=False)  # a short summary: it shows whole
    for size in (WIDE, TALL):
        _float(qtbot, dock, size)
        qtbot.waitUntil(lambda: _summary_whole(panel.result))
        assert "median" in panel.result.toPlainText()
    # the options unfold in a column and fold back to their line
    panel.options_button.click()
    assert panel.options_box.isVisible() and not panel.options_line.isVisible()
    assert _seen(panel.device, dock)
    panel.options_button.click()
    assert not panel.options_box.isVisible() and panel.options_line.isVisible()

    _run(qtbot, panel, per_node=True)
    # a strip: controls, summary and tables side by side; >= 10 rows of nodes
    _float(qtbot, dock, WIDE)
    controls, summary = _rect_in(panel.controls, dock), _rect_in(panel.result, dock)
    tables = _rect_in(panel.tabs, dock)
    assert controls.right() < summary.left() and summary.right() < tables.left()
    assert summary.width() >= 300 and tables.width() >= 560
    assert panel.result.horizontalScrollBar().maximum() == 0  # wrapped
    assert panel.tabs.currentWidget() is panel.node_table
    assert _rows_seen(panel.node_table) >= 10
    assert _columns_seen(panel.node_table, 6)  # name, time, share, ±IQR, FLOP/s, bound
    panel.tabs.setCurrentWidget(panel.top_page)
    nodes, modules = _rect_in(panel.node_chart, dock), _rect_in(panel.module_chart, dock)
    assert nodes.right() < modules.left() and nodes.top() == modules.top()  # side by side
    panel.tabs.setCurrentWidget(panel.node_table)
    # a column: stacked, the summary wrapped, >= 10 rows with name, time and share
    _float(qtbot, dock, TALL)
    controls, summary = _rect_in(panel.controls, dock), _rect_in(panel.result, dock)
    tables = _rect_in(panel.tabs, dock)
    assert controls.bottom() < summary.top() and summary.bottom() < tables.top()
    assert _seen(panel.run_button, dock) and _seen(panel.export_button, dock)
    assert panel.result.horizontalScrollBar().maximum() == 0
    assert _rows_seen(panel.node_table) >= 10
    assert _columns_seen(panel.node_table, 3)
    # a short column: the summary is the tabs' first page and the tables keep the height
    _float(qtbot, dock, SHORT)
    assert panel.tabs.tabText(0) == "Summary"
    assert panel.tabs.indexOf(panel.result) == 0
    panel.tabs.setCurrentWidget(panel.node_table)
    assert _rows_seen(panel.node_table) >= 6
    _float(qtbot, dock, TALL)  # back as a column: the summary above the tabs again
    assert panel.tabs.indexOf(panel.result) == -1 and panel.result.isVisible()


def test_the_step_card_shows_the_eager_verdict_without_scrolling(qtbot, docks):
    ctx = docks("step")
    ctx.open("examples:resnet")
    panel = ctx.panels["step"]
    ctx.selection.select(["layer1_0_conv2"])
    with qtbot.waitSignal(panel.moved, timeout=60000):
        panel.run_to_selected()
    assert panel.eager.text().startswith("same as module layer1.0.conv2")
    viewport = panel.card_scroll.viewport()
    _float(qtbot, panel.dock, TALL)
    assert panel.card_scroll.verticalScrollBar().value() == 0
    for label in (panel.heading, panel.eager, panel.code_line, panel.source_line):
        assert _seen(label, viewport), label.objectName()
    buttons = [b for b in panel.controls.findChildren(QToolButton) if b.defaultAction()]
    assert len(buttons) == 8 and all(_seen(b, panel.dock) for b in buttons)  # wrapped
    # nothing to say, no room taken: the card starts right under "Node k of n run"
    assert panel.status_label.text() == "" and not panel.status_label.isVisible()
    gap = _rect_in(panel.card_scroll, panel.dock).top() - _rect_in(panel.where, panel.dock).bottom()
    assert 0 <= gap < 12, gap
    panel.status_label.setText("Running to layer1_0_conv2…")
    assert panel.status_label.isVisible()
    panel.status_label.setText("")
    # a strip: verdict, numbers and picture side by side, all of it in sight
    _float(qtbot, panel.dock, WIDE)
    for widget in (panel.eager, panel.stats["std"], panel.histogram, panel.picture):
        assert _seen(widget, viewport), widget.objectName()
    assert _rect_in(panel.eager, viewport).right() < _rect_in(panel.histogram, viewport).left()
    assert _rect_in(panel.histogram, viewport).right() < _rect_in(panel.picture, viewport).left()


def test_the_lesson_text_takes_the_height_and_wraps(qtbot, docks):
    ctx = docks("lesson")
    lesson = ctx.panels["lesson"]
    with qtbot.waitSignal(ctx.layoutShown, timeout=60000):
        lesson.start()
    _float(qtbot, lesson.dock, (380, 860))
    text = lesson.text
    assert "class MyModule" in text.toPlainText()  # the step's code block...
    assert text.horizontalScrollBar().maximum() == 0  # ...wraps at the dock's width
    assert text.verticalScrollBar().maximum() == 0  # and all of it is in sight
    # a wrapped line of code goes on past its own indent, not at the left edge
    doc = text.document()
    wrapped = [b for b in _blocks(doc) if "self.param =" in b.text()]
    assert wrapped and wrapped[0].layout().lineCount() == 2, "the dock no longer wraps it"
    block = wrapped[0]
    indent = len(block.text()) - len(block.text().lstrip())
    first, second = block.layout().lineAt(0), block.layout().lineAt(1)
    space = QFontMetricsF(block.charFormat().font()).horizontalAdvance(" ")
    fmt = block.blockFormat()
    start = fmt.leftMargin() + fmt.textIndent()  # where its first line starts
    assert second.x() + fmt.leftMargin() - start > (indent + 1) * space
    assert first.x() + fmt.leftMargin() + fmt.textIndent() >= 0
    # no empty gap: what follows the text starts right under it
    gap = _rect_in(lesson.task, lesson.dock).top() - _rect_in(text, lesson.dock).bottom()
    assert gap < 24, gap
    assert _seen(lesson.next_button, lesson.dock) and _seen(lesson.verdict, lesson.dock)
    # a strip: the text on the left, the learner's part beside it
    _float(qtbot, lesson.dock, WIDE)
    assert _rect_in(text, lesson.dock).right() < _rect_in(lesson.task, lesson.dock).left()
    assert _seen(lesson.next_button, lesson.dock) and _seen(lesson.verdict, lesson.dock)


@pytest.mark.parametrize("spec", ["examples:resnet"])
def test_heat_shares_are_readable_with_the_graph_fitted(qtbot, docks, spec):
    ctx = docks("run")
    ctx.open(spec)
    panel = ctx.panels["run"]
    _run(qtbot, panel, per_node=True)
    view = ctx.canvas
    view.fit()
    assert view.transform().m11() < 0.5  # the names in the boxes are too small to read here
    shown = panel.marks.tags_shown(view)
    hottest = max(panel.marks.nodes.items(), key=lambda kv: kv[1])[0]
    assert shown and shown[0][0].owner.name == hottest  # the hottest is always written
    assert shown[0][0].text == f"{panel.marks.nodes[hottest]:.1%}"
    for i, (_, box) in enumerate(shown):  # at a readable size, in sight, none over another
        assert box.height() >= 12
        assert view.viewport().rect().contains(box.toAlignedRect())
        assert not any(box.intersects(other) for _, other in shown[i + 1 :])
    # the tint's tooltip tells the share too
    tint = panel.marks.items[0]
    assert "of the profiled run" in tint.toolTip() and tint.parentItem().name in tint.toolTip()
    panel.heat.setChecked(False)
    assert panel.marks.tags_shown(view) == []
