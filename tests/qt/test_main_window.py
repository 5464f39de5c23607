from pathlib import Path

from PySide6.QtGui import QImage, QTextCursor

from fxstudio.core.errors import CaptureError
from fxstudio.core.graph.request import OpenRequest
from tests.conftest import run_fxstudio
from tests.qt.conftest import open_and_wait, select_row


def test_selection_is_shared_by_table_code_and_inspector(qtbot, docks):
    ctx = docks("table", "code", "inspector")
    doc = ctx.open("examples:resnet")
    row = ctx.panels["table"].model.row_of("add")
    select_row(
        ctx.panels["table"].view,
        ctx.panels["table"].proxy.mapFromSource(ctx.panels["table"].model.index(row, 0)).row(),
    )
    assert ctx.selection.names == ["add"]
    props = dict(ctx.panels["inspector"].properties())
    assert props["name"] == "add" and props["shape"] == "1x16x32x32"
    assert "out + identity" in props["source"]
    assert ctx.panels["inspector"].tree.topLevelItemCount() == len(props)
    line = doc.code_line_map()["add"]
    assert ctx.panels["code"].view.textCursor().blockNumber() + 1 == line
    assert ctx.panels["code"].view.extraSelections()

    # Clicking a line of code selects its node everywhere.
    fc_line = doc.code_line_map()["fc"]
    cursor = QTextCursor(ctx.panels["code"].view.document().findBlockByNumber(fc_line - 1))
    ctx.panels["code"].view.setTextCursor(cursor)
    assert ctx.selection.names == ["fc"]
    selected = ctx.panels["table"].view.selectionModel().selectedRows()
    assert [i.data() for i in (s.siblingAtColumn(1) for s in selected)] == ["fc"]


def test_filter_narrows_the_table(qtbot, docks):
    ctx = docks("table")
    ctx.open("examples:resnet")
    qtbot.keyClicks(ctx.panels["table"].filter, "downsample")
    model = ctx.panels["table"].view.model()
    assert 0 < model.rowCount() < len(ctx.document.graph.nodes)
    for r in range(model.rowCount()):
        cells = [model.index(r, c).data() for c in range(model.columnCount())]
        assert any("downsample" in c for c in cells), cells


def test_a_failed_open_keeps_the_document(qtbot, docks):
    ctx = docks("table")
    doc = ctx.open("examples:simple")
    with qtbot.waitSignal(ctx.session.loadFailed, timeout=60000) as blocker:
        ctx.session.open(OpenRequest("examples:branchy"))
    assert isinstance(blocker.args[0], CaptureError)
    assert ctx.document is doc
    assert ctx.panels["table"].view.model().rowCount() == len(doc.graph.nodes)


def test_reload_and_export_frontend(qtbot, docks):
    ctx = docks()
    ctx.open("examples:negrelu", frontend="export")
    assert ctx.document.request.frontend == "export"
    with qtbot.waitSignal(ctx.session.loaded, timeout=60000):
        ctx.session.reload()
    assert ctx.document.request.spec == "examples:negrelu"


def test_open_dialog_builds_a_request(qtbot):
    from fxstudio.qt.window.open_dialog import OpenDialog

    dialog = OpenDialog(None, OpenRequest("examples:simple", "export", ("2x16",), 4))
    qtbot.addWidget(dialog)
    assert dialog.request() == OpenRequest("examples:simple", "export", ("2x16",), 4)
    dialog.example_combo.setCurrentIndex(dialog.example_combo.findText("transformer"))
    dialog.frontend_combo.setCurrentIndex(1)
    assert dialog.request().spec == "examples:transformer"
    assert dialog.request().frontend == "fx"
    dialog.frontend_combo.setCurrentIndex(0)
    assert dialog.request().frontend == "auto"


def test_screenshot_writes_a_png_of_the_window(tmp_path):
    out = tmp_path / "shot.png"
    result = run_fxstudio("examples:resnet", "--screenshot", str(out))
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    # the first run's 1400x860, fitted to the offscreen platform's 800x800 screen
    assert not image.isNull() and image.width() >= 700 and image.height() >= 500
    # Not a blank picture: many distinct colours (text, table, highlighted code).
    colours = {
        image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)
    }
    assert len(colours) > 20


def test_screenshot_of_an_untraceable_model_exits_2(tmp_path):
    result = run_fxstudio("examples:branchy", "--screenshot", str(tmp_path / "x.png"))
    assert result.returncode == 2
    assert "branchy.py:" in result.stderr
    assert not (tmp_path / "x.png").exists()


def test_without_a_model_the_window_opens_on_the_welcome_page(tmp_path):
    out = tmp_path / "welcome.png"
    result = run_fxstudio("--screenshot", str(out), env={"HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert not image.isNull() and image.width() >= 700  # (fitted to an 800x800 screen)


def test_the_inspector_shows_a_modules_class_its_arguments_and_a_readable_source(qtbot, docks):
    ctx = docks("inspector")
    from PySide6.QtCore import Qt

    doc = ctx.open("examples:resnet")
    inspector = ctx.panels["inspector"]
    ctx.selection.select(["layer1_0_conv1"])
    tree = inspector.tree
    shown = {
        tree.topLevelItem(i).text(0): tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
    }
    assert shown["class"].text(1) == "torch.nn.Conv2d"
    conv = doc.graph_module.get_submodule("layer1.0.conv1")
    assert shown["constructor"].text(1) == conv.extra_repr()
    assert shown["constructor"].text(1).startswith("16, 16, kernel_size=(3, 3)")
    loc = doc.source_location("layer1_0_conv1")
    source = shown["source"].text(1)
    # the file as it is imported (not the whole absolute path), its line, the code
    assert source.splitlines()[0].endswith(f"{Path(loc.filename).name}:{loc.lineno}")
    assert not source.startswith("/") and "self.conv1(x)" in source
    assert loc.filename in shown["source"].toolTip(1)  # the whole path, on hovering
    assert tree.textElideMode() == Qt.TextElideMode.ElideNone  # long values wrap, whole
    ctx.selection.select(["add"])  # not a module call: no class row
    assert "class" not in dict(inspector.properties())


def test_a_long_status_message_is_elided_before_the_counts(qtbot, window):
    """At 1000 px the open's message is longer than the room left of the node count: it
    is shown elided (the open time first, so it stays), the whole in the tooltip."""
    open_and_wait(qtbot, window, "examples:resnet")
    window.resize(1000, 700)
    bar = window.statusBar()
    message = "Opened in 1.23 s: " + "a_long_model_spec_" * 12
    window.status.show(message)
    shown = window.status.shown_message()
    assert shown.startswith("Opened in 1.23 s") and shown.endswith("…")
    assert bar.fontMetrics().horizontalAdvance(shown) <= window.status.summary.x()
    bar.grab()  # paints it
    assert bar.toolTip() == message
