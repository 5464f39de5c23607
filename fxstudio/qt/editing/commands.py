"""Undo commands.  Each user action is one command, and a command only calls the document."""

from __future__ import annotations

import itertools

from PySide6.QtGui import QUndoCommand

from fxstudio.core.edits import Edit
from fxstudio.core.graph.document import GraphDocument

Positions = dict[str, tuple[float, float] | None]
_SERIALS = itertools.count(1)


class MoveNodesCommand(QUndoCommand):
    """A drag of nodes and groups: one undo step that restores every position exactly."""

    def __init__(self, document: GraphDocument, before: Positions, after: Positions) -> None:
        count = len(after)
        first = next(iter(after)).removeprefix("group:")
        super().__init__(f"Move {first}" if count == 1 else f"Move {count} items")
        self.document = document
        self.before = dict(before)
        self.after = dict(after)

    def redo(self) -> None:
        self.document.set_positions(self.after)

    def undo(self) -> None:
        self.document.set_positions(self.before)


class EditCommand(QUndoCommand):
    """A core edit (already applied when pushed): undo and redo call the edit, nothing else.

    ``serial`` names the graph the edit leaves (unique in the process): the session's
    graph state, which results computed on the graph are stamped with."""

    def __init__(self, edit: Edit) -> None:
        super().__init__(edit.label)
        self.edit = edit
        self.serial = next(_SERIALS)
        self._pushed = False

    def redo(self) -> None:
        if not self._pushed:  # QUndoStack.push calls redo(); the edit is already made
            self._pushed = True
            return
        self.edit.redo()

    def undo(self) -> None:
        self.edit.undo()
