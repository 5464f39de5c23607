"""The generated-code view: Python highlighting, the selected node's line, click to select."""

from __future__ import annotations

import keyword

from PySide6.QtCore import QObject, QRegularExpression
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

from fxstudio.core.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.qt.bridge import SelectionModel


def _fmt(color: str, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    f = QTextCharFormat()
    f.setForeground(QColor(color))
    if bold:
        f.setFontWeight(QFont.Weight.Bold)
    f.setFontItalic(italic)
    return f


class PythonHighlighter(QSyntaxHighlighter):
    """Keywords, builtins-ish names, numbers, strings and comments."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        kw = r"\b(" + "|".join(keyword.kwlist) + r")\b"
        self._rules = [
            (QRegularExpression(kw), _fmt("#7c3aed", bold=True)),
            (QRegularExpression(r"\b(self|torch|operator|getattr)\b"), _fmt("#0369a1")),
            (QRegularExpression(r"\bdef\s+(\w+)"), _fmt("#b45309", bold=True)),
            (QRegularExpression(r"\b[0-9]+(\.[0-9]+)?\b"), _fmt("#047857")),
            (QRegularExpression(r"\"[^\"]*\"|'[^']*'"), _fmt("#be123c")),
            (QRegularExpression(r"#[^\n]*"), _fmt("#6b7280", italic=True)),
        ]

    def highlightBlock(self, text: str) -> None:  # noqa: N802
        for rx, fmt in self._rules:
            it = rx.globalMatch(text)
            while it.hasNext():
                m = it.next()
                self.setFormat(m.capturedStart(), m.capturedLength(), fmt)


class CodeViewController(QObject):
    """Shows ``document.code()`` in a read-only editor and links lines to nodes."""

    def __init__(
        self, view: QPlainTextEdit, selection: SelectionModel, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.view = view
        self.selection = selection
        self.document: GraphDocument | None = None
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        view.setFont(font)
        self._highlighter = PythonHighlighter(view.document())
        self._updating = False
        view.cursorPositionChanged.connect(self._on_cursor_moved)
        selection.changed.connect(self._show_selection)

    def set_document(self, document: GraphDocument | None) -> None:
        self.document = document
        self.refresh()

    def refresh(self) -> None:
        self._updating = True
        try:
            self.view.setPlainText(self.document.code() if self.document else "")
        finally:
            self._updating = False
        self._show_selection(self.selection.names)

    def on_document_changed(self, event: DocumentEvent) -> None:
        if event.kind is not ChangeKind.VIEW_CHANGED:  # moves and collapses leave code alone
            self.refresh()

    def line_of(self, name: str) -> int | None:
        return self.document.code_line_map().get(name) if self.document else None

    def _on_cursor_moved(self) -> None:
        if self._updating or self.document is None:
            return
        line = self.view.textCursor().blockNumber() + 1
        name = self.document.node_at_line(line)
        if name is not None and self.selection.current != name:
            self.selection.select([name])

    def _show_selection(self, names: list[str]) -> None:
        extra = []
        color = QColor("#fde68a")
        first_block = None
        for name in names:
            line = self.line_of(name)
            if line is None:
                continue
            block = self.view.document().findBlockByNumber(line - 1)
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(color)
            sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            sel.cursor = QTextCursor(block)
            extra.append(sel)
            first_block = first_block or block
        self.view.setExtraSelections(extra)
        if first_block is not None:
            current = self.view.textCursor().blockNumber()
            if current != first_block.blockNumber():
                self._updating = True
                try:
                    self.view.setTextCursor(QTextCursor(first_block))
                    self.view.centerCursor()
                finally:
                    self._updating = False
