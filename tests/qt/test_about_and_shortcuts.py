"""About shows the versions and copies them; no two actions share a shortcut."""

import torch
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication

from fxstudio import __version__
from fxstudio.qt.window.about import AboutDialog, system_info
from fxstudio.qt.window.actions import ACTIONS, Action


def test_about_lists_the_versions_and_copies_them(qtbot):
    dialog = AboutDialog()
    qtbot.addWidget(dialog)
    text = dialog.info.toPlainText()
    assert text == system_info()
    for needle in (
        f"fxstudio {__version__}",
        f"torch {torch.__version__}",
        "PySide6",
        "Qt ",
        "Python",
        "graphviz",
    ):
        assert needle in text, needle
    assert "not found" not in text.splitlines()[4]  # graphviz is installed by make
    dialog.copy_button.click()
    assert QApplication.clipboard().text() == text


def test_no_two_actions_share_a_shortcut(window):
    """Every command of the action table, the panels' actions (the Step menu) and any other
    action of the window: no key runs two of them."""
    table = [window.actions[a.id] for a in ACTIONS if isinstance(a, Action)]
    assert len({a.objectName() for a in table}) == len(table) > 30  # each id once
    panels = [a for p in window.panels.values() for a in p.menu_actions()]
    actions = list({id(a): a for a in [*table, *panels, *window.findChildren(QAction)]}.values())
    seen: dict[str, str] = {}
    for action in actions:
        for key in action.shortcuts():
            text = key.toString()
            if not text:
                continue
            assert text not in seen, f"{text}: {seen[text]} and {action.text()}"
            seen[text] = action.text()
    assert {"Ctrl+O", "Ctrl+S", "Ctrl+Q", "Ctrl+F", "F11"} <= set(seen)
