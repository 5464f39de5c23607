"""The window remembers its layout and the models opened before."""

from PySide6.QtWidgets import QDockWidget

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.saving.recent import RecentModels
from fxstudio.qt.window.main_window import MainWindow
from tests.qt.conftest import open_and_wait


def _window(qtbot, tmp_path):
    w = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(w)
    w.resize(1100, 760)
    w.show()
    return w


def test_the_layout_comes_back_as_it_was_left_and_resets(qtbot, tmp_path):
    first = _window(qtbot, tmp_path)
    first.layouts.use("profile")
    first.findChild(QDockWidget, "runDock").hide()
    first.resize(900, 640)
    first.close()
    assert (tmp_path / "window.ini").exists()
    again = _window(qtbot, tmp_path)
    # (the fixture resized it; the saved geometry is applied when it is built)
    assert again.layouts.current == "profile"
    assert again.findChild(QDockWidget, "runDock").isHidden()
    assert not again.findChild(QDockWidget, "tableDock").isHidden()
    again.actions["actionResetLayout"].trigger()
    assert not again.findChild(QDockWidget, "runDock").isHidden()


def test_a_saved_geometry_is_restored(qtbot, tmp_path):
    first = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(first)
    first.show()
    first.resize(760, 700)  # within the offscreen screen (800x800): restoring fits it there
    size = first.size()
    assert size.width() == 760
    first.close()
    again = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(again)
    again.show()
    assert again.size() == size


def test_open_recent_lists_what_was_opened_leaves_out_missing_files_and_clears(qtbot, tmp_path):
    w = _window(qtbot, tmp_path)
    open_and_wait(qtbot, w, "examples:simple")
    recent = RecentModels(tmp_path / "recent.json")
    recent.add(OpenRequest(str(tmp_path / "gone.py") + ":Net"))
    menu = w.window_state.recent_menu
    menu.aboutToShow.emit()
    labels = [a.text() for a in menu.actions() if a.text()]
    assert any("examples:simple" in t for t in labels)
    assert not any("gone.py" in t for t in labels)
    entry = next(a for a in menu.actions() if "examples:simple" in a.text())
    with qtbot.waitSignal(w.session.loaded, timeout=60000):
        entry.trigger()
    clear = next(a for a in menu.actions() if "Clear" in a.text())
    clear.trigger()
    menu.aboutToShow.emit()
    assert [a.text() for a in menu.actions() if a.isEnabled() and a.text()] == []


def test_a_geometry_from_a_bigger_screen_is_fitted_to_this_one(qtbot, tmp_path):
    """Closed at 1400x860 on a big screen, opened on a smaller one (offscreen: 800x800): the
    window fits the screen's available area, every edge on it."""
    first = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(first)
    first.show()
    first.resize(1400, 860)
    first.move(300, 200)
    first.close()
    again = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(again)
    again.window_state.start_size(1400, 860)  # as fxstudio starts: the saved size wins
    again.show()
    area = again.screen().availableGeometry()
    assert area.contains(again.frameGeometry()), (again.frameGeometry(), area)
    assert again.width() > 600 and again.height() > 600  # fitted, not shrunk to nothing


def test_the_first_runs_size_fits_the_screen(qtbot, tmp_path):
    w = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(w)
    w.window_state.start_size(1400, 860)  # bigger than the offscreen screen (800x800)
    w.show()
    assert w.screen().availableGeometry().contains(w.frameGeometry())


def test_docks_keep_their_part_of_a_smaller_window(qtbot, tmp_path):
    """The Learn layout left at 1400 px wide comes back in a 780 px window with the canvas
    holding about the part it had (its docks were kept as parts of the window)."""
    first = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(first)
    first.show()
    first.resize(1400, 780)
    first.layouts.use("learn")
    qtbot.waitUntil(lambda: first.findChild(QDockWidget, "lessonDock").width() > 300)
    part = first.centralWidget().width() / first.width()
    first.close()
    again = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(again)
    again.show()
    again.resize(780, 700)
    # (before: the docks kept their pixels, and the canvas was 70 px wide)
    qtbot.waitUntil(lambda: again.centralWidget().width() / again.width() > part - 0.1)
