"""The window's commands made from the table: :func:`build` makes a ``QAction`` of each
:class:`~fxstudio.qt.window.actions.action.Action` and puts it in its menu, :func:`fill_toolbar`
and :func:`place` (a place the window fills), and :func:`update`, which enables each command
only when it can act.

A command that cannot act is disabled, not silent: :func:`update` is called whenever a
document opens or closes, it changes, the selection changes, editing is locked or a command
ran.  What a command needs is ``needs`` (a document, a selection, editing not locked) and, for
a few, ``when(window)`` (something copied to paste, an input that can move that way, a
collapsed module to expand).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QToolBar

from fxstudio.qt.resources import icon
from fxstudio.qt.window.actions.action import DOC, EDIT, SELECTION, SEP, SK, Action, Window
from fxstudio.qt.window.actions.table import ACTIONS, MENUS, TOOLBAR

#: The keys of a standard key on a platform that gives it none.
FALLBACK_KEYS = {
    SK.Open: "Ctrl+O",
    SK.Refresh: "F5",
    SK.Save: "Ctrl+S",
    SK.SaveAs: "Ctrl+Shift+S",
    SK.Close: "Ctrl+W",
    SK.Quit: "Ctrl+Q",
    SK.Find: "Ctrl+F",
    SK.FindNext: "F3",
    SK.FindPrevious: "Shift+F3",
    SK.ZoomIn: "Ctrl++",
    SK.ZoomOut: "Ctrl+-",
    SK.HelpContents: "F1",
}
#: Keys a standard key has by the convention of Windows and most Linux desktops, which Qt
#: leaves out on some (X11 and GNOME give Redo only Ctrl+Shift+Z): added, except on macOS.
CONVENTION_KEYS = {SK.Redo: "Ctrl+Y"}


def standard_keys(key: QKeySequence.StandardKey) -> list[QKeySequence]:
    """The keys of ``key`` here: the platform's, a fallback where it gives none, and those
    of :data:`CONVENTION_KEYS` after them (Redo: Ctrl+Shift+Z and Ctrl+Y)."""
    bindings = list(QKeySequence.keyBindings(key))
    if not bindings and key in FALLBACK_KEYS:
        bindings = [QKeySequence(FALLBACK_KEYS[key])]
    extra = CONVENTION_KEYS.get(key)
    if extra and sys.platform != "darwin" and QKeySequence(extra) not in bindings:
        bindings.append(QKeySequence(extra))
    return bindings


def build(window: Window) -> tuple[dict[str, QAction], dict[str, QMenu]]:
    """The actions of :data:`ACTIONS` and the menus they go in.  Places named ``@…`` in the
    table are left for the window to fill (:func:`place`: the Recent menu, undo and redo,
    the docks, the theme, a panel's actions).  ``window`` (a QMainWindow) has a signal
    ``actionStarted``, emitted as a command starts, before it runs; once it ran, what every
    command can do is worked out again (:func:`update`)."""
    assert isinstance(window, QMainWindow)  # (what a Protocol cannot say)
    menus = {}
    for title in MENUS:
        menu = window.menuBar().addMenu(title)
        menu.setObjectName("menu" + title.strip("&"))
        menus[title] = menu
    actions: dict[str, QAction] = {}
    for entry in ACTIONS:
        if isinstance(entry, str):
            title, _, what = entry.partition(":")
            if what == SEP:
                menus[title].addSeparator()
            else:  # a place for the window to fill: a named, empty marker action
                marker = menus[title].addAction("")
                marker.setObjectName(what)
                marker.setVisible(False)
            continue
        action = QAction(entry.text, window)
        action.setObjectName(entry.id)
        if entry.tip:
            action.setToolTip(entry.tip)
            action.setStatusTip(entry.tip)
        if isinstance(entry.keys, QKeySequence.StandardKey):
            action.setShortcuts(standard_keys(entry.keys))
        elif entry.keys:
            action.setShortcut(QKeySequence(entry.keys))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if entry.icon:
            action.setIcon(icon(entry.icon))
        if entry.checkable:
            action.setCheckable(True)
            action.setChecked(entry.checked)
        action.triggered.connect(window.actionStarted)
        action.triggered.connect(lambda _checked=False, e=entry: e.run(window))
        action.triggered.connect(lambda _checked=False: update(window, actions))
        menus[entry.menu].addAction(action)
        actions[entry.id] = action
    return actions, menus


def fill_toolbar(toolbar: QToolBar, actions: dict[str, QAction]) -> None:
    for name in TOOLBAR:
        if name == SEP:
            toolbar.addSeparator()
        else:
            toolbar.addAction(actions[name])


def place(menu: QMenu, marker: str, actions: Sequence[QAction | QMenu]) -> None:
    """Put ``actions`` (or submenus) where the marker ``marker`` is in ``menu``."""
    where = next(a for a in menu.actions() if a.objectName() == marker)
    for item in actions:
        if isinstance(item, QMenu):
            menu.insertMenu(where, item)
        else:
            menu.insertAction(where, item)


def update(window: Window, actions: dict[str, QAction]) -> None:
    """Enable each action of the table only when it can act."""
    session = window.session
    have = DOC if session.document is not None else 0
    if window.selection.names:
        have |= SELECTION
    if not session.locked:
        have |= EDIT
    for entry in ACTIONS:
        if isinstance(entry, Action) and entry.id in actions:
            can = entry.needs & have == entry.needs
            if can and entry.when is not None:
                can = entry.when(window)
            actions[entry.id].setEnabled(can)
