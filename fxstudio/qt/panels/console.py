"""*View ▸ Python console*: a Python prompt over the open document
(:mod:`fxstudio.core.console`: ``doc``, ``gm``, ``graph``, ``edits`` bound).  What the console
changes reaches the undo stack like any edit -- ``edits.*`` calls and a direct change of the
graph alike ("Console edit"); a direct change that would break the graph is put back and
the console says why.  Up/Down walk the history; Tab completes names.
"""

from __future__ import annotations

import rlcompleter

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFontDatabase, QKeyEvent, QTextCursor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.flows.edit import ConsoleSession, Result
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.editing.commands import EditCommand
from fxstudio.qt.fitting import lines_height
from fxstudio.qt.panels.base import DocumentPanel

BANNER = (
    "fxstudio console — doc, gm, graph, edits, torch, nn, fx, operator.\n"
    "edits.set_target('add', 'operator.mul') is one undo step; so is a direct change of "
    "the graph (checked like any edit).\n"
)


class ConsolePanel(DocumentPanel):
    id, title = "console", "Python console"
    ran = Signal(object)  # the core Result of a statement

    def build(self) -> QWidget:
        self.console: ConsoleSession | None = None
        self.history: list[str] = []
        self._at = 0
        body = QWidget()
        layout = QVBoxLayout(body)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.output = QPlainTextEdit(body)
        self.output.setObjectName("consoleOutput")
        self.output.setReadOnly(True)
        self.output.setFont(mono)
        self.output.setPlainText(BANNER)
        self.output.setMinimumHeight(lines_height(self.output, 8))
        layout.addWidget(self.output, 1)
        row = QHBoxLayout()
        self.prompt = QLabel(">>>", body)
        self.prompt.setFont(mono)
        self.input = QLineEdit(body)
        self.input.setObjectName("consoleInput")
        self.input.setFont(mono)
        self.input.setPlaceholderText("Python, run on the open model")
        self.input.returnPressed.connect(self._entered)
        self.input.installEventFilter(self)
        self.session.lockChanged.connect(self._lock_changed)
        row.addWidget(self.prompt)
        row.addWidget(self.input)
        layout.addLayout(row)
        self.on_document(None)
        return body

    def on_document(self, doc: GraphDocument | None) -> None:
        self.console = ConsoleSession(doc) if doc is not None else None
        self.prompt.setText(">>>")
        self._lock_changed()

    def _lock_changed(self) -> None:
        """The console runs code that may change the graph, so it waits while edits wait."""
        locked = self.session.locked
        self.input.setEnabled(self.console is not None and not locked)
        self.input.setPlaceholderText(
            f"Waiting: {locked}" if locked else "Python, run on the open model"
        )

    def run(self, line: str) -> Result | None:
        """Run one line as if typed; returns the core Result (None without a document, or
        while edits wait -- the console then says why and runs nothing)."""
        if self.console is None:
            return None
        if self.session.locked:
            self._write(f"# not run: {self.session.locked}\n")
            self.message.emit(self.session.locked)
            return None
        if line.strip():
            self.history.append(line)
        self._at = len(self.history)
        self._write(f"{self.prompt.text()} {line}\n")
        result = self.console.push(line)
        if result.output:
            self._write(result.output)
        for edit in result.edits:
            self.undo_stack.push(EditCommand(edit))
        self.prompt.setText("..." if result.more else ">>>")
        self.ran.emit(result)
        return result

    def _entered(self) -> None:
        line = self.input.text()
        self.input.clear()
        self.run(line)

    def _write(self, text: str) -> None:
        cursor = self.output.textCursor()
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        self.output.setTextCursor(cursor)
        self.output.ensureCursorVisible()

    def complete(self, text: str) -> list[str]:
        """Names that complete the last word of ``text`` (Tab)."""
        if self.console is None:
            return []
        word = text.split()[-1] if text.split() else ""
        completer = rlcompleter.Completer(self.console.namespace)
        found: list[str] = []
        for i in range(200):
            option = completer.complete(word, i)
            if option is None:
                break
            found.append(option)
        return found

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return False
        key = event.key()
        if key in (Qt.Key.Key_Up, Qt.Key.Key_Down) and self.history:
            self._at = max(
                0, min(len(self.history), self._at + (-1 if key == Qt.Key.Key_Up else 1))
            )
            self.input.setText(self.history[self._at] if self._at < len(self.history) else "")
            return True
        if key == Qt.Key.Key_Tab:
            text = self.input.text()
            options = self.complete(text)
            if len(options) == 1:
                head = text[: len(text) - len(text.split()[-1])] if text.split() else text
                self.input.setText(head + options[0])
            elif options:
                self._write("  ".join(options[:40]) + "\n")
            return True
        return False
