import pytest
from PySide6.QtCore import QPointF, QRectF

from fxstudio.qt.canvas.items import EdgeItem, GroupItem, NodeItem
from tests.qt.conftest import open_and_wait, select_row


def open_and_draw(qtbot, window, spec, **kw):
    return open_and_wait(qtbot, window, spec, signal="layoutShown", **kw)


def test_canvas_draws_every_node_and_edge(qtbot, docks):
    ctx = docks()
    open_and_draw(qtbot, ctx, "examples:resnet")
    scene = ctx.canvas.scene()
    assert ctx.canvas.objectName() == "canvas"
    doc = ctx.document
    assert set(scene.nodes) == set(doc.node_names())
    assert all(isinstance(i, NodeItem) for i in scene.nodes.values())
    uses = doc.edges()  # one edge per use
    assert len([i for i in scene.items() if isinstance(i, EdgeItem)]) == len(uses)
    edge = next(e for e in scene.edges if e.target_name == "add" and e.source_name == "stem_2")
    assert "args[1]" in edge.toolTip()


def test_selection_follows_between_canvas_and_table(qtbot, docks):
    ctx = docks("table")
    open_and_draw(qtbot, ctx, "examples:resnet")
    scene = ctx.canvas.scene()
    scene.nodes["layer2_0_conv1"].setSelected(True)
    assert ctx.selection.names == ["layer2_0_conv1"]
    rows = ctx.panels["table"].view.selectionModel().selectedRows()
    assert [r.siblingAtColumn(1).data() for r in rows] == ["layer2_0_conv1"]
    table = ctx.panels["table"]
    select_row(
        table.view, table.proxy.mapFromSource(table.model.index(table.model.row_of("fc"), 0)).row()
    )
    assert ctx.selection.names == ["fc"]
    # (the canvas follows the shared selection; under a loaded machine, give it its turn)
    qtbot.waitUntil(
        lambda: scene.nodes["fc"].isSelected() and not scene.nodes["layer2_0_conv1"].isSelected()
    )


def test_double_click_collapses_and_expands_a_group(qtbot, docks):
    ctx = docks()
    open_and_draw(qtbot, ctx, "examples:resnet")
    scene = ctx.canvas.scene()
    with qtbot.waitSignal(ctx.layoutShown, timeout=60000):
        scene.groupToggled.emit("layer2")
    scene = ctx.canvas.scene()
    assert ctx.document.collapsed == {"layer2"}
    assert isinstance(scene.groups["layer2"], GroupItem) and scene.groups["layer2"].collapsed
    assert "layer2_0_conv1" not in scene.nodes
    # Selecting a hidden node selects the group that holds it.
    ctx.selection.select(["layer2_0_conv1"])
    assert scene.groups["layer2"].isSelected()
    with qtbot.waitSignal(ctx.layoutShown, timeout=60000):
        scene.groupToggled.emit("layer2")
    assert "layer2_0_conv1" in ctx.canvas.scene().nodes


@pytest.mark.parametrize("size", [(1000, 700), (1600, 1000)])
def test_the_view_shows_a_group_expanded_or_collapsed(qtbot, docks, size):
    """Toggled at 150 % with the view elsewhere, a group is shown once laid out again: an
    expanded one whole when that stays readable (else its top, readable), a collapsed box
    scrolled into view (the view stayed where it was: empty frames, the group off screen)."""
    from tests.qt.test_run_module import LLAMA_4

    ctx = docks()
    ctx.window.resize(*size)
    open_and_draw(qtbot, ctx, LLAMA_4)
    view = ctx.canvas
    assert set(ctx.document.collapsed) >= {"layers.0"}  # folded: ×4

    def shown() -> QRectF:
        return view.mapToScene(view.viewport().rect()).boundingRect()

    for path in ("layers.0", "layers.0", "norm"):  # expand the fold, fold it, expand another
        view.resetTransform()
        view.scale(1.5, 1.5)
        view.centerOn(view.scene().content_rect().bottomRight())  # far from it
        with qtbot.waitSignal(ctx.layoutShown, timeout=60000):
            view.scene().groupToggled.emit(path)
        rect = view.scene().groups[path].sceneBoundingRect()
        port = view.viewport().rect()
        readable = min(port.width() / rect.width(), port.height() / rect.height()) > 0.6
        if view.scene().groups[path].collapsed or readable:
            assert shown().contains(rect), (path, shown(), rect)
        else:  # too big to read whole: its top, readable
            assert view.transform().m11() == pytest.approx(0.85)
            assert shown().contains(QPointF(rect.center().x(), rect.top() + 5)), (path, rect)


def test_big_graphs_open_collapsed(qtbot, window, monkeypatch):
    import fxstudio.core.layout.groups as drawn

    monkeypatch.setattr(drawn, "COLLAPSE_ABOVE", 20)
    lay = open_and_draw(qtbot, window, "examples:resnet")
    assert lay.collapsed == {"stem", "layer1", "layer2", "layer3"}
    assert not window.session.modified  # the first picture is not a change
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.findChild(type(window.canvas_controller.view), "canvas")  # same view
        window.canvas_controller.expand_all()
    assert not window.document.collapsed and len(window.canvas.scene().nodes) == 54


def test_fallback_layout_is_announced(qtbot, window, monkeypatch):
    from pygraphviz import graphviz

    def broken(*args, **kwargs):
        raise OSError("dot not found")

    monkeypatch.setattr(graphviz, "gvContextWithBuiltins", broken)  # as pygraphviz calls it
    lay = open_and_draw(qtbot, window, "examples:simple")
    assert lay.engine == "fallback"
    assert "simple layered layout" in window.statusBar().currentMessage()
    assert set(window.canvas.scene().nodes) == set(window.document.node_names())


def test_zoom_and_fit(qtbot, docks):
    ctx = docks()
    open_and_draw(qtbot, ctx, "examples:transformer")
    view = ctx.canvas
    before = view.transform().m11()
    view.zoom_in()
    assert view.transform().m11() == pytest.approx(before * 1.2)
    view.actual_size()
    assert view.transform().m11() == 1.0
    view.fit()
    rect = view.mapFromScene(view.scene().itemsBoundingRect()).boundingRect()
    assert view.viewport().rect().adjusted(-2, -2, 2, 2).contains(rect)


def test_drag_is_one_undo_step_and_undo_restores_positions(qtbot, docks):
    ctx = docks()
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    open_and_draw(qtbot, ctx, "examples:resnet")
    view, scene = ctx.canvas, ctx.canvas.scene()
    view.actual_size()
    a, b = scene.nodes["layer1_0_conv1"], scene.nodes["layer1_0_bn1"]
    start = {n: (i.pos().x(), i.pos().y()) for n, i in (("layer1_0_conv1", a), ("layer1_0_bn1", b))}
    ctx.selection.select(["layer1_0_conv1", "layer1_0_bn1"])
    view.centerOn(a)
    press = view.mapFromScene(a.sceneBoundingRect().center())
    QTest.mousePress(
        view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, press
    )
    for step in range(1, 6):
        QTest.mouseMove(view.viewport(), press + QPoint(12 * step, 8 * step))
    QTest.mouseRelease(
        view.viewport(),
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
        press + QPoint(60, 40),
    )
    doc = ctx.document
    assert ctx.session.undo_stack.count() == 1  # two nodes dragged: one step
    assert ctx.session.undo_stack.undoText() == "Move 2 items"
    moved = dict(doc.positions)
    assert set(moved) == set(start)
    for name, (x, y) in start.items():
        assert moved[name][0] == pytest.approx(x + 60) and moved[name][1] == pytest.approx(y + 40)
    assert ctx.session.modified
    edge = next(e for e in scene.edges if e.target_name == "layer1_0_conv1")
    assert edge.path().pointAtPercent(1).x() == pytest.approx(a.top().x())  # edges follow

    ctx.session.undo_stack.undo()
    assert doc.positions == {}
    assert {
        n: (i.pos().x(), i.pos().y()) for n, i in (("layer1_0_conv1", a), ("layer1_0_bn1", b))
    } == start
    ctx.session.undo_stack.redo()
    assert doc.positions == moved
    assert (a.pos().x(), a.pos().y()) == moved["layer1_0_conv1"]


def test_export_picture_as_png_and_svg(qtbot, window, tmp_path):
    import xml.etree.ElementTree as ET

    from PySide6.QtGui import QImage

    open_and_draw(qtbot, window, "examples:negrelu")
    assert window.saving.export_image(tmp_path / "g.png")
    image = QImage(str(tmp_path / "g.png"))
    assert not image.isNull() and image.width() > 100 and image.height() > 100
    assert window.saving.export_image(tmp_path / "g.svg")
    svg = (tmp_path / "g.svg").read_text()
    ET.fromstring(svg)  # well-formed
    assert ">neg<" in svg and ">mul<" in svg
    assert window.saving.export_image(tmp_path / "part.png", visible_only=True)
    assert not window.saving.export_image(tmp_path / "g.gif")  # refused, nothing written
    assert not (tmp_path / "g.gif").exists()


def test_find_moves_to_the_first_match_as_you_type_and_steps_through(qtbot, window):
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QAction

    open_and_draw(qtbot, window, "examples:resnet")
    window.canvas.actual_size()  # the matches lie beyond the first view
    window.canvas.centerOn(window.canvas.scene().nodes["x"])
    window.findChild(QAction, "actionFind").trigger()
    search, scene, view = window.search, window.canvas.scene(), window.canvas
    assert search.bar.isVisible()
    qtbot.waitUntil(lambda: search.edit.hasFocus())
    qtbot.keyClicks(search.edit, "downsample")
    matches = window.document.find("downsample")
    assert search.matches == matches and len(matches) == 4
    # no Enter: typing went to the first match, selected and in view
    assert window.selection.names == [matches[0]] and search.count.text() == "1 of 4"
    first = scene.nodes[matches[0]]
    assert first.isSelected()
    assert view.viewport().rect().contains(view.mapFromScene(first.sceneBoundingRect().center()))

    def on(i):
        return window.selection.names == [matches[i]] and search.count.text() == f"{i + 1} of 4"

    qtbot.keyClick(search.edit, Qt.Key.Key_Return)
    assert on(1)
    qtbot.keyClick(search.edit, Qt.Key.Key_F3)
    assert on(2)
    qtbot.keyClick(search.edit, Qt.Key.Key_F3, Qt.KeyboardModifier.ShiftModifier)
    assert on(1)
    qtbot.keyClick(search.edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    assert on(0)
    search.previous()
    assert on(3)  # wraps around
    window.selection.select(["fc"])  # chosen elsewhere: the count no longer says "4 of 4"
    assert search.count.text() == "4 matches"
    search.next()
    assert on(0)
    search.edit.setText("no-such-node")
    assert search.count.text() == "No match" and window.selection.names == [matches[0]]


def test_shared_values_are_drawn_as_stubs_that_select_the_value(qtbot, docks):
    ctx = docks()
    open_and_draw(qtbot, ctx, "tests/models/shared_mask.py:Model")
    scene = ctx.canvas.scene()
    from_mask = [e for e in scene.edges if e.source_name == "float_1"]
    assert len(from_mask) == 6  # one use in each layer
    stubs = [e for e in from_mask if e.stub]
    assert len(stubs) == 5 and all(e.stub == "float_1" for e in stubs)
    for e in stubs:  # short, ending at the user
        assert e.path().length() == pytest.approx(e.STUB_LENGTH)
        assert e.path().pointAtPercent(1).y() == pytest.approx(e.target.top().y())
    scene.jumpRequested.emit(stubs[-1].stub)
    assert ctx.selection.names == ["float_1"] and scene.nodes["float_1"].isSelected()


def drag(view, item, dx, dy, at=None):
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    view.centerOn(item)
    point = at if at is not None else item.sceneBoundingRect().center()
    press = view.mapFromScene(point)
    vp = view.viewport()
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, press)
    for step in range(1, 5):
        QTest.mouseMove(vp, press + QPoint(dx * step // 4, dy * step // 4))
    QTest.mouseRelease(
        vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, press + QPoint(dx, dy)
    )


def test_dragging_a_group_title_moves_all_it_holds_as_one_step(qtbot, docks):
    ctx = docks()
    from PySide6.QtCore import QPointF

    open_and_draw(qtbot, ctx, "examples:resnet")
    view, scene = ctx.canvas, ctx.canvas.scene()
    view.actual_size()
    frame = scene.groups["layer1"]
    inside = scene.members("layer1")
    assert {i.name for i in inside} == {
        n for n in ctx.document.module_tree().children["layer1"].all_nodes()
    }
    before = {i.key: (i.pos().x(), i.pos().y()) for i in inside}
    frame_before = frame.sceneBoundingRect()
    title = frame.mapToScene(QPointF(30, 8))  # the left of the title: no edge runs there
    drag(view, frame, 80, 40, at=title)
    assert ctx.session.undo_stack.count() == 1
    after = ctx.document.positions
    assert set(after) == set(before)
    for key, (x, y) in before.items():
        assert after[key] == (pytest.approx(x + 80), pytest.approx(y + 40))
    moved = frame.sceneBoundingRect()
    assert moved.x() == pytest.approx(frame_before.x() + 80, abs=0.1)  # the frame follows
    assert moved.width() == pytest.approx(frame_before.width(), abs=0.1)
    ctx.session.undo_stack.undo()
    assert ctx.document.positions == {}
    assert {i.key: (i.pos().x(), i.pos().y()) for i in inside} == before
    assert frame.sceneBoundingRect().x() == pytest.approx(frame_before.x(), abs=0.1)


def test_a_frame_grows_around_a_node_dragged_out_and_pressing_inside_pans(qtbot, docks):
    ctx = docks()
    open_and_draw(qtbot, ctx, "examples:resnet")
    view, scene = ctx.canvas, ctx.canvas.scene()
    view.actual_size()
    frame, node = scene.groups["layer1.0"], scene.nodes["layer1_0_conv1"]
    outer = scene.groups["layer1"]
    drag(view, node, 300, 0)
    assert frame.sceneBoundingRect().contains(node.sceneBoundingRect())
    assert outer.sceneBoundingRect().contains(frame.sceneBoundingRect())
    # Pressing inside a frame, away from its title and nodes, does not move anything.
    count = ctx.session.undo_stack.count()
    rect = frame.sceneBoundingRect()
    empty = rect.bottomRight() - frame.rect.bottomRight() * 0 - type(rect.center())(6, 6)
    assert all(not hasattr(i, "key") or i is frame or i is outer for i in scene.items(empty))
    drag(view, frame, 50, 50, at=empty)
    assert ctx.session.undo_stack.count() == count


def test_a_collapsed_group_moves_and_keeps_its_place(qtbot, docks):
    ctx = docks()
    open_and_draw(qtbot, ctx, "examples:resnet")
    with qtbot.waitSignal(ctx.layoutShown, timeout=60000):
        ctx.canvas.scene().groupToggled.emit("layer2")
    view, scene = ctx.canvas, ctx.canvas.scene()
    view.actual_size()
    box = scene.groups["layer2"]
    x, y = box.pos().x(), box.pos().y()
    drag(view, box, 120, 0)
    assert ctx.document.positions == {"group:layer2": (pytest.approx(x + 120), pytest.approx(y))}
    assert ctx.session.undo_stack.undoText() == "Move layer2"
    with qtbot.waitSignal(ctx.layoutShown, timeout=60000):
        ctx.canvas.scene().groupToggled.emit("layer3")  # a new layout, a new scene
    assert ctx.canvas.scene().groups["layer2"].pos().x() == pytest.approx(x + 120)


def test_overview_map_shows_the_visible_area_and_moves_the_view(qtbot, window):
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QAction

    from fxstudio.qt.canvas.minimap import Minimap

    open_and_draw(qtbot, window, "examples:resnet")
    view = window.canvas
    minimap = view.findChild(Minimap, "minimap")
    qtbot.waitUntil(minimap.isVisible)  # drawn just after the picture, in a turn of its own
    assert minimap.image is not None
    view.actual_size()
    view.centerOn(view.scene().nodes["x"])
    top = minimap.visible_area().center().y()
    # A click near the bottom of the map brings the bottom of the graph into view.
    qtbot.mouseClick(
        minimap, Qt.MouseButton.LeftButton, pos=QPoint(minimap.width() // 2, minimap.height() - 3)
    )
    assert minimap.visible_area().center().y() > top
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert shown.center().y() == pytest.approx(
        minimap.scene_point(QPoint(0, minimap.height() - 3).toPointF()).y(), abs=shown.height()
    )
    window.findChild(QAction, "actionMinimap").trigger()
    assert not minimap.isVisible()
    window.findChild(QAction, "actionMinimap").trigger()
    assert minimap.isVisible()


def test_far_out_the_canvas_draws_the_boxes_without_the_items(qtbot, docks):
    ctx = docks()
    from PySide6.QtGui import QColor

    from fxstudio.qt.theme import colors

    open_and_draw(qtbot, ctx, "examples:resnet")
    view, scene = ctx.canvas, ctx.canvas.scene()
    view.resetTransform()
    view.scale(0.15, 0.15)
    node = scene.nodes["layer2_0_conv1"]
    view.centerOn(node)
    first = scene.overview()
    image = view.viewport().grab().toImage()
    centre = view.mapFromScene(node.sceneBoundingRect().center())
    assert image.pixelColor(centre) == QColor(colors().fills["call_module"])
    # The picture follows moves and the selection.
    ctx.selection.select(["layer2_0_conv1"])
    image = view.viewport().grab().toImage()
    assert image.pixelColor(centre) == QColor("#f59e0b")
    assert scene.overview() is first  # kept up to date, not made again
    ctx.document.set_positions({"layer2_0_conv1": (node.x() + 400, node.y())})
    image = view.viewport().grab().toImage()
    assert image.pixelColor(centre) != QColor("#f59e0b")


def test_layout_reports_progress_and_can_be_stopped(qtbot, window):
    from PySide6.QtWidgets import QApplication

    from fxstudio.qt.workers import Task

    open_and_draw(qtbot, window, "examples:resnet")
    controller = window.canvas_controller
    scene = window.canvas.scene()
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        with qtbot.waitSignal(controller.layoutProgress, timeout=60000) as progress:
            controller.relayout(from_scratch=True)
    done, total = progress.args
    assert 0 < done <= total
    scene = window.canvas.scene()
    shown = []
    window.layoutShown.connect(shown.append)
    with qtbot.waitSignal(controller.layoutStopped):
        controller.relayout(from_scratch=True)
        window.status.layout_stop.click()
    # The stopped worker runs to its end; what it made must be dropped.
    qtbot.waitUntil(lambda: not any(t.running() for t in controller.findChildren(Task)))
    QApplication.processEvents()
    assert window.canvas.scene() is scene and not shown


def test_a_value_used_twice_by_one_node_gets_two_edges(qtbot, docks):
    ctx = docks()
    from fxstudio.core.edits import Ref, set_inputs

    open_and_draw(qtbot, ctx, "examples:negrelu")
    with qtbot.waitSignal(ctx.layoutShown, timeout=60000):
        ctx.edits.apply(lambda d: set_inputs(d, "mul", [Ref("add"), Ref("add")]))
    edges = [e for e in ctx.canvas.scene().edges if e.target_name == "mul"]
    assert sorted(e.label for e in edges) == ["args[0]", "args[1]"]
    assert len({e.path().pointAtPercent(1).x() for e in edges}) == 2  # side by side
    with qtbot.waitSignal(ctx.layoutShown, timeout=60000):
        ctx.canvas_controller.relayout(from_scratch=True)
    edges = [e for e in ctx.canvas.scene().edges if e.target_name == "mul"]
    assert len(edges) == 2 and len({e.path().pointAtPercent(1).x() for e in edges}) == 2


def test_shift_drag_on_the_background_selects_the_nodes_the_box_touches(qtbot, docks):
    ctx = docks()
    from PySide6.QtCore import QPoint, QRectF, Qt
    from PySide6.QtTest import QTest

    open_and_draw(qtbot, ctx, "examples:negrelu")
    view, scene = ctx.canvas, ctx.canvas.scene()
    view.actual_size()
    chosen = [scene.nodes["neg"], scene.nodes["relu"]]
    box = chosen[0].sceneBoundingRect().united(chosen[1].sceneBoundingRect())
    view.centerOn(box.center())
    start, end = box.topLeft() - type(box.topLeft())(8, 8), box.bottomRight()
    assert view.itemAt(view.mapFromScene(start)) is None  # the press lands on the background
    band = QRectF(start, end)
    expected = {n for n, item in scene.nodes.items() if item.sceneBoundingRect().intersects(band)}
    assert {"neg", "relu"} <= expected and expected != set(scene.nodes)
    vp, shift = view.viewport(), Qt.KeyboardModifier.ShiftModifier
    a, b = view.mapFromScene(start), view.mapFromScene(end)
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, shift, a)
    for step in range(1, 5):
        QTest.mouseMove(vp, a + QPoint((b.x() - a.x()) * step // 4, (b.y() - a.y()) * step // 4))
    QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, shift, b)
    assert set(ctx.selection.names) == expected
    # a plain drag on the background pans and leaves the selection as it was (Qt takes a
    # hand drag of six moves or fewer for a click) ...
    press = view.mapFromScene(start)
    QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, press)
    for step in range(1, 11):
        QTest.mouseMove(vp, press + QPoint(6 * step, 4 * step))
    QTest.mouseRelease(
        vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, press + QPoint(60, 40)
    )
    assert set(ctx.selection.names) == expected
    assert view.dragMode() == view.DragMode.ScrollHandDrag
    # ... and a plain click there clears it
    point = view.mapFromScene(start)
    QTest.mouseClick(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    assert ctx.selection.names == []


def test_the_status_bar_shows_the_zoom_and_a_click_sets_it_to_100(qtbot, window):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QToolButton

    zoom = window.statusBar().findChild(QToolButton, "zoomButton")
    assert not zoom.isVisible()  # the welcome page has no zoom
    open_and_draw(qtbot, window, "examples:resnet")
    view = window.canvas
    assert zoom.isVisible()

    def percent():
        return f"{round(view.transform().m11() * 100)} %"

    assert zoom.text() == percent() and zoom.text() != "100 %"  # the first view is fitted
    window.action("actionZoomIn").trigger()
    assert zoom.text() == percent()
    before = view.transform().m11()
    view.zoom_out()
    view.zoom_out()
    assert view.transform().m11() < before and zoom.text() == percent()
    window.action("actionFit").trigger()
    assert zoom.text() == percent()
    qtbot.mouseClick(zoom, Qt.MouseButton.LeftButton)
    assert view.transform().m11() == 1.0 and zoom.text() == "100 %"
    window.close_document()
    assert not zoom.isVisible()


def test_node_boxes_fit_their_labels_and_too_long_ones_are_elided(qtbot, docks):
    """Labels such as stages_0_downsample were cut at both edges: the boxes are now as wide
    as their text in the canvas's font, up to a limit; past it the text is elided with "…"
    and the tooltip has it whole."""
    ctx = docks()
    from PySide6.QtGui import QFont, QFontMetricsF

    from fxstudio.core.layout.labels import MAX_NODE_WIDTH, TEXT_MARGIN
    from fxstudio.qt.canvas.items import DETAIL_FONT, NAME_FONT, elided

    def font(size, bold):  # the canvas's fonts, made again here to measure what is drawn
        made = QFont()
        made.setPointSizeF(size)
        made.setBold(bold)
        return made

    open_and_draw(qtbot, ctx, "tests/models/long_names.py:Model")
    nodes = ctx.canvas.scene().nodes
    fonts = (NAME_FONT, DETAIL_FONT, DETAIL_FONT)
    for name, item in nodes.items():
        room = item.rect.width() - 2 * TEXT_MARGIN
        for line, shown, f in zip(item.lines, item.shown_lines(), fonts, strict=True):
            assert QFontMetricsF(font(*f)).horizontalAdvance(shown) <= room, (name, shown)
            if shown != line:  # elided only where the box is as wide as it gets
                assert item.rect.width() == MAX_NODE_WIDTH and "…" in shown
                assert line in item.toolTip()
        assert item.rect.width() <= MAX_NODE_WIDTH
    assert nodes["stages_0_downsample"].shown_lines()[:2] == [
        "stages_0_downsample",
        "stages.0.downsample",
    ]
    long = nodes["stages_1_pointwise_projection_after_layer_normalisation_and_activation"]
    shown = long.shown_lines()[0]
    assert shown.startswith("stages_1_") and shown.endswith("_activation") and "…" in shown
    assert elided("stages_0_downsample", NAME_FONT, 40).count("…") == 1


def test_a_picture_that_cannot_be_drawn_is_said_and_the_old_one_stays(qtbot, docks, monkeypatch):
    """A failure while the items are made (an fxstudio bug) fails the layout -- the ctx
    says so -- instead of leaving the canvas waiting for a picture that never comes."""
    ctx = docks()
    from fxstudio.qt.canvas import scene as scene_module

    open_and_draw(qtbot, ctx, "examples:resnet")
    old = ctx.canvas.scene()

    def broken(*_args, **_kwargs):
        raise RuntimeError("no items today")

    monkeypatch.setattr(scene_module, "NodeItem", broken)
    with qtbot.waitSignal(ctx.canvas_controller.layoutFailed, timeout=60000) as failed:
        ctx.canvas_controller.relayout(from_scratch=True)
    assert "no items today" in str(failed.args[0])
    assert ctx.canvas.scene() is old and set(old.nodes) == set(ctx.document.node_names())
    assert not ctx.canvas_controller.busy()


def _dark_pixels(item, scale):
    """Pixels of text (dark on the node's light fill) when ``item`` is drawn at ``scale``."""
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QColor, QImage, QPainter
    from PySide6.QtWidgets import QGraphicsScene

    scene = QGraphicsScene()
    scene.addItem(item)
    rect = item.sceneBoundingRect()
    image = QImage(
        int(rect.width() * scale) + 2, int(rect.height() * scale) + 2, QImage.Format_RGB32
    )
    image.fill(QColor("white"))
    painter = QPainter(image)
    scene.render(painter, QRectF(0, 0, rect.width() * scale, rect.height() * scale), rect)
    painter.end()
    inner = [
        QColor(image.pixel(x, y)).lightness()
        for x in range(3, image.width() - 3)
        for y in range(3, image.height() - 3)
    ]
    return sum(v < 110 for v in inner)


def test_at_44_percent_a_node_still_shows_its_name_legibly(qapp):
    """Level of detail: at 44 % a node is no blank box -- its name is drawn, in a font big
    enough to read; a collapsed module's box likewise; far out (20 %) no text at all."""
    from fxstudio.core.layout.placing import Box

    node = NodeItem(
        "layer1_0_conv1", "call_module", "layer1.0.conv1", "1x16x32x32", Box(0, 0, 120, 44)
    )
    assert _dark_pixels(node, 0.44) > 20
    assert _dark_pixels(NodeItem("c", "call_module", "c", "", Box(0, 0, 120, 44)), 0.2) == 0
    group = GroupItem("layer1", "layer1 : Sequential", Box(0, 0, 200, 40), True, 12)
    assert _dark_pixels(group, 0.44) > 20
