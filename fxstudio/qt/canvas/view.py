"""The view of the canvas: zoom with the wheel or +/-, pan by dragging the background or with
the middle button; far out it draws the scene's overview instead of its items.  Over
either it writes the heat's shares (:mod:`~fxstudio.qt.canvas.heat`) at the screen's size."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, Qt, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QWidget

from fxstudio.qt.canvas.scene import GraphScene
from fxstudio.qt.canvas.tools import RubberBandTool


def _content(scene: QGraphicsScene) -> QRectF:
    return scene.content_rect() if isinstance(scene, GraphScene) else scene.itemsBoundingRect()


class CanvasView(QGraphicsView):
    """Zoom with the wheel or +/-, pan by dragging the background or with the middle button,
    Shift+drag a box to select what it touches."""

    ZOOM_STEP = 1.2
    OVERVIEW_SCALE = 0.2  # below this zoom the scene is drawn by its Overview, not its items
    viewChanged = Signal()  # noqa: N815 - scrolled, zoomed or resized
    scrolled = Signal()  # scrolled or zoomed, not as a resize or a first view moved it
    menuAsked = Signal(QPointF, QPoint)  # noqa: N815 - right-click: (scene point, screen point)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState)
        self._pan_from: QPointF | None = None
        self._settling = False  # resized, or showing a new graph: not scrolled by anyone
        self.band = RubberBandTool(self)

    def zoom(self, factor: float) -> None:
        scale = self.transform().m11() * factor
        if 0.02 <= scale <= 8:
            self.scale(factor, factor)
            self._moved()

    def zoom_in(self) -> None:
        self.zoom(self.ZOOM_STEP)

    def zoom_out(self) -> None:
        self.zoom(1 / self.ZOOM_STEP)

    def actual_size(self) -> None:
        self.resetTransform()
        self._moved()

    def fit(self) -> None:
        """Show the whole graph (never magnified past 150%)."""
        if self.scene() is not None:
            rect = _content(self.scene()).adjusted(-20, -20, 20, 20)
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
            if self.transform().m11() > 1.5:
                self.resetTransform()
                self.scale(1.5, 1.5)
            self._moved()

    def show_part(self, rect: QRectF) -> None:
        """Show ``rect`` (a group just expanded) as :meth:`first_view` shows a graph: all
        of it if that stays readable (never magnified past the zoom now), else its top at a
        readable zoom."""
        viewport = self.viewport().rect()
        if rect.isEmpty() or viewport.isEmpty():
            return
        zoom = self.transform().m11()
        fit = 0.95 * min(viewport.width() / rect.width(), viewport.height() / rect.height())
        scale = min(zoom, fit, 1.5) if fit >= 0.6 else min(zoom, 0.85)
        self.resetTransform()
        self.scale(scale, scale)
        if fit >= 0.6:
            self.centerOn(rect.center())
        else:
            self.centerOn(rect.center().x(), rect.top() + viewport.height() / 2 / scale - 10)
        self._moved()

    def first_view(self) -> None:
        """The view of a freshly opened graph: all of it if that stays readable, else its top
        at a readable zoom (a deep model is a tall, thin picture)."""
        self._settling = True
        try:
            self._first_view()
        finally:
            self._settling = False

    def _first_view(self) -> None:
        self.fit()
        if self.transform().m11() < 0.6 and self.scene() is not None:
            self.resetTransform()
            self.scale(0.85, 0.85)
            rect = _content(self.scene())
            self.centerOn(rect.center().x(), rect.top() + self.viewport().height() / 2 / 0.85)
            self.viewChanged.emit()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        scene = self.scene()
        if not isinstance(scene, GraphScene) or self.transform().m11() >= self.OVERVIEW_SCALE:
            super().paintEvent(event)
            return
        painter = QPainter(self.viewport())
        painter.fillRect(event.rect(), scene.backgroundBrush())
        painter.setTransform(self.viewportTransform())
        area = self.mapToScene(event.rect()).boundingRect()
        scene.overview().draw(painter, area)
        heat = getattr(scene, "heat", None)
        if heat is not None:
            heat.paint_far(painter, area)
            painter.resetTransform()
            heat.paint_tags(painter, self)
        painter.end()

    def drawForeground(self, painter: QPainter, rect: QRectF | QRect) -> None:  # noqa: N802
        """The heat's shares, written at the screen's size over the items."""
        heat = getattr(self.scene(), "heat", None)
        if heat is not None:
            painter.save()
            painter.resetTransform()
            heat.paint_tags(painter, self)
            painter.restore()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802
        super().scrollContentsBy(dx, dy)
        self._moved()

    def _moved(self) -> None:
        self.viewChanged.emit()
        if not self._settling:
            self.scrolled.emit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        self._settling = True
        try:
            super().resizeEvent(event)
        finally:
            self._settling = False
        self.viewChanged.emit()

    def viewportEvent(self, event: QEvent) -> bool:  # noqa: N802
        if event.type() != QEvent.Type.Resize:  # (a scroll bar came or went)
            return super().viewportEvent(event)
        self._settling = True
        try:
            return super().viewportEvent(event)
        finally:
            self._settling = False

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802
        self.menuAsked.emit(self.mapToScene(event.pos()), event.globalPos())
        event.accept()

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        delta = event.angleDelta().y()
        if delta:
            self.zoom(self.ZOOM_STEP if delta > 0 else 1 / self.ZOOM_STEP)
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.MiddleButton:
            self._pan_from = event.position()
            event.accept()
            return
        self.band.press(event)
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - int(delta.x()))
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - int(delta.y()))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.MiddleButton:
            self._pan_from = None
            event.accept()
            return
        super().mouseReleaseEvent(event)
        self.band.release(event)
