"""Task layouts give the graph the room: each arranges the docks for its job, is remembered
as the user left it, and the overview map keeps out of the way."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDockWidget

from fxstudio.qt.window.layouts import BOTTOM, LAYOUTS
from fxstudio.qt.window.main_window import MainWindow
from tests.qt.conftest import open_and_wait


def _window(qtbot, tmp_path, width, height):
    w = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(w)
    w.resize(width, height)
    w.show()
    QApplication.processEvents()
    return w


def shown_docks(window):
    """The docks a user sees: on screen and in front of their tab group."""
    return {
        d.objectName().removesuffix("Dock")
        for d in window.findChildren(QDockWidget)
        if d.isVisible() and not d.visibleRegion().isEmpty()
    }


def canvas_share(window):
    canvas = window.centralWidget()
    return canvas.width() * canvas.height() / (window.width() * window.height())


def test_the_edit_layout_gives_the_canvas_most_of_the_window(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, 1280, 800)
    assert w.layouts.current == "edit"
    assert w.actions and w.layouts.actions["edit"].isChecked()
    assert canvas_share(w) >= 0.55
    assert shown_docks(w) == {"inspector", "code"}
    # the table and the console are a click away, as tabs behind the code
    assert {"table", "console"} <= {
        d.objectName().removesuffix("Dock") for d in w.tabifiedDockWidgets(w.panels["code"].dock)
    }


def test_at_1000_by_700_the_canvas_is_still_the_biggest_thing(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, 1000, 700)
    canvas = w.centralWidget()
    assert canvas_share(w) >= 0.5
    assert canvas.width() >= 600
    for dock in w.findChildren(QDockWidget):
        if dock.isVisible():
            assert dock.width() * dock.height() < canvas.width() * canvas.height()


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_each_layout_shows_the_panels_of_its_job(qtbot, tmp_path, layout):
    w = _window(qtbot, tmp_path, 1280, 800)
    w.layouts.use(layout.id)
    QApplication.processEvents()
    fronts = {g.front or g.panels[0] for g in layout.groups}
    assert shown_docks(w) == fronts
    assert w.layouts.actions[layout.id].isChecked()
    hidden = set(w.panels) - set(layout.panels())
    assert all(w.panels[p].dock.isHidden() for p in hidden)
    assert w.centralWidget().width() >= 300 and w.centralWidget().height() >= 300


def test_profile_puts_the_run_results_across_the_bottom(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, 1280, 800)
    w.action("actionLayoutProfile").trigger()
    QApplication.processEvents()
    run = w.panels["run"].dock
    assert run.width() >= 0.95 * w.width()
    assert run.y() > w.centralWidget().geometry().bottom()


def test_learn_fx_opens_the_learn_layout(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, 1280, 800)
    w.action("actionLearnFx").trigger()
    assert w.layouts.current == "learn"
    assert "lesson" in shown_docks(w)
    assert w.panels["lesson"].dock.x() < w.centralWidget().x()  # on the left


def test_a_layout_keeps_what_the_user_changed_and_resets(qtbot, tmp_path):
    w = _window(qtbot, tmp_path, 1280, 800)
    w.panels["inspector"].dock.close()  # the user closes the inspector in Edit
    w.layouts.use("rewrite")
    assert not w.panels["inspector"].dock.isHidden()  # Rewrite has its own
    w.action("actionLayoutEdit").trigger()
    assert w.panels["inspector"].dock.isHidden()  # Edit as it was left
    w.action("actionResetLayout").trigger()
    assert "inspector" in shown_docks(w)
    assert w.layouts.current == "edit"


def test_the_overview_map_hides_when_the_graph_fits_and_keeps_clear_of_the_selection(
    qtbot, tmp_path
):
    from PySide6.QtCore import QRect

    from fxstudio.qt.canvas.minimap import Minimap

    w = _window(qtbot, tmp_path, 1280, 800)
    open_and_wait(qtbot, w, "examples:negrelu", signal="layoutShown")
    view = w.canvas
    minimap = view.findChild(Minimap, "minimap")
    view.fit()
    assert minimap.whole_graph_shown()
    QApplication.processEvents()
    assert not minimap.isVisible()  # the whole graph is on screen: no map to find it in
    open_and_wait(qtbot, w, "examples:resnet", signal="layoutShown")
    view.actual_size()
    qtbot.waitUntil(minimap.isVisible)
    viewport = view.viewport()
    assert minimap.width() <= 0.2 * viewport.width() + 1
    assert minimap.height() <= 0.34 * viewport.height() + 1
    # Select a node drawn where the map is: the map moves to another corner.
    scene = view.scene()
    corner = minimap.geometry()
    under = next(
        (
            name
            for name, item in scene.nodes.items()
            if corner.intersects(
                view.mapFromScene(item.sceneBoundingRect())
                .boundingRect()
                .translated(viewport.pos())
            )
        ),
        None,
    )
    if under is None:  # put one there: centre the view on a node, then scroll it under the map
        under = "layer1_0_conv1"
        item = scene.nodes[under]
        target = view.mapToScene(corner.center() - viewport.pos())
        bar = view.verticalScrollBar()
        bar.setValue(bar.value() + int(item.sceneBoundingRect().center().y() - target.y()))
        hbar = view.horizontalScrollBar()
        hbar.setValue(hbar.value() + int(item.sceneBoundingRect().center().x() - target.x()))
    item = scene.nodes[under]
    item.setSelected(True)
    QApplication.processEvents()
    box: QRect = (
        view.mapFromScene(item.sceneBoundingRect()).boundingRect().translated(viewport.pos())
    )
    assert not (minimap.isVisible() and minimap.geometry().intersects(box))
    w.action("actionMinimap").trigger()  # off: stays off while the view moves
    view.zoom_in()
    assert not minimap.isVisible()


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_showing_the_memory_and_run_docks_keeps_the_window_on_the_screen(qtbot, tmp_path, layout):
    """Ctrl+Shift+M (with a result on its plot), then the Run dock too: the window keeps its
    size, inside the screen (#54: it grew to 1400x1034 on a 1000-pixel screen, the status
    bar off it) -- a dock whose body needs more room than it is given scrolls instead."""
    w = _window(qtbot, tmp_path, 780, 640)  # (the offscreen screen: 800x800)
    w.layouts.use(layout.id)
    open_and_wait(qtbot, w, "examples:resnet")
    size, area = w.size(), w.screen().availableGeometry()
    memory = w.panels["memory"]
    with qtbot.waitSignal(memory.finished, timeout=120000):
        w.action("actionEstimateMemory").trigger()
    assert memory.plot is not None and memory.dock.isVisible()
    QApplication.processEvents()
    assert w.size() == size and area.contains(w.frameGeometry()), (w.geometry(), area)
    w.panels["run"].dock.show()
    QApplication.processEvents()
    assert not w.panels["run"].dock.isHidden()
    assert w.size() == size and area.contains(w.frameGeometry()), (w.geometry(), area)
    assert w.statusBar().isVisible() and w.rect().contains(w.statusBar().geometry())


def test_memory_shown_outside_profile_is_a_strip_along_the_bottom(qtbot, tmp_path):
    """In Edit, Ctrl+Shift+M puts the Memory dock where Profile has it: along the bottom, a
    part of the height (not a fourth row squeezed into the right column); the Run dock
    shown too is a tab beside it."""
    w = _window(qtbot, tmp_path, 1280, 800)
    open_and_wait(qtbot, w, "examples:resnet")
    memory = w.panels["memory"]
    with qtbot.waitSignal(memory.finished, timeout=120000):
        w.action("actionEstimateMemory").trigger()
    dock = memory.dock
    qtbot.waitUntil(lambda: dock.height() < 0.5 * w.height())
    assert w.dockWidgetArea(dock) == BOTTOM and dock.width() >= 0.95 * w.width()
    assert dock.height() >= 0.3 * w.height() and canvas_share(w) >= 0.3
    run = w.panels["run"].dock
    run.show()
    assert w.dockWidgetArea(run) == BOTTOM and run in w.tabifiedDockWidgets(dock)


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda layout: layout.id)
def test_showing_every_dock_keeps_the_window_on_the_screen(qtbot, tmp_path, layout):
    """Every dock of *View* shown at once in a window as big as the screen (#54: 1600x1034
    maximized on a 1000-pixel one): each asks for little and scrolls its body, so the window
    keeps its size on the screen."""
    w = _window(qtbot, tmp_path, 780, 760)  # (the offscreen screen: 800x800, the frame 2 px)
    w.layouts.use(layout.id)
    size, area = w.size(), w.screen().availableGeometry()
    for panel in w.panels.values():
        panel.dock.show()
    QApplication.processEvents()
    assert all(not panel.dock.isHidden() for panel in w.panels.values())
    assert w.size() == size and area.contains(w.frameGeometry()), (w.geometry(), area)


@pytest.mark.parametrize("width", [1600, 1000])
def test_the_layout_buttons_stay_in_sight_whatever_the_undo_text(qtbot, tmp_path, width):
    """A long undo text ("Undo fuse-attention (2 matches)") pushed Rewrite, Profile and Learn
    behind the toolbar's » at 1600 px (#54): the toolbar's Undo says "Undo", the whole text
    is in its tooltip (and the Edit menu)."""
    from PySide6.QtGui import QUndoCommand
    from PySide6.QtWidgets import QToolBar, QToolButton

    w = _window(qtbot, tmp_path, width, 800)
    w.session.undo_stack.push(QUndoCommand("fuse-attention (2 matches)"))  # (a rewrite's step)
    QApplication.processEvents()
    main, bar = w.findChild(QToolBar, "mainToolBar"), w.layouts.bar
    for toolbar in (main, bar):
        overflow = toolbar.findChild(QToolButton, "qt_toolbar_ext_button")
        assert overflow is None or not overflow.isVisible(), toolbar.objectName()
    assert all(bar.widgetForAction(a).isVisible() for a in w.layouts.actions.values())
    undo = main.widgetForAction(w.action("actionUndo"))
    assert undo.isVisible() and undo.toolTip() == "Undo fuse-attention (2 matches)"
    if width == 1600:  # (room for the texts beside the icons)
        assert undo.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon
        assert undo.text() == "Undo"
