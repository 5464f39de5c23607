"""Where an edge is drawn: the curve from its producer's bottom to its user's top, or -- where
that curve would run through boxes it does not connect (a ResNet's skip connection through
the column of the block it bypasses) -- a detour beside them, worked out from the laid-out
boxes.

A skip connection belongs to the layout of the group holding both its ends, where the block
it bypasses is one box: graphviz never sees it next to that block's nodes, so it cannot route
it around them.  The detour goes down from the producer into the gap below it, sideways to a
free lane, down the lane past the boxes in between (outside the frames around them, rather than
along their borders), and back in above the user, with rounded corners.

Example:
    >>> from fxstudio.core.layout.boxes import Box
    >>> ends = edge_ends(Box(0, 0, 80, 40), Box(0, 200, 80, 40), 0, 1)
    >>> blocker = [Box(0, 80, 80, 40)]
    >>> crosses(edge_path(ends), blocker)
    True
    >>> route = detour(ends, Box(0, 0, 80, 40), Box(0, 200, 80, 40), Index(blocker))
    >>> crosses(edge_path(ends, route), blocker)
    False
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from fxstudio.core.layout.boxes import GROUP_PAD, GROUP_TITLE, Box
from fxstudio.core.layout.dot import RANKSEP

__all__ = [
    "Index",
    "routes",
    "blocked",
    "crosses",
    "detour",
    "edge_ends",
    "edge_path",
    "points_along",
]

Point = tuple[float, float]
Cubic = tuple[Point, Point, Point, Point]
Ends = tuple[float, float, float, float]  # sx, sy (the producer's bottom), ex, ey (user's top)

MARGIN = 8.0  # a detour's distance from the boxes it passes
BORDER = 6.0  # ... and from the frames' borders (it crosses them, never runs along them)
CORNER = 6.0  # the radius of its corners
REACH = 400.0  # how far to either side a lane is looked for
GAP = RANKSEP * 72  # between ranks
CELL = 200.0  # the index's cells


def edge_ends(source: Box, target: Box, slot: int, slots: int) -> Ends:
    """An edge's ends: the middle of ``source``'s bottom, and ``target``'s top where its
    argument ``slot`` of ``slots`` enters (side by side, in argument order)."""
    ex = target.x + target.w / 2
    if slots > 1:
        width = target.w * 0.7
        ex += -width / 2 + width * slot / (slots - 1)
    return (source.x + source.w / 2, source.y + source.h, ex, target.y)


def edge_path(ends: Ends, route: Sequence[Point] = ()) -> list[Cubic]:
    """The drawn path, as cubic Bézier segments: a curve leaving straight down and arriving
    straight down, or -- through the corners of ``route`` -- lines with rounded corners."""
    sx, sy, ex, ey = ends
    if not route:
        dy = max(abs(ey - sy) * 0.5, 20.0)
        return [((sx, sy), (sx, sy + dy), (ex, ey - dy), (ex, ey))]
    points = [(sx, sy), *route, (ex, ey)]
    out: list[Cubic] = []
    here = points[0]
    for a, b, c in zip(points, points[1:], points[2:], strict=False):
        r = min(CORNER, _dist(a, b) / 2, _dist(b, c) / 2)
        p, q = _toward(b, a, r), _toward(b, c, r)
        out.append(_line(here, p))
        k = 0.5523  # (a quarter circle's control points)
        out.append((p, _toward(p, b, r * k), _toward(q, b, r * k), q))
        here = q
    out.append(_line(here, points[-1]))
    return [s for s in out if s[0] != s[3]]


def points_along(path: Iterable[Cubic], step: float = 4.0) -> list[Point]:
    """Points on ``path`` at most about ``step`` apart."""
    out: list[Point] = []
    for p0, p1, p2, p3 in path:
        n = max(2, math.ceil((_dist(p0, p1) + _dist(p1, p2) + _dist(p2, p3)) / step))
        for i in range(n + 1):
            t = i / n
            u = 1 - t
            a, b, c, d = u * u * u, 3 * u * u * t, 3 * u * t * t, t * t * t
            out.append(
                (
                    a * p0[0] + b * p1[0] + c * p2[0] + d * p3[0],
                    a * p0[1] + b * p1[1] + c * p2[1] + d * p3[1],
                )
            )
    return out


def crosses(
    path: Iterable[Cubic], boxes: Iterable[Box], pad: float = 0.0, step: float = 4.0
) -> bool:
    """Whether the drawn ``path`` (as lines between points ``step`` apart) runs through any
    of ``boxes`` (grown by ``pad``)."""
    points = points_along(path, step)
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    left, right, top, bottom = min(xs), max(xs), min(ys), max(ys)
    legs = list(zip(points, points[1:], strict=False))  # (a corner between samples counts)
    for box in boxes:
        x0, y0, x1, y1 = box.x - pad, box.y - pad, box.x + box.w + pad, box.y + box.h + pad
        if x1 <= left or right <= x0 or y1 <= top or bottom <= y0:
            continue
        for (ax, ay), (bx, by) in legs:
            if (ax <= x0 and bx <= x0) or (ax >= x1 and bx >= x1):
                continue
            if (ay <= y0 and by <= y0) or (ay >= y1 and by >= y1):
                continue
            if _segment_hits(ax, ay, bx, by, x0, y0, x1, y1):
                return True
    return False


class Index:
    """Boxes bucketed by where they are, for asking which lie in a rectangle."""

    def __init__(self, boxes: Sequence[Box]) -> None:
        self.boxes = list(boxes)
        self.cells: dict[tuple[int, int], list[int]] = {}
        for i, b in enumerate(self.boxes):
            for cell in _cells(b.x, b.y, b.x + b.w, b.y + b.h):
                self.cells.setdefault(cell, []).append(i)

    def within(self, x0: float, y0: float, x1: float, y1: float) -> list[Box]:
        """The boxes overlapping the rectangle (``x0 <= x1``, ``y0 <= y1``)."""
        seen: set[int] = set()
        out = []
        for cell in _cells(x0, y0, x1, y1):
            for i in self.cells.get(cell, ()):
                if i in seen:
                    continue
                seen.add(i)
                b = self.boxes[i]
                if b.x < x1 and x0 < b.x + b.w and b.y < y1 and y0 < b.y + b.h:
                    out.append(b)
        return out


def routes(
    ends: Sequence[tuple[Ends, Box, Box]],
    boxes: Sequence[Box],
    frames: Sequence[Box] = (),
    titles: Sequence[Box] = (),
) -> dict[int, tuple[Point, ...]]:
    """Detours for the edges (``ends``, source box, target box) whose plain curves run through
    ``boxes`` (nodes, collapsed groups), by position in ``ends``: each the whole polyline,
    from the producer's bottom to the user's top, through its corners."""
    index = Index(boxes)
    out: dict[int, tuple[Point, ...]] = {}
    frame_index = title_index = None
    for i, (e, source, target) in enumerate(ends):
        if not blocked(e, source, target, index):
            continue
        if frame_index is None:  # (only once some edge needs them)
            frame_index, title_index = Index(frames), Index(titles)
        corners = detour(e, source, target, index, frame_index, title_index)
        if corners:
            out[i] = ((e[0], e[1]), *corners, (e[2], e[3]))
    return out


def blocked(ends: Ends, source: Box, target: Box, index: Index) -> bool:
    """Whether the plain curve runs through boxes of ``index`` other than its ends'."""
    sx, sy, ex, ey = ends
    dy = max(abs(ey - sy) * 0.5, 20.0)
    near = index.within(min(sx, ex), min(sy, ey - dy), max(sx, ex), max(sy + dy, ey))
    near = [b for b in near if b != source and b != target]
    return bool(near) and crosses(edge_path(ends), near, step=8.0)


def detour(
    ends: Ends,
    source: Box,
    target: Box,
    index: Index,
    frames: Index | None = None,
    titles: Index | None = None,
) -> tuple[Point, ...] | None:
    """The corners of the shortest detour of an edge beside the boxes of ``index`` (not its
    ``source`` or ``target``), off the ``titles`` of frames and not along the borders of
    ``frames`` (crossing them is fine); None when none is found within :data:`REACH` (the
    plain curve is drawn then)."""
    sx, sy, ex, ey = ends
    if ey - sy < 2 * GAP:
        return None  # (next ranks: nothing between them to go around)
    reach = (min(sx, ex) - REACH, sy, max(sx, ex) + REACH, ey)
    boxes = [b for b in index.within(*reach) if b != source and b != target]
    near = frames.within(*reach) if frames is not None else []
    grown = [_grow(b, MARGIN) for b in boxes]
    upright = [_grow(s, BORDER) for f in near for s in _sides(f)[:2]]
    level = [_grow(s, BORDER) for f in near for s in _sides(f)[2:]]
    labels = [_grow(t, 2.0) for t in titles.within(*reach)] if titles is not None else []
    lines = [s for f in near for s in _sides(f)[2:]]
    downs = _gaps(sx, sy, boxes, lines, 1) + [GAP / 2, GROUP_PAD + GAP / 2, GAP / 4]
    ups = _gaps(ex, ey, boxes, lines, -1) + [GAP / 2, GROUP_PAD + GROUP_TITLE + GAP / 2, GAP / 4]
    for tidy in (True, False):  # (along a frame's border only where nothing else goes)
        vertical = grown + upright + labels if tidy else grown
        horizontal = grown + level + labels if tidy else grown
        for down in dict.fromkeys(downs):
            for up in dict.fromkeys(ups):
                y1, y2 = sy + down, ey - up
                if y2 - y1 < GAP:
                    continue
                for lane in _lanes(vertical, y1, y2, sx, ex):
                    route = ((sx, y1), (lane, y1), (lane, y2), (ex, y2))
                    if _clear(ends, route, vertical, horizontal):
                        return route
    return None


# --- geometry ------------------------------------------------------------------------------------


def _gaps(x: float, y: float, boxes: list[Box], lines: list[Box], way: int) -> list[float]:
    """How far from ``y`` (down: ``way`` 1, up: -1) the middle of the free gap at ``x`` is,
    and -- where a frame's border crosses that gap -- of the gap beyond the border first."""
    near = []  # (distance, is a border)
    for b in boxes:
        if b.x < x < b.x + b.w:
            d = b.y - y if way > 0 else y - (b.y + b.h)
            if d >= 0:
                near.append((d, False))
    for b in lines:
        if b.x < x < b.x + b.w:
            d = (b.y - y) * way
            if d > 0:
                near.append((d, True))
    near.sort()
    if not near:
        return []
    first = min(near[0][0], 2 * GAP)
    out = [first / 2]
    if near[0][1] and len(near) > 1:  # beyond the border, where the frames' gap is
        out.insert(0, (near[0][0] + min(near[1][0], near[0][0] + 2 * GAP)) / 2)
    return out


def _lanes(walls: list[Box], y1: float, y2: float, sx: float, ex: float) -> list[float]:
    """The x of free vertical lanes from ``y1`` to ``y2`` (beside each run of walls), the
    nearest to the edge's ends first."""
    spans = sorted((w.x, w.x + w.w) for w in walls if w.y < y2 and y1 < w.y + w.h)
    merged: list[list[float]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    lanes = [x for span in merged for x in span]
    lanes += [x for x in (sx, ex) if not any(lo < x < hi for lo, hi in merged)]
    return sorted(set(lanes), key=lambda x: abs(x - sx) + abs(x - ex))[:12]


def _clear(
    ends: Ends, route: tuple[Point, ...], vertical: list[Box], horizontal: list[Box]
) -> bool:
    """Whether the straight legs of the detour stay out of the walls (``vertical`` ones for
    its up-and-down legs, ``horizontal`` for the others); its first and last legs leave and
    enter its own boxes, which are not walls.  (Its corners, rounded by less than
    :data:`MARGIN`, then stay out of the boxes the walls are grown from.)"""
    points = [(ends[0], ends[1]), *route, (ends[2], ends[3])]
    for (ax, ay), (bx, by) in zip(points, points[1:], strict=False):
        if ax == bx:  # (legs are upright or level: a wall is hit where both spans overlap)
            lo, hi = min(ay, by), max(ay, by)
            for w in vertical:
                if w.x < ax < w.x + w.w and w.y < hi and lo < w.y + w.h:
                    return False
        else:
            lo, hi = min(ax, bx), max(ax, bx)
            for w in horizontal:
                if w.y < ay < w.y + w.h and w.x < hi and lo < w.x + w.w:
                    return False
    return True


def _sides(frame: Box) -> list[Box]:
    """A frame's left and right, then top and bottom borders, as boxes without width."""
    x, y, w, h = frame.x, frame.y, frame.w, frame.h
    return [Box(x, y, 0, h), Box(x + w, y, 0, h), Box(x, y, w, 0), Box(x, y + h, w, 0)]


def _grow(b: Box, by: float) -> Box:
    return Box(b.x - by, b.y - by, b.w + 2 * by, b.h + 2 * by)


def _segment_hits(ax, ay, bx, by, x0, y0, x1, y1) -> bool:
    """Whether the segment a-b meets the inside of the rectangle (Liang-Barsky clipping)."""
    t0, t1 = 0.0, 1.0
    dx, dy = bx - ax, by - ay
    for p, q in ((-dx, ax - x0), (dx, x1 - ax), (-dy, ay - y0), (dy, y1 - ay)):
        if p == 0:
            if q <= 0:
                return False
        else:
            t = q / p
            if p < 0:
                if t > t1:
                    return False
                t0 = max(t0, t)
            else:
                if t < t0:
                    return False
                t1 = min(t1, t)
    return t1 - t0 > 1e-9


def _cells(x0: float, y0: float, x1: float, y1: float) -> Iterable[tuple[int, int]]:
    for i in range(math.floor(x0 / CELL), math.floor(x1 / CELL) + 1):
        for j in range(math.floor(y0 / CELL), math.floor(y1 / CELL) + 1):
            yield (i, j)


def _dist(a: Point, b: Point) -> float:
    return math.hypot(b[0] - a[0], b[1] - a[1])


def _toward(a: Point, b: Point, r: float) -> Point:
    d = _dist(a, b)
    if d == 0:
        return a
    return (a[0] + (b[0] - a[0]) * r / d, a[1] + (b[1] - a[1]) * r / d)


def _line(a: Point, b: Point) -> Cubic:
    return (a, _toward(a, b, _dist(a, b) / 3), _toward(a, b, 2 * _dist(a, b) / 3), b)
