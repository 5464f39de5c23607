"""The overview in the canvas corner: the whole graph small, the visible area as a frame.

Click or drag in it to move the view there.  The picture is drawn from the boxes the canvas
keeps for its far-out drawing (no item painting), after each layout, move or edit; between
those, scrolling and zooming only move the frame.  A graph much taller than wide (a deep
model) is shown at a readable width, squeezed more from top to bottom, and the map scrolls
with the view as an editor's minimap does, drawing the band around what the view shows.

The map takes at most a fifth of the view's width and a third of its height; it is not
shown while the view shows the whole graph (nothing to find), and it moves to another
corner of the view -- or out of sight -- rather than cover a selected node.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, QPointF, QRect, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QWidget

from fxstudio.qt import theme
from fxstudio.qt.canvas.items import BoxItem
from fxstudio.qt.canvas.scene import GraphScene
from fxstudio.qt.canvas.view import CanvasView


class Minimap(QWidget):
    MAX_W, MAX_H, MIN_W = 180, 220, 90  # at most, in a big view
    VIEW_W, VIEW_H = 0.2, 0.34  # at most these parts of the view's width and height
    MARGIN = 10
    BAND = 1200  # rows of the picture drawn at a time
    AVOID_AT_MOST = 200  # selected boxes the map keeps clear of (a box selection can be huge)
    TALL_SY = 0.04  # a tall graph's map: 220 rows show 5,500 scene units (about 90 nodes)

    def __init__(self, view: CanvasView) -> None:
        super().__init__(view)
        self.setObjectName("minimap")
        self.view = view
        self.image: QImage | None = None
        self.sx = self.sy = 1.0  # image pixels per scene unit, across and down
        self.origin = QPointF()  # scene point drawn at the image's (0, 0)
        self.offset = 0.0  # image rows scrolled out of sight (tall graphs)
        self.full_height = 0  # rows of the whole picture; self.image holds some of them
        self.band_top = 0  # the picture's row at the image's first row
        self.band_rows = 0  # how many rows of the picture the image holds
        self.enabled = True  # View ▸ Overview map
        self.limits = (0, 0, 0)  # (max width, max height, min width) the picture was made for
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Overview — click or drag to move the view")
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self.refresh)
        view.viewChanged.connect(self._view_changed)
        self.hide()

    def schedule_refresh(self) -> None:
        """Redraw the picture soon (several moves in a row make one redraw)."""
        self._timer.start()

    def set_enabled(self, on: bool) -> None:
        self.enabled = on
        if on:
            self.refresh()
        else:
            self.hide()

    def view_limits(self) -> tuple[int, int, int]:
        """The map's largest width and height and its smallest width in this view."""
        viewport = self.view.viewport()
        max_w = max(min(self.MAX_W, int(viewport.width() * self.VIEW_W)), 40)
        max_h = max(min(self.MAX_H, int(viewport.height() * self.VIEW_H)), 40)
        return max_w, max_h, min(self.MIN_W, max_w)

    def refresh(self) -> None:
        scene = self.view.scene()
        if not isinstance(scene, GraphScene) or not (scene.nodes or scene.groups):
            self.image, self.full_height = None, 0
            self.hide()
            return
        self.limits = max_w, max_h, min_w = self.view_limits()
        rect = scene.content_rect()
        w, h = max(rect.width(), 1.0), max(rect.height(), 1.0)
        self.sx = self.sy = min(max_w / w, max_h / h)
        if w * self.sx < min_w:
            # Tall and thin (a deep model): a readable width, squeezed more from top to bottom
            # so that the map shows far more than the view; it scrolls with the view.
            self.sx = min_w / w
            self.sy = max(max_h / h, min(self.sx, self.TALL_SY))
        self.origin = rect.topLeft()
        self.full_height = max(int(h * self.sy), 1)
        self.image = None  # drawn by _view_changed, around what the view shows
        self.resize(max(int(w * self.sx), 1), min(self.full_height, max_h))
        self._view_changed()

    def _draw_band(self, top: int) -> None:
        """Draw image rows ``top`` .. ``top + BAND`` (all of a picture no taller than that):
        a 10,000-node chain is 300,000 rows tall at a readable width."""
        scene = self.view.scene()
        if not isinstance(scene, GraphScene):
            return
        height = max(min(self.full_height - top, self.BAND), 1)
        width = max(self.width(), 1)
        dpr = max(1.0, self.devicePixelRatioF())  # sharp at 125-200 %: one pixel per device pixel
        image = QImage(round(width * dpr), round(height * dpr), QImage.Format.Format_RGB32)
        image.setDevicePixelRatio(dpr)
        image.fill(QColor(theme.colors().fill))
        area = QRectF(
            self.origin.x(),
            self.origin.y() + top / self.sy,
            width / self.sx,
            height / self.sy,
        )
        overview = scene.overview()  # boxes kept up to date as items move and edits land
        painter = QPainter(image)
        painter.scale(self.sx, self.sy)
        painter.translate(-area.topLeft())
        painter.setPen(QPen(QColor(theme.colors().frame), 0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRects([f for f in overview.frames if f.intersects(area)])
        painter.setPen(Qt.PenStyle.NoPen)
        for colour, rects in overview.boxes_in(area).items():
            painter.setBrush(QColor(colour))
            painter.drawRects(rects)
        painter.end()
        self.image, self.band_top, self.band_rows = image, top, height

    def corners(self) -> list[QRect]:
        """Where the map can go, in the order tried: the view's bottom right, bottom left,
        top right, top left."""
        viewport = self.view.viewport().geometry()  # (in the view: the scroll bars are outside)
        inner = viewport.adjusted(self.MARGIN, self.MARGIN, -self.MARGIN, -self.MARGIN)
        size = self.size()
        rects = []
        for top in (False, True):
            for left in (False, True):
                x = inner.left() if left else inner.right() - size.width() + 1
                y = inner.top() if top else inner.bottom() - size.height() + 1
                rects.append(QRect(QPoint(x, y), size))
        return rects

    def selected_rects(self) -> list[QRect]:
        """Where the selected nodes and boxes are drawn, in the view's coordinates."""
        scene = self.view.scene()
        if scene is None:
            return []
        offset = self.view.viewport().pos()
        items = [i for i in scene.selectedItems() if isinstance(i, BoxItem)][: self.AVOID_AT_MOST]
        return [
            self.view.mapFromScene(item.sceneBoundingRect()).boundingRect().translated(offset)
            for item in items
        ]

    def _place(self) -> bool:
        """Move to the first corner that covers no selected node; False if none does."""
        selected = self.selected_rects()
        for corner in self.corners():
            if not any(corner.intersects(r) for r in selected):
                self.move(corner.topLeft())
                return True
        return False

    def whole_graph_shown(self) -> bool:
        scene = self.view.scene()
        if not isinstance(scene, GraphScene):
            return True
        shown = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        return shown.adjusted(-2, -2, 2, 2).contains(scene.content_rect())

    def reposition(self) -> None:
        """Shown where it covers no selected node, or hidden (the selection changed)."""
        if self.full_height:
            self._view_changed()

    def visible_area(self) -> QRectF:
        """The scene area the view shows, in image coordinates."""
        area = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        return QRectF(
            (area.x() - self.origin.x()) * self.sx,
            (area.y() - self.origin.y()) * self.sy,
            area.width() * self.sx,
            area.height() * self.sy,
        )

    def _view_changed(self) -> None:
        if self.full_height == 0 or not self.enabled:  # no picture
            return
        if self.view_limits() != self.limits:  # the view was resized: a picture to fit it
            self.schedule_refresh()
        if self.whole_graph_shown() or not self._place():
            self.hide()
            return
        self.show()
        # A tall picture scrolls so that the visible area stays in the middle.
        spare = self.full_height - self.height()
        centre = self.visible_area().center().y()
        self.offset = min(max(centre - self.height() / 2, 0.0), float(max(spare, 0)))
        top, shown = self.band_top, self.band_rows if self.image is not None else 0
        if not (top <= self.offset and self.offset + self.height() <= top + shown):
            self._draw_band(max(int(self.offset) - (self.BAND - self.height()) // 2, 0))
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        if self.image is None:
            return
        painter = QPainter(self)
        dpr = self.image.devicePixelRatio()
        source = QRectF(
            0, (int(self.offset) - self.band_top) * dpr, self.image.width(), self.height() * dpr
        )
        painter.drawImage(QRectF(0, 0, self.width(), self.height()), self.image, source)
        painter.setPen(QPen(QColor(theme.colors().selected), 2))
        painter.setBrush(QColor(245, 158, 11, 40))
        painter.drawRect(self.visible_area().translated(0, -self.offset))
        painter.setPen(QPen(QColor(theme.colors().border), 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(self.rect().adjusted(0, 0, -1, -1))

    def scene_point(self, pos: QPointF) -> QPointF:
        return QPointF(
            pos.x() / self.sx + self.origin.x(),
            (pos.y() + self.offset) / self.sy + self.origin.y(),
        )

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        self.view.centerOn(self.scene_point(event.position()))
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.view.centerOn(self.scene_point(event.position()))
        event.accept()
