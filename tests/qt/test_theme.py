"""Light and dark: the user's choice (remembered), or the system's scheme as it changes."""

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from fxstudio.qt import theme
from fxstudio.qt.window.main_window import MainWindow
from tests.qt.conftest import open_and_wait


@pytest.fixture(autouse=True)
def _light_again():
    yield
    theme.set_colors(False)  # the colours are the process's: leave them as found


def test_choosing_dark_repaints_everything_and_is_remembered(qtbot, window, tmp_path):
    open_and_wait(qtbot, window, "examples:simple", signal="layoutShown")
    window.selection.select(["fc1"])
    window.findChild(type(window.theme.actions["dark"]), "actionThemeDark").trigger()
    assert theme.colors() is theme.DARK
    scene = window.canvas.scene()
    assert scene.backgroundBrush().color() == QColor(theme.DARK.canvas)
    window_colour = QApplication.palette().color(QPalette.ColorRole.Window)
    assert window_colour.lightness() < 80  # the widgets went dark too
    (selection,) = window.panels["code"].view.extraSelections()
    fmt = selection.format  # (kept: a temporary's format is deleted with it)
    assert fmt.background().color() == QColor(theme.DARK.code_line)
    assert window.window_state.settings.value("view/theme") == "dark"
    window.theme.choose("light")
    assert theme.colors() is theme.LIGHT
    assert scene.backgroundBrush().color() == QColor(theme.LIGHT.canvas)
    window.theme.choose("dark")
    window.close()
    again = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(again)
    assert again.theme.mode == "dark" and theme.colors() is theme.DARK


def test_following_the_system_switches_with_it(qtbot, window, monkeypatch):
    assert window.theme.mode == "system"
    monkeypatch.setattr(theme, "system_is_dark", lambda: True)
    window.theme._system_changed(None)  # what QStyleHints.colorSchemeChanged calls
    assert theme.colors() is theme.DARK
    window.theme.choose("light")  # an explicit choice wins over the system
    window.theme._system_changed(None)
    assert theme.colors() is theme.LIGHT
