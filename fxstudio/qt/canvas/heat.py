"""The heat overlay: each node tinted by its share of the profiled time (pale yellow → red),
a collapsed module by the sum of the nodes inside it -- a fold's box (identical modules drawn
once, ×N) by all N together, its tag saying ×N (or how many of them a run had: a module run
alone) -- and the node's tooltip adds its share.

The tints are child items of the node (or group) items, so they move when a node is
dragged, and are drawn again from names after a relayout (rule 3).  The shares are written
by the view (:meth:`HeatMarks.paint_tags`) on tags of the node's colour at the screen's own
size whatever the zoom -- readable with the whole graph fitted to the window -- hottest
first, leaving out a tag that would cover one already written (far out, the hottest nodes
are the ones named).  Far out, where the view draws the scene's overview instead of its
items, :meth:`HeatMarks.paint_far` tints the boxes there too.  Times measured on another
version of the graph (before the last edit) are drawn grey, dashed, and say so.

The same overlay draws other numbers a node has (:meth:`HeatMarks.set_values`): the Memory
dock's heat by bytes tints each node by what its output allocates and a collapsed module by
the bytes allocated inside it, written in GiB/MiB (``write``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QGraphicsRectItem, QGraphicsScene, QGraphicsView

from fxstudio.core.flows.run import NodeProfile
from fxstudio.qt.canvas.items import BoxItem
from fxstudio.qt.canvas.marks import take_off

COOL = QColor("#fff3b0")
HOT = QColor("#d7191c")
STALE = QColor("#8c8c8c")
#: What a stale mark says when the pointer is on it.
STALE_TIP = (
    "This time was measured on the graph before its last change: it is not of the graph "
    "as it is now. Run again to time it."
)
TAG_POINTS = 8.5  # the tags' font, on the screen
MAX_TAGS = 300  # tags written per paint at most (a 10,000-node graph fitted)
CONSIDERED = 1500  # the hottest tags in sight looked at per paint
CELL = 64  # pixels: the grid the tags written are kept in, to find one in the way


def percent(share: float) -> str:
    return f"{share:.1%}"


def rgb(colour: QColor) -> tuple[int, int, int]:
    return colour.red(), colour.green(), colour.blue()


def heat_colour(level: float) -> QColor:
    """0 → pale yellow, 1 → red (``level``: a share relative to the hottest node)."""
    t = max(0.0, min(1.0, level))
    mix = [int(a + (b - a) * t) for a, b in zip(rgb(COOL), rgb(HOT), strict=True)]
    return QColor(*mix)


def ink_on(colour: QColor) -> QColor:
    """Near-black or white, whichever reads on ``colour``."""
    luma = 0.299 * colour.red() + 0.587 * colour.green() + 0.114 * colour.blue()
    return QColor("#111111") if luma > 140 else QColor("#ffffff")


@dataclass
class Tag:
    """A share written beside a node (or collapsed module) on the screen."""

    owner: BoxItem
    share: float
    colour: QColor
    stale: bool = False
    label: str = ""  # what is written, when not the share (a value difference, a speed-up)

    @property
    def text(self) -> str:
        return (self.label or f"{self.share:.1%}") + (" (stale)" if self.stale else "")

    def scene_rect(self) -> QRectF:
        return self.owner.mapRectToScene(self.owner.rect)


class HeatMarks:
    """What the overlay shows: shares by node name and by collapsed module path -- or any
    other positive number a node has (:meth:`set_values`), written as ``labels`` say."""

    def __init__(self) -> None:
        self.nodes: dict[str, float] = {}
        self.modules: dict[str, float] = {}
        self.labels: dict[str, str] = {}  # name -> the tag's text (default: the share)
        self.tip = "time: {label} of the profiled run"
        self.write: Callable[[float], str] = percent  # how a value is written on a tag
        self.visible = True
        self.stale = False  # measured on another version of the graph
        self.items: list[QGraphicsItem] = []  # the tints on the canvas
        self.tags: list[Tag] = []  # hottest first
        self.font = QFont()
        self.font.setPointSizeF(TAG_POINTS)
        self.font.setBold(True)

    def set_profile(self, profile: NodeProfile | None) -> None:
        if profile is None:
            self.nodes, self.modules = {}, {}
            return
        self.nodes = {n.name: n.share for n in profile.nodes}
        self.modules = {m.path: m.share for m in profile.modules if m.path}
        self.labels, self.write = {}, percent

    def set_values(
        self,
        values: dict[str, float],
        labels: dict[str, str],
        tip: str,
        modules: dict[str, float] | None = None,
        write: Callable[[float], str] = percent,
    ) -> None:
        """Tint nodes by ``values`` (0 or more; the largest is the hottest), tagged with
        ``labels``; ``tip`` (with ``{label}``) is added to the node's tooltip.  ``modules``:
        a collapsed module's value by its path (its box tinted by it, written by ``write``)."""
        self.nodes, self.labels, self.tip = dict(values), dict(labels), tip
        self.modules, self.write = dict(modules or {}), write

    def redraw(self, scene: QGraphicsScene | None) -> None:
        take_off(self.items)
        self.items, self.tags = [], []
        if scene is not None:
            scene.heat = self  # type: ignore[attr-defined]  # the view writes the tags
            scene.update()
        if scene is None or not self.visible or not self.nodes:
            return
        folds: dict[str, list[str]] = getattr(getattr(scene, "layout", None), "folds", {})
        boxes: dict[str, tuple[float, str, str]] = {}  # collapsed modules: share, tag, note
        for path, group in getattr(scene, "groups", {}).items():
            box = self._module_share(folds.get(path, [path])) if group.collapsed else None
            if box is not None:
                boxes[path] = box
        top = max([*self.nodes.values(), *(b[0] for b in boxes.values()), 1e-12])
        for name, share in self.nodes.items():
            item = getattr(scene, "nodes", {}).get(name)
            if item is not None:
                self._mark(item, share, top, self.labels.get(name, ""))
        for path, (share, label, note) in boxes.items():
            self._mark(scene.groups[path], share, top, label, note)  # type: ignore[attr-defined]
        self.tags.sort(key=lambda t: -t.share)

    def _module_share(self, members: list[str]) -> tuple[float, str, str] | None:
        """The share of a collapsed module's box: of a fold (``members``: the identical
        modules the box stands for), all of them together -- as the module times add up --
        tagged ``×N``; of those measured only (a module run alone), said so."""
        measured = [m for m in members if m in self.modules]
        if not measured:
            return None
        share = sum(self.modules[m] for m in measured)
        n = len(members)
        if n == 1:
            return share, self.write(share), ""
        if len(measured) == n:
            return share, f"{self.write(share)} ×{n}", f"all {n} modules of this box together"
        who = measured[0] if len(measured) == 1 else f"{len(measured)} of them"
        return (
            share,
            f"{self.write(share)} ({len(measured)} of {n})",
            f"{who} only, of the {n} modules of this box (the others were not in the run)",
        )

    def _mark(
        self, owner: BoxItem, share: float, top: float, label: str = "", note: str = ""
    ) -> None:
        colour = STALE if self.stale else heat_colour(share / top)
        rect = owner.rect.adjusted(-4, -4, 4, 4)
        tint = QColor(colour)
        tint.setAlpha(50 if self.stale else 120)
        box = QGraphicsRectItem(rect, owner)
        pen = QPen(colour.darker(115), 3.0)
        said = self.tip.format(label=self.write(share) if note else label or self.write(share))
        tip = f"{owner.toolTip()}\n\n{said}" + (f": {note}" if note else "")
        if self.stale:
            pen.setStyle(Qt.PenStyle.DashLine)
            tip += f"\n\n{STALE_TIP}"
        box.setPen(pen)
        box.setBrush(QBrush(tint))
        box.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        box.setZValue(5)
        box.setToolTip(tip)
        self.items.append(box)
        self.tags.append(Tag(owner, share, colour, self.stale, label))

    # -- what the view paints ------------------------------------------------------------

    def tags_shown(self, view: QGraphicsView) -> list[tuple[Tag, QRectF]]:
        """The tags the view writes now and where (viewport pixels): those beside a node in
        sight, hottest first, none covering another (of the hottest ``CONSIDERED`` in sight:
        a paint of a 10,000-node graph fitted to the window stays within ~20 ms)."""
        if not self.visible or not self.tags:
            return []
        metrics = QFontMetricsF(self.font)
        height = metrics.height() + 2
        sight = QRectF(view.viewport().rect())
        area = view.mapToScene(view.viewport().rect()).boundingRect()
        scene = view.scene()
        shown: list[tuple[Tag, QRectF]] = []
        cells: dict[tuple[int, int], list[QRectF]] = {}  # the tags written, by screen cell
        looked = 0
        for tag in self.tags:
            rect = tag.scene_rect()
            if not rect.intersects(area) or tag.owner.scene() is not scene:
                continue
            corner = view.mapFromScene(rect.topRight())
            box = QRectF(
                corner.x() + 4, corner.y(), metrics.horizontalAdvance(tag.text) + 8, height
            )
            if not sight.intersects(box):
                continue
            looked += 1
            if looked > CONSIDERED:
                break
            near = [
                (x, y)
                for x in range(int(box.left() // CELL), int(box.right() // CELL) + 1)
                for y in range(int(box.top() // CELL), int(box.bottom() // CELL) + 1)
            ]
            if any(box.intersects(r) for key in near for r in cells.get(key, ())):
                continue
            for key in near:
                cells.setdefault(key, []).append(box)
            shown.append((tag, box))
            if len(shown) == MAX_TAGS:
                break
        return shown

    def paint_tags(self, painter: QPainter, view: QGraphicsView) -> None:
        """Write the shares (the painter in viewport pixels)."""
        painter.setFont(self.font)
        for tag, box in self.tags_shown(view):
            painter.setPen(QPen(tag.colour.darker(140), 1.0))
            painter.setBrush(tag.colour)
            painter.drawRoundedRect(box.adjusted(0.5, 0.5, -0.5, -0.5), 3, 3)
            painter.setPen(ink_on(tag.colour))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, tag.text)

    def paint_far(self, painter: QPainter, area: QRectF) -> None:
        """Tint the boxes of the far-out picture (the painter in scene coordinates), in
        sixteen shades drawn in one call each."""
        if not self.visible or not self.tags:
            return
        top = self.tags[0].share or 1e-12
        shades: dict[int, list[QRectF]] = {}
        for tag in self.tags:
            rect = tag.scene_rect()
            if rect.intersects(area):
                shades.setdefault(round(15 * tag.share / top), []).append(rect)
        for shade, rects in shades.items():
            colour = STALE if self.stale else heat_colour(shade / 15)
            painter.setPen(QPen(colour.darker(115), 0))
            painter.setBrush(colour)
            painter.drawRects(rects)
