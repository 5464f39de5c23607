"""Find nodes by name, target, op, shape or module; step through the matches (Ctrl+F).

As the user types, the first match is selected (and brought into view on the canvas, the
table and the code); the count says where they are: "1 of 3", "No match".  Enter or F3 goes
to the next match, Shift+Enter or Shift+F3 back, Escape closes the bar.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QLabel, QLineEdit, QToolBar, QToolButton

from fxstudio.qt.selection import SelectionModel


class SearchController(QObject):
    """A tool bar with a search field that moves to the first match as the user types;
    Enter jumps to the next match, Shift+Enter back."""

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
        self.prev_button.setToolTip("The previous match (Shift+Enter, Shift+F3)")
        self.next_button = QToolButton(bar)
        self.next_button.setText("Next ▶")
        self.next_button.setToolTip("The next match (Enter, F3)")
        self.count = QLabel(bar)
        self.count.setObjectName("searchCount")
        for w in (self.edit, self.prev_button, self.next_button, self.count):
            bar.addWidget(w)
        self.matches: list[str] = []
        self.index = -1  # of the match that is selected; -1: none is
        self.edit.textChanged.connect(lambda text: self._search(text, move=True))
        self.edit.returnPressed.connect(self.next)
        self.next_button.clicked.connect(self.next)
        self.prev_button.clicked.connect(self.previous)
        for keys in ("Shift+Return", "Shift+Enter"):
            back = QShortcut(QKeySequence(keys), self.edit)
            back.activated.connect(self.previous)
        close = QShortcut(QKeySequence(Qt.Key.Key_Escape), self.edit)
        close.activated.connect(bar.hide)
        selection.changed.connect(self._selected)
        bar.hide()

    def show(self) -> None:
        self.bar.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def _search(self, text: str, move: bool) -> None:
        """Find ``text``; ``move``: select the first match (the one selected, if it still
        matches), else only count."""
        doc = self._document()
        self.matches = doc.find(text) if doc is not None else []
        current = self.selection.current
        if current is not None and current in self.matches:
            self.index = self.matches.index(current)
        elif move and self.matches:
            self.index = 0
            self.selection.select([self.matches[0]])
        else:
            self.index = -1
        self._update_count()

    def _selected(self, names: list[str]) -> None:
        """The selection changed (here or in another view): the count follows it."""
        current = names[-1] if names else None
        self.index = self.matches.index(current) if current in self.matches else -1
        self._update_count()

    def refresh(self) -> None:
        """The document changed: search again, leaving the selection as it is."""
        self._search(self.edit.text(), move=False)

    def next(self) -> None:
        self._step(+1)

    def previous(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        if not self.bar.isVisible():  # F3 with the bar closed: open it, on the same search
            self.show()
        if not self.matches:
            self._update_count()
            return
        if self.index < 0:  # on no match: the first one forward, the last one back
            self.index = 0 if delta > 0 else len(self.matches) - 1
        else:
            self.index = (self.index + delta) % len(self.matches)
        self.selection.select([self.matches[self.index]])
        self._update_count()

    def _update_count(self) -> None:
        if not self.edit.text().strip():
            self.count.setText("")
        elif not self.matches:
            self.count.setText("No match")
        elif self.index < 0:
            n = len(self.matches)
            self.count.setText(f"{n} match{'es' if n != 1 else ''}")
        else:
            self.count.setText(f"{self.index + 1} of {len(self.matches)}")
