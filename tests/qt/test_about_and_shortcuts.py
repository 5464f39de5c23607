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


def test_the_shortcut_list_shows_keys_as_they_are_pressed_one_row_per_command(window):
    """F1's list said "Ctrl+F, Find" and "Shift+Save": the names of keyboards' own Find and
    Save keys, which nobody types.  Each command is one row with the keys pressed here."""
    from PySide6.QtGui import QKeySequence

    from fxstudio.qt.window.desktop import ShortcutsDialog

    dialog = ShortcutsDialog(window)
    table = dialog.table
    rows = [[table.item(r, c).text() for c in range(3)] for r in range(table.rowCount())]
    keys = {(menu, command): k for command, k, menu in rows}
    assert len(keys) == len(rows)  # one row per command
    native = QKeySequence.SequenceFormat.NativeText
    save_as = QKeySequence("Ctrl+Shift+S").toString(native)
    assert keys[("File", "Save session as…")] == save_as
    assert keys[("Edit", "Find node…")] == QKeySequence("Ctrl+F").toString(native)
    assert keys[("File", "Open model…")] == QKeySequence("Ctrl+O").toString(native)
    assert keys[("Edit", "Find next")].split(", ")[0] == QKeySequence("F3").toString(native)
    names = {"Find", "Save", "Open", "Close", "Help", "Refresh", "Undo", "Redo", "Zoom In"}
    for (_menu, command), k in keys.items():
        for one in filter(None, k.split(", ")):
            assert one.split("+")[-1] not in names, (command, k)
    # the keys with a row are the keys of the actions
    find = window.action("actionFind")
    assert QKeySequence(keys[("Edit", "Find node…")], native) in find.shortcuts()
