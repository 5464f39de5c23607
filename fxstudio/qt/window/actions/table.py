"""The table the menus, the toolbar, the command palette and the shortcut list read: the
menus in order, each with its module's entries; :data:`ACTIONS` (all of them, in menu
order) and :data:`TOOLBAR`."""

from __future__ import annotations

from fxstudio.qt.window.actions import edit, file, help, view
from fxstudio.qt.window.actions.action import SEP, Action, Entries

#: The place for a panel's own actions (the Rewrite and Step menus hold only theirs: the
#: Patterns dock's and the Step dock's).
PANEL = "@panel"
#: The menus, in order, with their entries.
MENU_ENTRIES: tuple[tuple[str, Entries], ...] = (
    (file.MENU, file.ENTRIES),
    (edit.MENU, edit.ENTRIES),
    (view.MENU, view.ENTRIES),
    ("&Rewrite", (PANEL,)),
    ("&Step", (PANEL,)),
    (help.MENU, help.ENTRIES),
)
MENUS = tuple(title for title, _ in MENU_ENTRIES)
#: Every entry of every menu, in menu order: an :class:`Action`, or ``"&Menu:-"`` (a
#: separator) or ``"&Menu:@name"`` (a place the window fills).
ACTIONS: tuple[Action | str, ...] = tuple(
    entry if isinstance(entry, Action) else f"{title}:{entry}"
    for title, entries in MENU_ENTRIES
    for entry in entries
)
#: The toolbar, in order (``-``: a separator).
TOOLBAR = (
    "actionOpen", "actionReload", "actionSaveSession", "actionSavePython", SEP,
    "actionUndo", "actionRedo", SEP,
    "actionInsert", "actionDelete", SEP,
    "actionFit", "actionZoomIn", "actionZoomOut", "actionRelayout",
)  # fmt: skip
