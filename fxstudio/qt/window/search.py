"""Find nodes by name, target, op, shape or module; step through the matches (Ctrl+F)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QLineEdit, QToolBar, QToolButton

from fxstudio.qt.selection import SelectionModel


class SearchController(QObject):
    """A tool bar with a search field; Enter jumps to the next match, Shift+Enter back."""

    def __init__(self, bar: QToolBar, selection: SelectionModel, document, parent=None) -> None:
        super().__init__(parent)
        self.bar = bar
        self.selection = selection
        self._document = document
        self.edit = QLineEdit(bar)
        self.edit.setObjectName("searchEdit")
        self.edit.setPlaceholderText("Find node: name, target, op, shape or module")
        self.edit.setClearButtonEnabled(True)
        self.edit.setMaximumWidth(360)
        self.prev_button = QToolButton(bar)
        self.prev_button.setText("◀ Previous")
        self.next_button = QToolButton(bar)
        self.next_button.setText("Next ▶")
        self.count = QLabel(bar)
        self.count.setObjectName("searchCount")
        for w in (self.edit, self.prev_button, self.next_button, self.count):
            bar.addWidget(w)
        self.matches: list[str] = []
        self.index = -1
        self.edit.textChanged.connect(self._search)
        self.edit.returnPressed.connect(self.next)
        self.next_button.clicked.connect(self.next)
        self.prev_button.clicked.connect(self.previous)
        back = QShortcut(QKeySequence("Shift+Return"), self.edit)
        back.activated.connect(self.previous)
        close = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.edit)
        close.activated.connect(bar.hide)
        bar.hide()

    def show(self) -> None:
        self.bar.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def _search(self, text: str) -> None:
        doc = self._document()
        self.matches = doc.find(text) if doc is not None else []
        self.index = -1
        self._update_count()

    def refresh(self) -> None:
        """The document changed: search again."""
        self._search(self.edit.text())

    def next(self) -> None:
        self._step(+1)

    def previous(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        if not self.matches:
            self._update_count()
            return
        self.index = (self.index + delta) % len(self.matches)
        self.selection.select([self.matches[self.index]])
        self._update_count()

    def _update_count(self) -> None:
        if not self.edit.text().strip():
            self.count.setText("")
        elif not self.matches:
            self.count.setText("no match")
        else:
            at = self.index + 1 if self.index >= 0 else 0
            self.count.setText(f"{at} of {len(self.matches)}")
