"""The *History* dock: the undo stack as a list (click a line to go back to it)."""

from __future__ import annotations

from PySide6.QtWidgets import QUndoView, QWidget

from fxstudio.qt.panels.base import DocumentPanel


class HistoryPanel(DocumentPanel):
    id, title = "history", "History"

    def build(self) -> QWidget:
        self.view = QUndoView(self.undo_stack)
        self.view.setEmptyLabel("<opened>")
        self.session.lockChanged.connect(lambda: self.view.setEnabled(not self.session.locked))
        return self.view
