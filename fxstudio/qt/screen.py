"""Windows that fit the screen they open on: a geometry restored from a bigger screen, or a
window's own size, is clamped to the screen's available area (less the task bar and
panels), so no button ends up off-screen."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

FRAME = (16, 40)  # room for a window's borders and title bar before it is shown


def fit_to_screen(widget: QWidget, width: int = 0, height: int = 0) -> QRect:
    """Resize the top-level ``widget`` to ``width`` x ``height`` (0: as it is) but no
    larger than its screen's available geometry, and move it inside; its geometry."""
    screen = widget.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return widget.geometry()
    area = screen.availableGeometry()
    frame, inner = widget.frameGeometry(), widget.geometry()
    # The title bar and borders: known once the window is shown, else room for them.
    extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
    if not widget.isVisible():
        extra_w, extra_h = max(extra_w, FRAME[0]), max(extra_h, FRAME[1])
    w = min(width or widget.width(), area.width() - extra_w)
    h = min(height or widget.height(), area.height() - extra_h)
    widget.resize(max(w, widget.minimumWidth()), max(h, widget.minimumHeight()))
    x = min(max(frame.x(), area.left()), area.right() + 1 - w - extra_w)
    y = min(max(frame.y(), area.top()), area.bottom() + 1 - h - extra_h)
    if (x, y) != (frame.x(), frame.y()):
        widget.move(max(x, area.left()), max(y, area.top()))
    return widget.geometry()
