"""What a command is: an :class:`Action` (its id, text, menu, keys, icon, what it needs and
what it runs), declared with keyword arguments by its menu's module, and the
:class:`Window` its callbacks are given -- typed, so mypy checks every ``run`` and ``when``
against what the window really has."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QAction, QKeySequence

from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.canvas.controller import CanvasController
from fxstudio.qt.canvas.view import CanvasView
from fxstudio.qt.editing.controller import EditController
from fxstudio.qt.editing.dialogs import EditDialogs
from fxstudio.qt.selection import SelectionModel
from fxstudio.qt.window.saving import SaveController
from fxstudio.qt.window.search import SearchController
from fxstudio.qt.window.session import DocumentSession
from fxstudio.qt.window.window_state import WindowState

SK = QKeySequence.StandardKey
#: What an action needs to act: a document, a selected node, editing not locked.
DOC, SELECTION, EDIT = 1, 2, 4
SEP = "-"  # a separator in a menu's list (``@name``: a place the window fills)


class Window(Protocol):
    """What the commands use of the main window
    (:class:`~fxstudio.qt.window.main_window.MainWindow`, which imports this package, so it
    is named here by the part of it the commands use; mypy checks it where the window builds
    its actions)."""

    session: DocumentSession
    selection: SelectionModel
    canvas: CanvasView
    canvas_controller: CanvasController
    edits: EditController
    dialogs: EditDialogs
    saving: SaveController
    search: SearchController
    window_state: WindowState

    @property
    def document(self) -> GraphDocument | None: ...

    @property
    def actionStarted(self) -> SignalInstance: ...  # noqa: N802 - a command starts

    def action(self, name: str) -> QAction: ...

    def show_open_dialog(self) -> None: ...

    def close_document(self) -> None: ...

    def close(self) -> bool: ...

    def show_command_palette(self) -> None: ...

    def learn(self) -> None: ...

    def show_shortcuts(self) -> None: ...

    def show_about(self) -> None: ...


@dataclass(frozen=True, kw_only=True)
class Action:
    """One command of a menu: ``Action(id="actionOpen", text="&Open model…", menu="&File",
    run=lambda w: w.show_open_dialog(), keys=SK.Open, ...)``."""

    id: str  # its objectName (actionOpen)
    text: str
    menu: str
    run: Callable[[Window], object]  # called with the window (what it returns is dropped)
    keys: str | QKeySequence.StandardKey | None = None
    tip: str = ""
    icon: str = ""  # a file in resources/icons
    needs: int = 0
    checkable: bool = False
    checked: bool = False
    when: Callable[[Window], bool] | None = None  # and only when this says so


#: A menu's list: its actions in order, ``-`` for a separator, ``@name`` for a place the
#: window fills (the Recent menu, undo and redo, the docks, the theme, a panel's actions).
Entries = tuple[Action | str, ...]
