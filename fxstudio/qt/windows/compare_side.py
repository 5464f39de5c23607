"""One graph of the Compare window (:mod:`fxstudio.qt.windows.compare`): its title, its own
canvas over the document it shows, the differences' marks and the heat."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QFont, QUndoStack
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.canvas.controller import CanvasController
from fxstudio.qt.canvas.heat import HeatMarks
from fxstudio.qt.canvas.marks import DiffMarks
from fxstudio.qt.canvas.view import CanvasView
from fxstudio.qt.selection import SelectionModel

__all__ = ["CompareSide", "ViewSession"]


class ViewSession(QObject):
    """What a canvas needs of a session: the document's changes (a module collapsed, nodes
    dragged) and an undo stack (for the drags)."""

    changed = Signal(object)

    def __init__(self, doc: GraphDocument, parent: QObject) -> None:
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self._unsubscribe = doc.subscribe(self.changed.emit)
        self.destroyed.connect(lambda *_: self._unsubscribe())


class CompareSide(QWidget):
    """One graph of the comparison: its title, its canvas, its marks."""

    def __init__(self, doc: GraphDocument, title: str, parent: QWidget) -> None:
        super().__init__(parent)
        self.document = doc
        self.title = QLabel(title, self)
        self.title.setObjectName("compareSideTitle")
        self.title.setWordWrap(True)
        bold = QFont(self.title.font())
        bold.setBold(True)
        self.title.setFont(bold)
        self.view = CanvasView(self)
        self.selection = SelectionModel(self)
        self.session = ViewSession(doc, self)
        self.canvas = CanvasController(self.view, self.selection, self.session, self)
        self.marks = DiffMarks()
        self.heat = HeatMarks()
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.addWidget(self.title)
        box.addWidget(self.view, 1)
        self.canvas.layoutDone.connect(lambda _layout: self.redraw())

    def show_document(self) -> None:
        self.canvas.set_document(self.document)

    def redraw(self) -> None:
        self.marks.redraw(self.canvas.scene)
        self.heat.redraw(self.canvas.scene)
