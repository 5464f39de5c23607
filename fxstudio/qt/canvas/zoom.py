"""The canvas's zoom as the user reads it -- "75 %" -- in the status bar: updated on every
zoom, fit and first view; a click sets it back to 100 %.  It shows while the canvas does
(not over the welcome page)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QToolButton, QWidget

from fxstudio.qt.canvas.view import CanvasView


def zoom_text(scale: float) -> str:
    """``0.75`` -> ``"75 %"``; below 10 % one decimal (``"4.5 %"``)."""
    percent = scale * 100
    return f"{percent:.1f} %" if percent < 9.95 else f"{percent:.0f} %"


class ZoomWidget(QToolButton):
    """A flat button saying ``view``'s zoom; clicking it resets the zoom to 100 %."""

    def __init__(self, view: CanvasView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.view = view
        self.setObjectName("zoomButton")
        self.setAutoRaise(True)
        self.setToolTip("Zoom of the canvas — click for 100 % (Ctrl+0)")
        self.setAccessibleName("Zoom")
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("000.0 %") + 12)
        self.clicked.connect(view.actual_size)
        view.viewChanged.connect(self.refresh)
        view.installEventFilter(self)
        self.refresh()
        self.setVisible(view.isVisible())

    def refresh(self) -> None:
        text = zoom_text(self.view.transform().m11())
        if text != self.text():
            self.setText(text)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.view and event.type() in (QEvent.Type.Show, QEvent.Type.Hide):
            self.setVisible(event.type() == QEvent.Type.Show)
            self.refresh()
        return False
