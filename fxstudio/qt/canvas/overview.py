"""The zoomed-out picture of a scene, drawn without its items (boxes and straight lines in a
few batched calls), and what the overview map draws from."""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem

from fxstudio.qt import theme
from fxstudio.qt.canvas.items import BoxItem, EdgeItem, NodeItem


class Overview:
    """The zoomed-out picture, drawn without the items: coloured boxes and straight edges.

    Far out, a view shows thousands of items, and a Python ``paint`` per item costs more than
    a frame.  This draws the same shapes the items draw at that zoom (boxes without text) in
    a few batched calls, culled to the visible area with arrays.  It is filled as the scene
    makes its items (:meth:`add`, :meth:`add_edge`, a chunk per turn of the event loop) and
    kept up to date item by item (:meth:`moved`, :meth:`select`); the arrays are made when
    it is first drawn after a change of the item list.
    """

    def __init__(self, scene: Any) -> None:  # a GraphScene (which makes it)
        import numpy as np

        self._np = np
        self.scene = scene
        self.frames: list[QRectF] = []
        self.items: list[BoxItem] = []
        self.index: dict[int, int] = {}
        self.boxes: list[QRectF] = []
        self.style: list[tuple[str, str]] = []
        self.extents: list[tuple[float, float, float, float]] = []
        self.selected: set[int] = set()
        self.edges: list[EdgeItem | None] = []
        self.edge_index: dict[int, int] = {}
        self.edges_of: dict[int, list[int]] = {}
        self.lines: list[QLineF] = []
        self.line_extents: list[tuple[float, float, float, float]] = []
        self._arrays: tuple[Any, Any] | None = None  # extents as arrays, once drawn

    def restyle(self) -> None:
        self.style = [_style(i) for i in self.items]

    def add(self, item: BoxItem) -> None:
        """A box drawn far out (a node, or a collapsed group), where it is now."""
        self.index[id(item)] = len(self.items)
        self.items.append(item)
        box = item.rect.translated(item.pos())
        self.boxes.append(box)
        self.style.append(_style(item))
        self.extents.append(_extent(box))
        self._arrays = None

    def forget(self, item: BoxItem) -> None:
        i = self.index.pop(id(item), None)
        if i is not None:
            self._set_extent(i, _NOWHERE)
            self.selected.discard(i)
            self.edges_of.pop(id(item), None)

    def add_edge(self, edge: EdgeItem) -> None:
        j = self.edge_index[id(edge)] = len(self.edges)
        self.edges.append(edge)
        self.edges_of.setdefault(id(edge.source), []).append(j)
        self.edges_of.setdefault(id(edge.target), []).append(j)
        self.lines.append(_line(edge))
        self.line_extents.append(_line_extent(edge))
        self._arrays = None

    def arrays(self) -> tuple[Any, Any]:
        """The boxes' and lines' extents as arrays (made again after items came or went)."""
        if self._arrays is None:
            np = self._np
            boxes = np.array(self.extents or np.zeros((0, 4)), dtype=float).reshape(-1, 4)
            lines = np.array(self.line_extents or np.zeros((0, 4)), dtype=float).reshape(-1, 4)
            self._arrays = (boxes, lines)
        return self._arrays

    def _set_extent(self, i: int, extent: tuple[float, float, float, float]) -> None:
        self.extents[i] = extent
        if self._arrays is not None:
            self._arrays[0][i] = extent

    def _set_line(self, j: int, edge: EdgeItem | None) -> None:
        extent = _line_extent(edge) if edge is not None else _NOWHERE
        if edge is not None:
            self.lines[j] = _line(edge)
        self.line_extents[j] = extent
        if self._arrays is not None:
            self._arrays[1][j] = extent

    def forget_edge(self, edge: EdgeItem) -> None:
        j = self.edge_index.pop(id(edge), None)
        if j is not None:
            self.edges[j] = None
            self._set_line(j, None)

    def edge_moved(self, edge: EdgeItem) -> None:
        j = self.edge_index.get(id(edge))
        if j is not None:
            self._set_line(j, edge)

    def refresh_frames(self) -> None:
        groups = self.scene.groups.values()
        self.frames = [g.rect.translated(g.pos()) for g in groups if not g.collapsed]

    def select(self, items: list[QGraphicsItem]) -> None:
        self.selected = {self.index[id(i)] for i in items if id(i) in self.index}

    def moved(self, item: BoxItem) -> None:
        i = self.index.get(id(item))
        if i is None:
            return
        self.boxes[i] = item.rect.translated(item.pos())
        self._set_extent(i, _extent(self.boxes[i]))
        for j in self.edges_of.get(id(item), ()):
            edge = self.edges[j]
            if edge is not None:
                self._set_line(j, edge)

    def boxes_in(self, area: QRectF) -> dict[str, list[QRectF]]:
        """The boxes that meet ``area``, by border colour."""
        out: dict[str, list[QRectF]] = {}
        for i in self._visible(self.arrays()[0], area):
            out.setdefault(self.style[i][1], []).append(self.boxes[i])
        return out

    def _visible(self, extents, area: QRectF):
        e = extents
        hit = (
            (e[:, 0] <= area.right())
            & (e[:, 2] >= area.left())
            & (e[:, 1] <= area.bottom())
            & (e[:, 3] >= area.top())
        )
        return self._np.flatnonzero(hit)

    def draw(self, painter: QPainter, area: QRectF) -> None:
        c = theme.colors()
        painter.setPen(QPen(QColor(c.frame), 0, Qt.PenStyle.DashLine))
        painter.setBrush(QColor(*c.frame_fill))
        painter.drawRects([f for f in self.frames if f.intersects(area)])
        painter.setPen(QPen(QColor(c.edge), 0))
        boxes, lines = self.arrays()
        painter.drawLines([self.lines[i] for i in self._visible(lines, area)])
        groups: dict[tuple[str, str], list[QRectF]] = {}
        chosen: list[QRectF] = []
        for i in self._visible(boxes, area):
            (chosen if i in self.selected else groups.setdefault(self.style[i], [])).append(
                self.boxes[i]
            )
        for (fill, border), rects in groups.items():
            painter.setPen(QPen(QColor(border), 0))
            painter.setBrush(QColor(fill))
            painter.drawRects(rects)
        if chosen:
            painter.setPen(QPen(QColor(c.selected), 0))
            painter.setBrush(QColor(c.selected))
            painter.drawRects(chosen)


_NOWHERE = (math.inf, math.inf, -math.inf, -math.inf)  # an extent no area meets


def _style(item: BoxItem) -> tuple[str, str]:
    """(fill, border) of a box far out: a node's op colours, or a collapsed group's."""
    c = theme.colors()
    if isinstance(item, NodeItem):
        return c.fills.get(item.op, c.fill), c.borders.get(item.op, c.border)
    return c.group_fill, c.group_border


def _extent(r: QRectF) -> tuple[float, float, float, float]:
    return (r.left(), r.top(), r.right(), r.bottom())


def _line(edge: EdgeItem) -> QLineF:
    return QLineF(*edge.ends)


def _line_extent(edge: EdgeItem) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = edge.ends
    return (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
