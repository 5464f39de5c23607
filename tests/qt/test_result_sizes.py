"""Result areas get room measured in their own rows and lines (#36 item 13): at 1400x860 the
Patterns dock's Find and Why not here? are in sight without scrolling, the rewrite list
shows its rewrites whole, the console some lines, the Kernels table some rows, and the Top
charts fit the width they are given."""

from PySide6.QtCore import Qt

from fxstudio.qt.fitting import lines_height, rows_height
from tests.qt.conftest import open_and_wait


def _in_sight(widget, area) -> bool:
    """``widget`` whole inside the scroll area's viewport."""
    top = widget.mapTo(area.viewport(), widget.rect().topLeft())
    return top.y() >= 0 and top.y() + widget.height() <= area.viewport().height()


def test_the_patterns_dock_shows_find_and_its_rewrites_at_1400x860(qtbot, window):
    window.resize(1400, 860)
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    window.layouts.use("rewrite")
    panel = window.panels["patterns"]
    area = panel.dock.widget()
    qtbot.waitUntil(lambda: panel.find_button.isVisible() and area.viewport().height() > 400)
    qtbot.waitUntil(
        lambda: _in_sight(panel.find_button, area) and _in_sight(panel.why_button, area)
    )
    assert area.verticalScrollBar().value() == 0  # (no scrolling to get there)
    rewrites = panel.rewrite_list
    shown = min(rewrites.count(), 8)
    assert rewrites.viewport().height() >= shown * rewrites.sizeHintForRow(0)  # whole rows


def test_console_and_kernels_keep_lines_and_rows(qtbot, docks):
    ctx = docks("console", "compile")
    console = ctx.panels["console"].output
    assert console.minimumHeight() >= lines_height(console, 8) > 8 * console.fontMetrics().height()
    kernels = ctx.panels["compile"].kernels.table
    assert kernels.minimumHeight() >= rows_height(kernels, 6)


def test_the_top_charts_fit_their_width(qtbot, docks):
    ctx = docks("run")
    panel = ctx.panels["run"]
    chart = panel.module_chart
    chart.set_bars(
        "Top modules", [("layer1", 0.000429, 0.312), ("layer2.0.downsample", 1e-4, 0.07)]
    )
    # two charts side by side fit a Top tab of 600 px (each wanted 320 and was cut at the right)
    assert 2 * chart.minimumSizeHint().width() < 600
    assert panel.top_page.horizontalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAlwaysOff
    numbers = chart.fontMetrics().horizontalAdvance("0.429 ms  31.2%")
    assert chart.value_width() > numbers  # the numbers right of a bar are not cut


def test_the_top_charts_stack_when_side_by_side_would_cut_them(qtbot):
    from fxstudio.qt.panels.run.bar_chart import BarChart, ChartRow

    row = ChartRow()
    qtbot.addWidget(row)
    left, right = BarChart(row), BarChart(row)
    row.add(left)
    row.add(right)
    for chart in (left, right):
        chart.set_bars("Top", [("layer1.0.downsample", 0.000429, 0.312)])
    row.resize(430, 300)  # the Top tab of the Profile layout at 1000x700
    row.show()
    qtbot.waitUntil(lambda: right.geometry().top() >= left.geometry().bottom())
    assert right.width() > 400  # one above the other, each the whole width
    row.resize(700, 300)
    qtbot.waitUntil(lambda: right.geometry().left() >= left.geometry().right())
    assert left.geometry().top() == right.geometry().top()
