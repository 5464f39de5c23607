"""The command palette (Ctrl+Shift+P): every menu action, found by a fuzzy match of its
name or menu path, shown with its shortcut; unavailable ones greyed; Enter runs the action
exactly as its menu item would (the same QAction, so it is one undo step like it)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QDialog, QLineEdit, QListWidget, QListWidgetItem, QMenu, QVBoxLayout

from fxstudio.qt.window.desktop import menu_actions


def fuzzy_score(query: str, text: str) -> float | None:
    """How well ``query`` matches ``text`` (higher is better), None when its letters do not
    all appear in order.  Consecutive letters and letters at word starts count more.

    >>> fuzzy_score("save", "Save session") > fuzzy_score("save", "Show all values")
    True
    >>> fuzzy_score("xyz", "Open") is None
    True
    """
    q, t = query.lower().replace(" ", ""), text.lower()
    if not q:
        return 0.0
    score, at, last = 0.0, 0, -2
    for ch in q:
        found = t.find(ch, at)
        if found < 0:
            return None
        bonus = 1.0
        if found == last + 1:
            bonus += 3.0  # consecutive
        if found == 0 or not t[found - 1].isalnum():
            bonus += 2.0  # a word start
        score += bonus
        last, at = found, found + 1
    return score - 0.01 * len(t)  # shorter names first among equals


ROLE = Qt.ItemDataRole.UserRole


class CommandPalette(QDialog):
    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.setObjectName("commandPalette")
        self.setWindowTitle("Command palette")
        self.resize(560, 380)
        layout = QVBoxLayout(self)
        self.edit = QLineEdit(self)
        self.edit.setObjectName("paletteSearch")
        self.edit.setPlaceholderText("Type a command: open, step, fold, learn…")
        self.list = QListWidget(self)
        self.list.setObjectName("paletteList")
        layout.addWidget(self.edit)
        layout.addWidget(self.list)
        self.entries = [
            (path, action)
            for path, action in menu_actions(window.menuBar())
            if action.objectName() != "actionCommandPalette"
        ]
        self.edit.textChanged.connect(self.fill)
        self.edit.returnPressed.connect(self.run_current)
        self.list.itemActivated.connect(lambda _item: self.run_current())
        self.edit.installEventFilter(self)
        self.fill("")

    def fill(self, query: str) -> None:
        scored = []
        for path, action in self.entries:
            name = action.text().replace("&", "")
            s = fuzzy_score(query, name)
            s_path = fuzzy_score(query, f"{path} {name}")
            best = max(
                (x for x in (s, None if s_path is None else s_path - 1) if x is not None),
                default=None,
            )
            if best is not None:
                scored.append((best, path, name, action))
        scored.sort(key=lambda r: (-r[0] if query else 0, r[1], r[2]))
        self.list.clear()
        for _, path, name, action in scored:
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
            item = QListWidgetItem(f"{name}    — {path}" + (f"    [{keys}]" if keys else ""))
            item.setData(ROLE, action)
            if not action.isEnabled():
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.list.addItem(item)
        first = next(
            (
                i
                for i in range(self.list.count())
                if self.list.item(i).flags() & Qt.ItemFlag.ItemIsEnabled
            ),
            None,
        )
        if first is not None:
            self.list.setCurrentRow(first)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if not isinstance(event, QKeyEvent) or event.type() != QEvent.Type.KeyPress:
            return False
        if event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            row = self.list.currentRow() + (1 if event.key() == Qt.Key.Key_Down else -1)
            if 0 <= row < self.list.count():
                self.list.setCurrentRow(row)
            return True
        return False

    def current_action(self) -> QAction | None:
        item = self.list.currentItem()
        if item is None or not item.flags() & Qt.ItemFlag.ItemIsEnabled:
            return None
        action = item.data(ROLE)
        return action if isinstance(action, QAction) else None

    def run_current(self) -> None:
        action = self.current_action()
        if action is None:
            return
        self.accept()
        action.trigger()


def install(window: Any, view_menu: QMenu) -> QAction:
    action = QAction("Command &palette…", window)
    action.setObjectName("actionCommandPalette")
    action.setShortcut(QKeySequence("Ctrl+Shift+P"))
    action.setStatusTip("Find any command by name")
    action.triggered.connect(window.show_command_palette)
    first = view_menu.actions()
    if first:
        view_menu.insertAction(first[0], action)
    else:
        view_menu.addAction(action)
    return action
