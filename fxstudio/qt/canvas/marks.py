"""Outlines over the canvas: pattern boxes, matches, a near miss and its culprit.

Marks are overlay items above the node items, drawn from names (rule 3): after a relayout
the scene is new, and :meth:`PatternMarks.redraw` draws the same marks on it.
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from typing import Any

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import (
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
)
from shiboken6 import isValid

from fxstudio.qt.canvas.items import BoxItem


def take_off(items: list[Any]) -> None:
    """Take overlay items off their scene -- skipping those already deleted with the node
    item they were drawn on (a scene torn down, the document replaced, before the marks
    were drawn again)."""
    for item in items:
        if isValid(item) and item.scene() is not None:
            item.scene().removeItem(item)


def outline_on(
    owner: BoxItem, colour: QColor, margin: float, width: float, alpha: int, tip: str
) -> QGraphicsRectItem:
    """A box ``margin`` around a node or module item, a child of it (it follows a drag):
    ``width`` of pen, tinted with ``alpha`` of ``colour``, the owner's tooltip and ``tip``."""
    box = QGraphicsRectItem(owner.rect.adjusted(-margin, -margin, margin, margin), owner)
    box.setPen(QPen(colour, width))
    tint = QColor(colour)
    tint.setAlpha(alpha)
    box.setBrush(QBrush(tint))
    box.setZValue(6)
    box.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
    box.setToolTip(f"{owner.toolTip()}\n\n{tip}")
    return box


def collapsed_holding(
    scene: QGraphicsScene, names: Container[str]
) -> Iterator[tuple[BoxItem, list[str]]]:
    """Each collapsed module's item on ``scene`` with the nodes of ``names`` inside it (at
    any depth; maybe none)."""
    tree = getattr(scene, "tree", {})
    for path, group in getattr(scene, "groups", {}).items():
        if group.collapsed and path in tree:
            yield group, [n for g in tree[path].walk() for n in g.nodes if n in names]


MATCH_COLOURS = ("#2e7d32", "#1565c0", "#6a1b9a", "#00838f", "#ef6c00", "#ad1457")
MISS = QColor("#f9a825")
CULPRIT = QColor("#c62828")
BOX = QColor("#5d4037")


class PatternMarks:
    """What the Patterns dock wants outlined, by node name."""

    def __init__(self) -> None:
        self.boxes: list[tuple[str, list[str]]] = []  # (pattern name, nodes)
        self.matches: list[list[str]] = []
        self.current: int | None = None  # the match being looked at
        self.partial: list[str] = []
        self.culprit: str | None = None
        self._items: list[QGraphicsRectItem | QGraphicsSimpleTextItem] = []
        self.scene: QGraphicsScene | None = None

    def clear(self) -> None:
        self.boxes, self.matches, self.partial = [], [], []
        self.current = self.culprit = None

    def redraw(self, scene: QGraphicsScene | None) -> None:
        take_off(self._items)
        self._items = []
        self.scene = scene
        if scene is None:
            return
        for i, names in enumerate(self.matches):
            colour = QColor(MATCH_COLOURS[i % len(MATCH_COLOURS)])
            width = 4.0 if i == self.current else 2.5
            for name in names:
                self._outline(name, colour, width, fill=30 if i == self.current else 14)
        for name in self.partial:
            self._outline(name, MISS, 3.0, fill=26, dash=True)
        if self.culprit:
            self._outline(self.culprit, CULPRIT, 4.0, fill=40)
        for title, names in self.boxes:
            if any(self._node_rect(n) is None for n in names):
                continue  # a box whose nodes a rewrite replaced (undo brings it back)
            rect = self._union(names)
            if rect is None:
                continue
            item = QGraphicsRectItem(rect.adjusted(-14, -14, 14, 14))
            pen = QPen(BOX, 2.0, Qt.PenStyle.DashLine)
            item.setPen(pen)
            item.setBrush(QBrush(Qt.BrushStyle.NoBrush))
            item.setZValue(40)
            scene.addItem(item)
            label = QGraphicsSimpleTextItem(title)
            label.setBrush(BOX)
            label.setPos(rect.left() - 12, rect.top() - 36)
            label.setZValue(41)
            scene.addItem(label)
            self._items += [item, label]

    def _node_rect(self, name: str) -> QRectF | None:
        item = getattr(self.scene, "nodes", {}).get(name)
        return item.sceneBoundingRect() if item is not None else None

    def _union(self, names: list[str]) -> QRectF | None:
        rects = [r for n in names if (r := self._node_rect(n)) is not None]
        if not rects:
            return None
        out = rects[0]
        for r in rects[1:]:
            out = out.united(r)
        return out

    def _outline(
        self, name: str, colour: QColor, width: float, fill: int, dash: bool = False
    ) -> None:
        rect = self._node_rect(name)
        if rect is None or self.scene is None:
            return
        item = QGraphicsRectItem(rect.adjusted(-5, -5, 5, 5))
        pen = QPen(colour, width, Qt.PenStyle.DashLine if dash else Qt.PenStyle.SolidLine)
        item.setPen(pen)
        tint = QColor(colour)
        tint.setAlpha(fill)
        item.setBrush(QBrush(tint))
        item.setZValue(50)
        item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.scene.addItem(item)
        self._items.append(item)


#: How a comparison colours a node: only on the left, only on the right, changed.
DIFF_COLOURS = {
    "removed": QColor("#c62828"),
    "added": QColor("#2e7d32"),
    "changed": QColor("#ef8f00"),
}
_WORST = ("changed", "added", "removed")  # a collapsed module takes the first its nodes have


class DiffMarks:
    """A comparison's marks on one side, by node name: removed (red), added (green), changed
    (amber).  Each outline is a child of its node's item (it follows a drag); a collapsed
    module holding marked nodes is outlined in the colour of the first of :data:`_WORST`
    they have, with their count."""

    def __init__(self) -> None:
        self.status: dict[str, str] = {}  # node name -> removed / added / changed
        self.current: set[str] = set()  # the difference being looked at: drawn thicker
        self.items: list[QGraphicsRectItem] = []

    def redraw(self, scene: QGraphicsScene | None) -> None:
        take_off(self.items)
        self.items = []
        if scene is None:
            return
        nodes = getattr(scene, "nodes", {})
        for name, status in self.status.items():
            item = nodes.get(name)
            if item is not None:
                self._mark(item, DIFF_COLOURS[status], name in self.current, status)
        for group, names in collapsed_holding(scene, self.status):
            inside = [self.status[n] for n in names]
            if inside:
                worst = next(s for s in _WORST if s in inside)
                tip = f"{len(inside)} nodes inside differ ({', '.join(sorted(set(inside)))})"
                self._mark(group, DIFF_COLOURS[worst], False, tip)

    def _mark(self, owner: BoxItem, colour: QColor, current: bool, tip: str) -> None:
        pen, alpha = (5.0, 70) if current else (3.0, 35)
        self.items.append(outline_on(owner, colour, 5, pen, alpha, tip))


class KernelMarks:
    """The compiled model's kernels on the canvas, by node name: every node of a kernel that
    fused several is outlined in that kernel's colour, with the kernel's name and time on its
    tooltip; the kernel being looked at is drawn thicker and tinted.  Outlines are children
    of their node items (they follow a drag); a collapsed module holding picked nodes is
    outlined too."""

    def __init__(self) -> None:
        self.groups: list[tuple[str, tuple[str, ...], str]] = []  # (kernel, nodes, tooltip)
        self.current: int | None = None  # index into groups
        self.items: list[QGraphicsRectItem] = []

    def redraw(self, scene: QGraphicsScene | None) -> None:
        take_off(self.items)
        self.items = []
        if scene is None:
            return
        nodes = getattr(scene, "nodes", {})
        drawn: set[str] = set()
        order = [i for i in range(len(self.groups)) if i != self.current]
        for i in ([self.current] if self.current is not None else []) + order:
            _, names, tip = self.groups[i]
            if len(names) < 2 and i != self.current:
                continue  # a kernel of one node is no fused group
            colour = QColor(MATCH_COLOURS[i % len(MATCH_COLOURS)])
            for name in names:
                item = nodes.get(name)
                if item is not None and name not in drawn:
                    drawn.add(name)
                    self._mark(item, colour, i == self.current, tip)
        if self.current is None:
            return
        colour = QColor(MATCH_COLOURS[self.current % len(MATCH_COLOURS)])
        for group, inside in collapsed_holding(scene, set(self.groups[self.current][1])):
            if inside:
                self._mark(group, colour, True, f"{len(inside)} nodes of the kernel inside")

    def _mark(self, owner: BoxItem, colour: QColor, current: bool, tip: str) -> None:
        pen, alpha = (4.0, 60) if current else (2.0, 0)
        self.items.append(outline_on(owner, colour, 4, pen, alpha, tip))
