"""Desktop conventions the main window follows: *Help ▸ Keyboard shortcuts* (F1), opening
files dropped on the window, and a prompt when the open model's file changes on disk.  (The
platform's standard keys for Open, Save, Find… are the action table's:
:mod:`fxstudio.qt.window.actions`.)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QFileSystemWatcher, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QMenu,
    QMenuBar,
    QMessageBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from fxstudio.core.flows.lesson import STEPS, count_word
from fxstudio.core.flows.open import DROPPABLE, request_for_file
from fxstudio.core.graph.request import OpenRequest


def menu_actions(bar: QMenuBar) -> list[tuple[str, QAction]]:
    """Every action of the menus, with its menu path ("File ▸ Open Recent ▸ …")."""
    out: list[tuple[str, QAction]] = []

    def walk(menu: QMenu, path: str) -> None:
        for action in menu.actions():
            if action.isSeparator():
                continue
            text = action.text().replace("&", "")
            sub = action.menu()
            if isinstance(sub, QMenu):
                walk(sub, f"{path} ▸ {text}")
            elif text:
                out.append((path, action))

    for top in bar.actions():
        sub = top.menu()
        if isinstance(sub, QMenu):
            walk(sub, top.text().replace("&", ""))
    return out


def typed_keys(action: QAction) -> list[str]:
    """``action``'s keys as the user presses them on this platform (``Ctrl+Shift+S``), in
    the platform's order: the bindings of a standard key that are keys of their own -- the
    *Save*, *Find*, *Open* keys of some keyboards -- are left out, as they are not typed."""
    out: list[str] = []
    for seq in action.shortcuts():
        keys = [seq[i].key() for i in range(seq.count())]  # type: ignore[index]  # (no stub)
        if keys and all(k.value <= Qt.Key.Key_F35.value for k in keys):
            text = seq.toString(QKeySequence.SequenceFormat.NativeText)
            if text not in out:
                out.append(text)
    return out


class ShortcutsDialog(QDialog):
    """*Help ▸ Keyboard shortcuts* (F1): every action with its keys and menu."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.setWindowTitle("fxstudio — keyboard shortcuts")
        self.resize(560, 600)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "New to torch.fx? <b>Help ▸ Learn FX</b> is a lesson in "
            f"{count_word(len(STEPS))} checked steps. "
            "<b>Ctrl+Shift+P</b> finds any command by name.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        seen: set[int] = set()  # one row per command, though it be in two menus
        rows = []
        for path, action in menu_actions(window.menuBar()):
            if id(action) not in seen:
                seen.add(id(action))
                rows.append((path, action, ", ".join(typed_keys(action))))
        self.table = QTableWidget(len(rows), 3, self)
        self.table.setObjectName("shortcutsTable")
        self.table.setHorizontalHeaderLabels(["Command", "Keys", "Menu"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        rows.sort(key=lambda r: (not r[2], r[0]))
        for i, (path, action, keys) in enumerate(rows):
            for j, text in enumerate((action.text().replace("&", ""), keys, path)):
                self.table.setItem(i, j, QTableWidgetItem(text))
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


class DropOpener(QObject):
    """Opens a model file or session dropped anywhere on ``window`` with ``open(request)``,
    once ``may_drop()`` says the document may go (it asks about unsaved changes)."""

    refused = Signal(str)

    def __init__(
        self,
        window: Any,
        open_request: Callable[[OpenRequest], None],
        may_drop: Callable[[], bool],
    ) -> None:
        super().__init__(window)
        self.open_request = open_request
        self.may_drop = may_drop
        window.setAcceptDrops(True)
        window.installEventFilter(self)

    @staticmethod
    def _paths(event: QDropEvent) -> list[str]:
        mime = event.mimeData()
        if mime is None or not mime.hasUrls():
            return []
        return [u.toLocalFile() for u in mime.urls() if u.isLocalFile()]

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if not isinstance(event, QDropEvent):  # (a drag's enter and move events are too)
            return False
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove):
            if any(Path(p).suffix in DROPPABLE for p in self._paths(event)):
                event.acceptProposedAction()
                return True
        elif kind == QEvent.Type.Drop:
            paths = self._paths(event)
            if paths:
                event.acceptProposedAction()
                self.open(paths[0])
                return True
        return False

    def open(self, path: str) -> None:
        request = request_for_file(path)
        if isinstance(request, str):
            self.refused.emit(request)
            return
        if not self.may_drop():
            return
        self.open_request(request)


class FileWatcher(QObject):
    """Watches the open model's source file; when it changes on disk, offers to reload (the
    document stays as it is until the user says so)."""

    changedOnDisk = Signal(str)  # noqa: N815 - the path

    DEBOUNCE_MS = 300  # an editor's save is several writes

    def __init__(self, window: Any, session: Any) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        session.documentChanged.connect(
            lambda doc: self.watch(doc.source_file if doc is not None else None)
        )
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._changed)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self.DEBOUNCE_MS)
        self._timer.timeout.connect(self._settled)
        self._pending = ""
        self.asking = False

    def watch(self, path: str | None) -> None:
        files = self.watcher.files()
        if files:
            self.watcher.removePaths(files)
        if path and Path(path).is_file():
            self.watcher.addPath(path)

    def _changed(self, path: str) -> None:
        self._pending = path
        self._timer.start()

    def _settled(self) -> None:
        path = self._pending
        if Path(path).is_file() and path not in self.watcher.files():
            self.watcher.addPath(path)  # an editor that replaces the file drops the watch
        self.changedOnDisk.emit(path)
        window = self.window
        if not window.interactive or self.asking:
            self.session.status.emit(
                f"{Path(path).name} changed on disk: File ▸ Reload to capture it again", 15000
            )
            return
        self.asking = True
        try:
            answer = QMessageBox.question(
                window,
                "The model's file changed",
                f"{path} changed on disk.\n\nReload it? The graph is captured again from the "
                "new code (a session's saved edits are made again where they still apply); "
                "unsaved changes are asked about first.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            )
        finally:
            self.asking = False
        if answer == QMessageBox.StandardButton.Yes:
            self.session.reload()
