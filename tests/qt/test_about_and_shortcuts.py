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


def test_ctrl_y_redoes_as_ctrl_shift_z_does_where_qt_gives_only_the_second(
    qtbot, tmp_path, monkeypatch
):
    """On X11 and GNOME Qt binds Redo to Ctrl+Shift+Z alone, so Ctrl+Y (Windows' redo, and
    most Linux editors') did nothing: both redo, as Ctrl+Z undoes."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QKeySequence

    from fxstudio.qt.window.main_window import MainWindow
    from tests.qt.conftest import open_and_wait

    qt_bindings = QKeySequence.keyBindings

    def as_on_gnome(key):
        if key == QKeySequence.StandardKey.Redo:
            return [QKeySequence("Ctrl+Shift+Z")]
        return qt_bindings(key)

    monkeypatch.setattr(QKeySequence, "keyBindings", staticmethod(as_on_gnome))
    window = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    open_and_wait(qtbot, window, "examples:negrelu")
    redo = window.action("actionRedo")
    assert [k.toString() for k in redo.shortcuts()] == ["Ctrl+Shift+Z", "Ctrl+Y"]
    window.edits.change_target("relu", "torch.tanh")
    for key, modifiers, tanh in (
        (Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier, False),
        (Qt.Key.Key_Y, Qt.KeyboardModifier.ControlModifier, True),
        (Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier, False),
        (
            Qt.Key.Key_Z,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
            True,
        ),
    ):
        window.activateWindow()
        qtbot.keyClick(window.canvas.viewport(), key, modifiers)
        assert ("torch.tanh" in window.document.code()) is tanh, (key, modifiers)
