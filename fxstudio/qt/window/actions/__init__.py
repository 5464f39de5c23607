"""The window's commands, declared as data: one :class:`Action` per command -- its id, text,
menu, keys, icon, whether it is on the toolbar, what it needs to act, and what it runs --
written with keyword arguments in its menu's module, its callbacks typed by the
:class:`Window` they are given.  The menus, the toolbar, the command palette and the
keyboard-shortcut list are all built from :data:`ACTIONS` (and the panels' own actions, such
as the Step dock's).

- ``action`` (:class:`Action`, what it needs -- ``DOC``, ``SELECTION``, ``EDIT`` -- and the
  :class:`Window` protocol);
- one module per menu: ``file``, ``edit``, ``view``, ``help`` (the Rewrite and Step menus
  hold only the Patterns and Step docks' actions);
- ``table`` (the menus in order, :data:`ACTIONS` assembled from them, :data:`TOOLBAR`);
- ``building`` (the ``QAction`` of each, in its menu and on the toolbar; :func:`update`
  enables each only when it can act).
"""

from fxstudio.qt.window.actions.action import DOC, EDIT, SELECTION, SEP, SK, Action, Window
from fxstudio.qt.window.actions.building import (
    FALLBACK_KEYS,
    build,
    fill_toolbar,
    place,
    standard_keys,
    update,
)
from fxstudio.qt.window.actions.table import ACTIONS, MENUS, TOOLBAR

__all__ = [
    "ACTIONS",
    "DOC",
    "EDIT",
    "FALLBACK_KEYS",
    "MENUS",
    "SELECTION",
    "SEP",
    "SK",
    "TOOLBAR",
    "Action",
    "Window",
    "build",
    "fill_toolbar",
    "place",
    "standard_keys",
    "update",
]
