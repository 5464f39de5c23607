"""About shows the versions and copies them; no two actions share a shortcut."""

import torch
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication

from fxstudio import __version__
from fxstudio.qt.about import AboutDialog, system_info


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
    seen: dict[str, str] = {}
    for action in window.findChildren(QAction):
        for key in action.shortcuts():
            text = key.toString()
            if not text:
                continue
            assert text not in seen, f"{text}: {seen[text]} and {action.text()}"
            seen[text] = action.text()
    assert {"Ctrl+O", "Ctrl+S", "Ctrl+Q", "Ctrl+F"} <= set(seen)
