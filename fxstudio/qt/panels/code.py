"""The generated-code view: Python highlighting, the selected node's line, click to select."""

from __future__ import annotations

import keyword

from PySide6.QtCore import QRegularExpression, QTimer
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QSyntaxHighlighter,
    QTextBlock,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
    QTextLayout,
)
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget
from shiboken6 import isValid

from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.qt import theme
from fxstudio.qt.forms import child, load_form
from fxstudio.qt.panels.base import DocumentPanel

#: Code with more lines than this is coloured as it scrolls into view, not all at once.
HIGHLIGHT_ALL_BELOW = 1500
#: A change of more lines than this is shown a chunk of this many lines per turn.
CHUNK_LINES = 2000
WAITING = " — updating…"  # the dock's title while a big graph's code is generated


def _fmt(color: str, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    f = QTextCharFormat()
    f.setForeground(QColor(color))
    if bold:
        f.setFontWeight(QFont.Weight.Bold)
    f.setFontItalic(italic)
    return f


class PythonHighlighter(QSyntaxHighlighter):
    """Keywords, builtins-ish names, numbers, strings and comments.

    Attached to a document it colours every line as the text changes: a second or more for
    a 10,000-line ``forward``.  For code that long the view leaves it detached and colours the
    lines that scroll into view with :meth:`colour_block`.
    """

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self.set_colours()

    def set_colours(self) -> None:
        """The rules in the theme's colours (keyword, name, def, number, string, comment)."""
        kw = r"\b(" + "|".join(keyword.kwlist) + r")\b"
        k, name, fn, num, text, comment = theme.colors().syntax
        self._rules = [
            (QRegularExpression(kw), _fmt(k, bold=True)),
            (QRegularExpression(r"\b(self|torch|operator|getattr)\b"), _fmt(name)),
            (QRegularExpression(r"\bdef\s+(\w+)"), _fmt(fn, bold=True)),
            (QRegularExpression(r"\b[0-9]+(\.[0-9]+)?\b"), _fmt(num)),
            (QRegularExpression(r"\"[^\"]*\"|'[^']*'"), _fmt(text)),
            (QRegularExpression(r"#[^\n]*"), _fmt(comment, italic=True)),
        ]

    def spans(self, text: str) -> list[tuple[int, int, QTextCharFormat]]:
        out = []
        for rx, fmt in self._rules:
            it = rx.globalMatch(text)
            while it.hasNext():
                m = it.next()
                out.append((m.capturedStart(), m.capturedLength(), fmt))
        return out

    def highlightBlock(self, text: str) -> None:  # noqa: N802
        for start, length, fmt in self.spans(text):
            self.setFormat(start, length, fmt)

    def colour_block(self, block: QTextBlock) -> None:
        """Colour one block of a document this highlighter is not attached to."""
        ranges = []
        for start, length, fmt in self.spans(block.text()):
            r = QTextLayout.FormatRange()
            r.start, r.length, r.format = start, length, fmt
            ranges.append(r)
        block.layout().setFormats(ranges)
        block.document().markContentsDirty(block.position(), block.length())


class CodePanel(DocumentPanel):
    """The *Generated code* dock: ``document.code()`` in a read-only editor, the selected
    node's line highlighted, a click on a line selecting its node."""

    id, title = "code", "Generated code"
    view: QPlainTextEdit  # the form's codeView

    def build(self) -> QWidget:
        body = QWidget()
        load_form("code_panel", body)
        self.view = child(body, QPlainTextEdit, "codeView")
        view = self.view
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        view.setFont(font)
        view.setUndoRedoEnabled(False)  # read-only: its edits are ours, one per refresh
        self._highlighter = PythonHighlighter(view.document())
        self._coloured: set[int] | None = None  # blocks coloured so far (long code only)
        self._shown: str | None = None  # the code the view holds
        self._colouring = False
        self._updating = False
        self._pending: tuple[int, list[str], str] | None = None  # a long change being shown
        self._refresh_due = False  # a change heard, shown in a turn of its own (big graphs)
        view.cursorPositionChanged.connect(self._on_cursor_moved)
        view.verticalScrollBar().valueChanged.connect(self._highlight_visible)
        view.updateRequest.connect(lambda *_: self._highlight_visible())
        self.selection.changed.connect(self._show_selection)
        return body

    def restyle(self) -> None:
        """The theme changed: colour the code and the selected line again."""
        self._highlighter.set_colours()
        if self._coloured is None:
            self._highlighter.rehighlight()
        else:
            self._coloured = set()
            self._highlight_visible()
        self._show_selection(self.selection.names)

    def on_document(self, doc: GraphDocument | None) -> None:
        self._shown = None
        self._pending = None
        self.refresh()

    def refresh(self) -> None:
        """Show the document's code.  Only the lines that differ from what is shown are
        replaced (setting all 10,000 lines of a big graph's code takes a quarter second);
        code still being generated for a big graph (:mod:`fxstudio.core.edits.catchup`) is shown
        when it is ready, and the old text stays until then."""
        self._refresh_due = False
        doc = self.document
        waiting = doc is not None and not doc.code_ready()
        self._show_waiting(waiting)
        if waiting:
            self.view.setExtraSelections([])  # its lines no longer match the graph
            return
        code = doc.code() if doc is not None else ""
        if self._pending is not None:  # a change arrived while the last one was shown
            self._pending = None
            self._shown = self.view.toPlainText()
            self._coloured = set() if self._coloured is not None else None
        if code != self._shown:
            self._updating = True
            try:
                if not self._replace_changed_lines(self._shown, code):
                    self._set_all(code)
            finally:
                self._updating = False
            if self._pending is not None:  # (the rest comes a chunk per turn)
                self._show_waiting(True)
                return
            self._shown = code
        self._show_selection(self.selection.names)
        self._highlight_visible()

    def _insert_chunk(self) -> None:
        """The next lines of a long change (a chunk per turn of the event loop: a rewrite of
        a big graph changes thousands of lines, a tenth of a second to insert at once)."""
        pending = self._pending
        if pending is None:
            return
        position, lines, code = pending
        chunk, rest = lines[:CHUNK_LINES], lines[CHUNK_LINES:]
        text = "".join(line + "\n" for line in chunk)
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(position)
        self._updating = self._colouring = True
        try:
            cursor.insertText(text)
        finally:
            self._updating = self._colouring = False
        if rest:
            self._pending = (position + len(text), rest, code)
            QTimer.singleShot(1, self._insert_chunk)
            return
        self._pending = None
        self._shown = code
        if self._coloured is not None:
            self._coloured = set()
        self._show_waiting(False)
        self._show_selection(self.selection.names)
        self._highlight_visible()

    def _show_waiting(self, waiting: bool) -> None:
        """Say in the dock's title that newer code is coming."""
        self.dock.setWindowTitle(self.title + WAITING if waiting else self.title)

    def _set_all(self, code: str) -> None:
        long_code = code.count("\n") > HIGHLIGHT_ALL_BELOW
        self._coloured = set() if long_code else None
        self._highlighter.setDocument(None if long_code else self.view.document())
        self.view.setPlainText(code)

    def _replace_changed_lines(self, old: str | None, new: str) -> bool:
        """Replace the lines between the common first and last lines; False when the whole
        text should be set instead."""
        if not old or not new.endswith("\n") or not old.endswith("\n"):
            return False
        if (new.count("\n") > HIGHLIGHT_ALL_BELOW) != (self._coloured is not None):
            return False  # the other way of colouring
        a, b = old.split("\n"), new.split("\n")
        n = min(len(a), len(b))
        first = 0
        while first < n and a[first] == b[first]:
            first += 1
        same_end = 0
        while same_end < n - first and a[-1 - same_end] == b[-1 - same_end]:
            same_end += 1
        # Both end with a newline, so the common end holds at least the last, empty line.
        start = sum(len(line) + 1 for line in a[:first])
        end = len(old) - sum(len(line) + 1 for line in a[len(a) - same_end :]) + 1
        cursor = QTextCursor(self.view.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        middle = b[first : len(b) - same_end]
        if len(middle) > CHUNK_LINES:  # the old lines go now, the new ones a chunk a turn
            self._colouring = True
            try:
                cursor.removeSelectedText()
            finally:
                self._colouring = False
            self._pending = (start, middle, new)
            QTimer.singleShot(1, self._insert_chunk)
            return True
        self._colouring = True  # not while the blocks are renumbered
        try:
            cursor.insertText("".join(line + "\n" for line in middle))
        finally:
            self._colouring = False
        if self._coloured is not None:
            # Lines after the change moved by ``shift``; the new lines, and the block where
            # they end (which may hold a replaced line's colours), are coloured again.
            old_end, new_end, shift = len(a) - same_end, len(b) - same_end, len(b) - len(a)
            self._coloured = {k for k in self._coloured if k < first} | {
                k + shift for k in self._coloured if k >= old_end and k + shift > new_end
            }
        return True

    def _highlight_visible(self) -> None:
        """Colour the lines on screen (and a screenful either side) not coloured yet."""
        coloured = self._coloured
        if coloured is None or self._colouring or not isValid(self.view):
            return  # (not valid: the window closing, the view gone before its signals)
        self._colouring = True
        try:
            self._colour_around(coloured)
        finally:
            self._colouring = False

    def _colour_around(self, coloured: set[int]) -> None:
        block = self.view.firstVisibleBlock()
        page = max(self.view.viewport().height() // max(self.view.fontMetrics().height(), 1), 20)
        first = max(block.blockNumber() - page, 0)
        block = self.view.document().findBlockByNumber(first)
        for _ in range(3 * page):
            if not block.isValid():
                break
            number = block.blockNumber()
            if number not in coloured:
                coloured.add(number)
                self._highlighter.colour_block(block)
            block = block.next()

    def on_change(self, event: DocumentEvent) -> None:
        if event.kind is not ChangeKind.VIEW_CHANGED:
            self._refresh_due = True  # (the lines shown are not the graph's until then)
            self.session.soon(self.refresh)

    def line_of(self, name: str) -> int | None:
        doc = self.document
        behind = self._pending is not None or self._refresh_due
        if doc is None or not doc.code_ready() or behind:
            return None  # the code shown is being brought up to date
        return doc.code_line_map().get(name)

    def _on_cursor_moved(self) -> None:
        if self._updating or self._refresh_due or self.document is None:
            return
        if not self.document.code_ready():
            return
        line = self.view.textCursor().blockNumber() + 1
        name = self.document.node_at_line(line)
        if name is not None and self.selection.current != name:
            self.selection.select([name])

    def _show_selection(self, names: list[str]) -> None:
        extra = []
        color = QColor(theme.colors().code_line)
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
