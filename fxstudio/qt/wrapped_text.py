"""Long values in a tree or table column shown whole: wrapped at word boundaries (and after
``/``, ``.`` and ``,`` in a long path or name), the row as tall as its lines -- never cut.

Qt's own ``wordWrap`` does not do it in a tree: the default delegate sizes a row for one
line, so a long value is elided within it, and it breaks a word that does not fit anywhere.
:class:`WrappingDelegate` lays each value out itself, at the column's width, and the view
lays its rows out again when the column is resized.

Example::

    tree.setItemDelegateForColumn(1, WrappingDelegate(tree, column=1))
"""

from __future__ import annotations

import re

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt, QTimer
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QPainter,
    QPalette,
    QTextDocument,
    QTextOption,
)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTreeView

ZWSP = "\u200b"  # a place a line may break, drawn as nothing
_BREAKS = re.compile(r"(?<=[/.,:])(?=[^\s/.,:])")
Index = QModelIndex | QPersistentModelIndex


def breakable(text: str) -> str:
    """``text`` with a place to break after each ``/``, ``.``, ``,`` and ``:`` inside a
    word (a path, a dotted name), so that only such a word longer than the line is broken."""
    return _BREAKS.sub(ZWSP, text)


def wrapped(text: str, font, width: int) -> QTextDocument:
    """``text`` laid out in ``font`` at ``width`` pixels: at word boundaries, and anywhere
    only inside a word longer than the whole width."""
    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setDefaultFont(font)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    doc.setDefaultTextOption(option)
    doc.setPlainText(breakable(text))
    doc.setTextWidth(max(1, width))
    return doc


def shown_lines(doc: QTextDocument) -> list[str]:
    """The lines ``doc`` shows, as text (without the break marks)."""
    lines = []
    doc.size()  # (lays it out)
    block = doc.begin()
    while block.isValid():
        layout, text = block.layout(), block.text()
        for i in range(layout.lineCount()):
            line = layout.lineAt(i)
            lines.append(text[line.textStart() : line.textStart() + line.textLength()])
        block = block.next()
    return [line.replace(ZWSP, "") for line in lines]


class WrappingDelegate(QStyledItemDelegate):
    """Draws ``column``'s text wrapped to the column's width; rows grow to fit it."""

    PAD = 4  # pixels left and right of the text, as the style's item text margin

    def __init__(self, view: QTreeView, column: int) -> None:
        super().__init__(view)
        self.view, self.column = view, column
        self._relayout = QTimer(self)
        self._relayout.setSingleShot(True)
        self._relayout.setInterval(0)
        self._relayout.timeout.connect(view.doItemsLayout)
        view.header().sectionResized.connect(self._resized)

    def _resized(self, section: int, _old: int, _new: int) -> None:
        if section == self.column:
            self._relayout.start()  # (once for a drag's many resizes)

    def text_width(self) -> int:
        return self.view.header().sectionSize(self.column) - 2 * self.PAD

    def layout_of(self, option: QStyleOptionViewItem, index: Index) -> QTextDocument:
        return wrapped(
            str(index.data(Qt.ItemDataRole.DisplayRole) or ""), option.font, self.text_width()
        )

    def lines(self, index: Index) -> list[str]:
        """The lines ``index``'s text is shown in, at the column's width now."""
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        return shown_lines(wrapped(text, self.view.font(), self.text_width()))

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:  # noqa: N802
        hint = super().sizeHint(option, index)
        doc = self.layout_of(option, index)
        return QSize(hint.width(), max(hint.height(), int(doc.size().height()) + 4))

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text, opt.text = opt.text, ""  # the style draws the background and selection
        style = opt.widget.style() if opt.widget is not None else None
        if style is None:
            return
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        doc = wrapped(text, opt.font, opt.rect.width() - 2 * self.PAD)
        context = QAbstractTextDocumentLayout.PaintContext()
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context.palette.setColor(QPalette.ColorRole.Text, opt.palette.color(role))
        painter.save()
        painter.translate(opt.rect.left() + self.PAD, opt.rect.top() + 2)
        doc.documentLayout().draw(painter, context)
        painter.restore()


def wrap_column(view: QTreeView, column: int) -> WrappingDelegate:
    """Show ``view``'s ``column`` wrapped (see :class:`WrappingDelegate`)."""
    view.setTextElideMode(Qt.TextElideMode.ElideNone)
    view.setUniformRowHeights(False)
    delegate = WrappingDelegate(view, column)
    view.setItemDelegateForColumn(column, delegate)
    return delegate
