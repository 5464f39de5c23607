"""Sizes of result areas in rows and lines of their own font, and a scroll area that gives
its widget the height it needs at least -- not the height it would like.

A ``QScrollArea`` whose widget holds a word-wrapped label sizes that widget to its
*preferred* height for the width (height-for-width), so a dock full of lists and editors
scrolled what would have fitted (the Patterns dock's Find button sat below the fold at
1400x860).  :class:`FittingScrollArea` fits the widget to the viewport, scrolling only what
cannot be shrunk further.  :class:`LinesLabel` keeps room for every line of its wrapped
text where a splitter would cut it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QWidget,
)


def rows_height(view: QAbstractItemView, rows: int) -> int:
    """The height that shows ``rows`` rows of ``view`` whole (with its header, if any)."""
    row = view.sizeHintForRow(0) if view.model() and view.model().rowCount() else -1
    if row <= 0:
        row = view.fontMetrics().height() + 6
    header = getattr(view, "horizontalHeader", None) or getattr(view, "header", None)
    head = header().sizeHint().height() if header is not None and header().isVisible() else 0
    return rows * row + head + 2 * view.frameWidth()


def lines_height(edit: QPlainTextEdit | QFrame, lines: int) -> int:
    """The height that shows ``lines`` lines of ``edit``'s font."""
    margins = edit.contentsMargins()
    doc = getattr(edit, "document", None)
    pad = int(2 * doc().documentMargin()) if doc is not None else 0
    spacing = edit.fontMetrics().lineSpacing()
    return lines * spacing + pad + margins.top() + margins.bottom() + 2 * edit.frameWidth()


class FittingScrollArea(QScrollArea):
    """A vertical scroll area whose widget is as wide as the viewport and as tall as the
    viewport or its minimum height, whichever is more."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(False)
        self.setFrameShape(QFrame.Shape.NoFrame)

    def set_fitted(self, widget: QWidget) -> None:
        """Show ``widget``, fitted again whenever its layout changes."""
        self.setWidget(widget)
        widget.installEventFilter(self)
        self.fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.fit()
        return super().eventFilter(watched, event)

    def fit(self) -> None:
        widget = self.widget()
        if widget is None:
            return
        size = self.viewport().size()
        need = widget.minimumSizeHint().expandedTo(widget.minimumSize()).height()
        layout = widget.layout()
        if layout is not None and layout.hasHeightForWidth():  # wrapped lines: at this width
            need = max(need, layout.minimumHeightForWidth(size.width()))
        widget.resize(size.width(), max(size.height(), need))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.fit()


class LinesLabel(QLabel):
    """A wrapping label, its text selectable, whose least height is that of its lines at its
    width: a splitter (and the layouts in it) asks a label no height for its width, so a
    long summary in a narrow dock was cut off after its first lines."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def setText(self, text: str) -> None:  # noqa: N802
        super().setText(text)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """(QLabel's own height for a width is never less than its least height: measured.)"""
        margins = self.contentsMargins()
        width = self.width() - margins.left() - margins.right() - 2 * self.margin()
        if width <= 0:
            return
        lines = self.fontMetrics().boundingRect(
            QRect(0, 0, width, 0), int(Qt.TextFlag.TextWordWrap), self.text()
        )
        height = lines.height() + margins.top() + margins.bottom() + 2 * self.margin()
        if height != self.minimumHeight():
            self.setMinimumHeight(height)
