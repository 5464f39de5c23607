"""``GraphStates``: which graph the open document holds, as far as results computed on it go
-- the Run dock's times, the heat, the node table's Time column, the Step dock's values.

A state is a small tuple, equal for two moments exactly when the graph is the same at both:

- the document shown (another one opened: a new state, never equal to an older one);
- the last edit on the undo stack below its index (each edit command has a ``serial``):
  undoing back to it gives its state again, as the graph is the same again; a move, or the
  undo of one, changes no graph and leaves the state alone;
- changes of the graph that no edit on the stack explains (made straight on the document):
  each one is a graph of its own, which nothing measured before it is of.

A result stamped with :meth:`GraphStates.now` is current while :meth:`GraphStates.is_current`
says so, stale otherwise; ``changed()`` is emitted when the state becomes another one.

Example (the window's session has one)::

    stamp = session.graph_state()   # when a run starts, with the snapshot it runs
    ...                             # an edit: stale; undone: current again
    session.is_current(stamp)
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QUndoStack
from shiboken6 import isValid

from fxstudio.core.graph.document import ChangeKind, DocumentEvent

State = tuple[int, int, int]
#: Changes that leave the graph as it was: the view, and shapes worked out again after edits.
SAME_GRAPH = (ChangeKind.VIEW_CHANGED, ChangeKind.SHAPES_CHANGED)


class GraphStates(QObject):
    """The graph states of the documents shown over ``stack`` (their undo stack)."""

    changed = Signal()

    def __init__(self, stack: QUndoStack, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.stack = stack
        self._document = 0  # documents shown so far
        self._drift = 0  # changes of the graph no edit on the stack explained
        self._unexplained = False  # a change just now, its edit not on the stack (yet)
        self._last = self.now()
        stack.indexChanged.connect(self._index_changed)

    def now(self) -> State:
        """The state of the graph as it is now."""
        serial = 0
        for i in range(self.stack.index() - 1, -1, -1):
            serial = getattr(self.stack.command(i), "serial", 0)
            if serial:
                break
        return (self._document, self._drift + self._unexplained, serial)

    def is_current(self, state: object) -> bool:
        """Whether a result computed at ``state`` is of the graph as it is now."""
        return state == self.now()

    def new_document(self) -> None:
        """Another document is shown (call before its undo stack is cleared)."""
        self._document += 1
        self._unexplained = False
        self._last = (self._document, self._drift, 0)

    def document_changed(self, event: DocumentEvent) -> None:
        """The document changed: stale at once; if no edit is pushed for it before the
        window's next turn, a graph of its own."""
        if event.kind in SAME_GRAPH or self._unexplained:
            return
        self._unexplained = True
        QTimer.singleShot(0, self._unexplained_change)

    def _index_changed(self, _index: int) -> None:
        if not isValid(self.stack):
            return  # the window closes: its undo stack is going
        self._unexplained = False  # the change was this edit (or its undo, its redo)
        self._check()

    def _unexplained_change(self) -> None:
        if self._unexplained and isValid(self.stack):
            self._unexplained = False
            self._drift += 1
            self._check()

    def _check(self) -> None:
        state = self.now()
        if state != self._last:
            self._last = state
            self.changed.emit()
