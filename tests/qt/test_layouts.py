"""Task layouts give the graph the room: each arranges the docks for its job, is remembered
as the user left it, and the overview map keeps out of the way."""

import pytest
from PySide6.QtWidgets import QApplication, QDockWidget

from fxstudio.qt.window.layouts import LAYOUTS
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
