"""The heat overlay: each node tinted by its share of the profiled time (pale yellow → red),
its share written beside it; a collapsed module by the sum of the nodes inside it.

The marks are child items of the node (or group) items, so they move when a node is
dragged, and are drawn again from names after a relayout (rule 3).  Times measured on another
version of the graph (before the last edit) are drawn grey, dashed, and say so.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
)

from fxstudio.core.runtime.breakdown import NodeProfile

COOL = QColor("#fff3b0")
HOT = QColor("#d7191c")
STALE = QColor("#8c8c8c")
#: What a stale mark says when the pointer is on it.
STALE_TIP = (
    "This time was measured on the graph before its last change: it is not of the graph "
    "as it is now. Run again to time it."
)


def heat_colour(level: float) -> QColor:
    """0 → pale yellow, 1 → red (``level``: a share relative to the hottest node)."""
    t = max(0.0, min(1.0, level))
    mix = [int(a + (b - a) * t) for a, b in zip(COOL.getRgb()[:3], HOT.getRgb()[:3], strict=True)]
    return QColor(*mix)


class HeatMarks:
    """What the overlay shows: shares by node name and by collapsed module path."""

    def __init__(self) -> None:
        self.nodes: dict[str, float] = {}
        self.modules: dict[str, float] = {}
        self.visible = True
        self.stale = False  # measured on another version of the graph
        self._items: list[QGraphicsItem] = []

    def set_profile(self, profile: NodeProfile | None) -> None:
        if profile is None:
            self.nodes, self.modules = {}, {}
            return
        self.nodes = {n.name: n.share for n in profile.nodes}
        self.modules = {m.path: m.share for m in profile.modules if m.path}

    def redraw(self, scene: QGraphicsScene | None) -> None:
        for item in self._items:
            if item.scene() is not None:
                item.scene().removeItem(item)
        self._items = []
        if scene is None or not self.visible or not self.nodes:
            return
        top = max([*self.nodes.values(), *self.modules.values(), 1e-12])
        for name, share in self.nodes.items():
            item = getattr(scene, "nodes", {}).get(name)
            if item is not None:
                self._mark(item, share, top)
        for path, group in getattr(scene, "groups", {}).items():
            if group.collapsed and path in self.modules:
                self._mark(group, self.modules[path], top)

    def _mark(self, owner: QGraphicsItem, share: float, top: float) -> None:
        colour = STALE if self.stale else heat_colour(share / top)
        rect = owner.rect.adjusted(-4, -4, 4, 4)  # type: ignore[attr-defined]
        tint = QColor(colour)
        tint.setAlpha(50 if self.stale else 120)
        box = QGraphicsRectItem(rect, owner)
        pen = QPen(colour.darker(115), 3.0)
        if self.stale:
            pen.setStyle(Qt.PenStyle.DashLine)
            box.setToolTip("\n\n".join(t for t in (owner.toolTip(), STALE_TIP) if t))
        box.setPen(pen)
        box.setBrush(QBrush(tint))
        box.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        box.setZValue(5)
        text = f"{share:.1%}" + (" (stale)" if self.stale else "")
        label = QGraphicsSimpleTextItem(text, owner)
        label.setBrush(colour.darker(160))
        font = label.font()
        font.setPointSizeF(8.0)
        font.setBold(True)
        label.setFont(font)
        label.setPos(rect.right() + 3, rect.top() - 2)
        label.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self._items += [box, label]
