"""The canvas's items: a node (:class:`NodeItem`), a module group -- a frame, or collapsed a
box (:class:`GroupItem`) -- and an edge (:class:`EdgeItem`), painted in the theme's colours.

Items are keyed by node name, module path (``group:PATH``) and edge.  They never change the
graph; what the mouse does with them is the scene's tools' (:mod:`fxstudio.qt.canvas.tools`).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsSceneHoverEvent,
    QStyleOptionGraphicsItem,
)

from fxstudio.core.flows.picture import (
    GROUP_PAD,
    GROUP_TITLE,
    TEXT_MARGIN,
    Box,
    TextMetrics,
    edge_path,
    group_key,
)
from fxstudio.qt import theme

DETAIL_SCALE = 0.45  # below this zoom, boxes show their name only, in a font kept legible
FAR_SCALE = DETAIL_SCALE * 0.5  # below this, no text at all (frames' titles: below DETAIL)
FAR_POINTS = 7.0  # how big a name below DETAIL_SCALE reads on screen, in points
MOVABLE = (
    QGraphicsItem.GraphicsItemFlag.ItemIsSelectable | QGraphicsItem.GraphicsItemFlag.ItemIsMovable
)


_FONTS: dict[tuple[float, bool, bool], QFont] = {}


def _font(size: float, bold: bool = False, italic: bool = False) -> QFont:
    """A font made once; never derived from the painter's, which may carry another item's
    (the view does not save painter state between items)."""
    key = (size, bold, italic)
    font = _FONTS.get(key)
    if font is None:
        font = _FONTS[key] = QFont()
        font.setPointSizeF(size)
        font.setBold(bold)
        font.setItalic(italic)
    return font


#: The fonts of a node's lines: name, target, shape.
NAME_FONT, DETAIL_FONT = (8.5, True), (7.5, False)
_METRICS: list[TextMetrics] = []
_MEASURE: dict[tuple[float, bool], QFontMetricsF] = {}
#: Measured one by one for the layout; any other character counts as the widest of these.
MEASURED = [chr(c) for c in range(32, 127)] + list("…×→▸▾·")


def _measure(font: tuple[float, bool]) -> QFontMetricsF:
    fm = _MEASURE.get(font)
    if fm is None:
        fm = _MEASURE[font] = QFontMetricsF(_font(*font))
    return fm


def text_metrics() -> TextMetrics:
    """The canvas's fonts measured once, as the layout reads them (it sizes the node boxes
    to their text in a worker thread, where no font can be asked)."""
    if not _METRICS:
        tables = []
        for font in (NAME_FONT, DETAIL_FONT):
            fm = _measure(font)
            table = {c: fm.horizontalAdvance(c) for c in MEASURED}
            table[""] = max(table.values())
            tables.append(table)
        _METRICS.append(TextMetrics(tables[0], tables[1]))
    return _METRICS[0]


def elided(
    text: str,
    font: tuple[float, bool],
    width: float,
    mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle,
) -> str:
    """``text`` as it fits ``width`` in ``font``: whole, or cut (in the middle) with "…"."""
    fm = _measure(font)
    if fm.horizontalAdvance(text) <= width:
        return text
    return fm.elidedText(text, mode, width)


def far_font(lod: float, height: float) -> tuple[float, bool]:
    """A box's name at zoom ``lod`` below :data:`DETAIL_SCALE`: bold, as big in the scene as
    reads :data:`FAR_POINTS` on screen, at most half the box's ``height`` (in half points,
    so that few sizes are ever measured)."""
    return (min(round(2 * FAR_POINTS / max(lod, FAR_SCALE)), int(height)) / 2, True)


def draw_far_name(painter: QPainter, rect: QRectF, text: str, lod: float) -> None:
    """``text`` across ``rect``, legible at zoom ``lod`` (cut in the middle to fit)."""
    font = far_font(lod, rect.height())
    painter.setFont(_font(*font))
    painter.setPen(QColor(theme.colors().text))
    inner = rect.adjusted(3, 0, -3, 0)
    painter.drawText(inner, Qt.AlignmentFlag.AlignCenter, elided(text, font, inner.width()))


_PENS: dict[object, QPen] = {}


theme.on_change(_PENS.clear)  # the pens are made again in the new colours


def _edge_pen(dashed: bool) -> QPen:
    pen = _PENS.get(dashed)
    if pen is None:
        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
        pen = _PENS[dashed] = QPen(QColor(theme.colors().edge), 1.2, style)
    return pen


def wire_pen() -> QPen:
    """The dashed line of a wire being dragged."""
    return QPen(QColor(theme.colors().selected), 2, Qt.PenStyle.DashLine)


def _selected_pen() -> QPen:
    pen = _PENS.get("selected")
    if pen is None:
        pen = _PENS["selected"] = QPen(QColor(theme.colors().selected), 3)
    return pen


def _lod(option: QStyleOptionGraphicsItem, painter: QPainter) -> float:
    return option.levelOfDetailFromTransform(painter.worldTransform())


class BoxItem(QGraphicsItem):
    """Something edges attach to: a node, or a collapsed group standing for its nodes.

    ``key`` is its key in the document's positions.  Whoever moves it calls :meth:`follow`
    (the drag tools, for drags; the scene's ``move_nodes``, for the document's positions): an
    ``itemChange`` override would cost a Python call for each of a dozen changes per item
    while a scene of thousands is built.
    """

    key: str
    name: str  # a node's name; a group's path (collapsed, it stands in for its nodes)
    rect: QRectF

    def __init__(self) -> None:
        super().__init__()
        self.edges: list[EdgeItem] = []

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self.rect.adjusted(-2, -2, 2, 2)

    def follow(self) -> None:
        """It moved: bring its edges along and let the frames around it fit again."""
        for edge in self.edges:
            edge.update_path()
        moved = getattr(self.scene(), "moved", None)  # a GraphScene keeps its frames fitted
        if moved is not None:
            moved(self.key)

    def top(self) -> QPointF:
        return self.pos() + QPointF(self.rect.width() / 2, 0)

    def bottom(self) -> QPointF:
        return self.pos() + QPointF(self.rect.width() / 2, self.rect.height())


class NodeItem(BoxItem):
    """One node: a rounded box coloured by op, with name, target and output shape."""

    def __init__(
        self, name: str, op: str, target: str, shape: str, box: Box, problem: str | None = None
    ) -> None:
        super().__init__()
        self.name = self.key = name
        self.op = op
        self.problem = problem  # the shape error an edit left here
        self.lines = [name, target if target != name else "", shape]
        self._shown: list[str] | None = None  # the lines as they fit the box (at first paint)
        self.rect = QRectF(0, 0, box.w, box.h)
        self.setPos(box.x, box.y)
        self.setFlags(MOVABLE)
        tip = f"{name}\n{op}: {target}\n{shape}"
        self.setToolTip(f"{tip}\n\nShapes do not fit here: {problem}" if problem else tip)

    def set_shape(self, shape: str) -> None:
        """Its value has a new shape: the third line says so."""
        self.lines[2] = shape
        self._shown = None
        self.update()

    def shown_lines(self) -> list[str]:
        """The name, target and shape as drawn: each whole, or elided in the middle with "…"
        where the box (at most :data:`~fxstudio.core.layout.labels.MAX_NODE_WIDTH`) is narrower --
        the tooltip has them whole."""
        if self._shown is None:
            width = self.rect.width() - 2 * TEXT_MARGIN
            fonts = (NAME_FONT, DETAIL_FONT, DETAIL_FONT)
            self._shown = [elided(t, f, width) for t, f in zip(self.lines, fonts, strict=True)]
        return self._shown

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        c = theme.colors()
        fill = QColor(c.fills.get(self.op, c.fill))
        border = QColor(c.problem if self.problem else c.borders.get(self.op, c.border))
        selected = self.isSelected()
        wide = selected or self.problem
        painter.setPen(QPen(QColor(c.selected) if selected else border, 3 if wide else 1.2))
        painter.setBrush(QBrush(fill))
        lod = _lod(option, painter)
        if lod < DETAIL_SCALE:  # far out: the name only, legible, down to FAR_SCALE
            painter.drawRect(self.rect)
            if lod >= FAR_SCALE:
                draw_far_name(painter, self.rect, self.lines[0], lod)
            return
        painter.drawRoundedRect(self.rect, 6, 6)
        name, target, shape = self.shown_lines()
        painter.setFont(_font(*NAME_FONT))
        painter.setPen(QColor(c.text))
        r = self.rect.adjusted(TEXT_MARGIN, 2, -TEXT_MARGIN, -2)
        third = r.height() / 3
        painter.drawText(QRectF(r.x(), r.y(), r.width(), third), Qt.AlignmentFlag.AlignCenter, name)
        painter.setFont(_font(*DETAIL_FONT))
        painter.setPen(QColor(c.subtext))
        painter.drawText(
            QRectF(r.x(), r.y() + third, r.width(), third), Qt.AlignmentFlag.AlignCenter, target
        )
        painter.setPen(QColor(c.faint))
        painter.drawText(
            QRectF(r.x(), r.y() + 2 * third, r.width(), third), Qt.AlignmentFlag.AlignCenter, shape
        )
        if self.op != "output":  # the output port: drag from here to connect
            painter.setPen(QPen(border, 1.2))
            painter.setBrush(QColor(c.port))
            painter.drawEllipse(QPointF(self.rect.width() / 2, self.rect.height()), 3.5, 3.5)
        if self.problem:  # the error, in red, to the right of the node
            painter.setFont(_font(7.5, bold=True))
            painter.setPen(QColor(c.problem))
            painter.drawText(
                self.problem_rect(),
                Qt.AlignmentFlag.AlignLeft
                | Qt.AlignmentFlag.AlignVCenter
                | Qt.TextFlag.TextWordWrap,
                f"⚠ {self.problem}",
            )

    def problem_rect(self) -> QRectF:
        return QRectF(self.rect.right() + 8, -6, 260, self.rect.height() + 12)

    def boundingRect(self) -> QRectF:  # noqa: N802
        rect = self.rect.adjusted(-2, -2, 2, 5)  # (the port sticks out below)
        return rect.united(self.problem_rect()) if self.problem else rect


class GroupItem(BoxItem):
    """A module: a frame around its nodes, or (collapsed) one box standing for all of them.

    A collapsed group moves like a node.  An expanded one is dragged by its title bar (the
    scene's group drag tool) and takes everything inside along; its frame follows what it
    holds.
    """

    def __init__(self, path: str, label: str, box: Box, collapsed: bool, members: int) -> None:
        super().__init__()
        self.path = path
        self.name = path  # collapsed groups stand in for nodes: the same key as NodeItem
        self.key = group_key(path)
        self.label = label
        self._title: tuple[float, str] | None = None  # (frame width, title drawn at it)
        self.collapsed = collapsed
        self.rect = QRectF(0, 0, box.w, box.h)
        self.setPos(box.x, box.y)
        if collapsed:
            self.setFlags(MOVABLE)
            self.setToolTip(f"{label}\n{members} nodes — double-click to expand")
        else:
            self.setAcceptHoverEvents(True)
            self.setToolTip(
                f"{label}\n{members} nodes — drag the title to move, double-click to collapse"
            )

    def in_title(self, pos: QPointF) -> bool:
        return pos.y() <= GROUP_PAD + GROUP_TITLE

    def hoverMoveEvent(self, event: QGraphicsSceneHoverEvent) -> None:  # noqa: N802
        title = self.in_title(event.pos())
        self.setCursor(Qt.CursorShape.OpenHandCursor if title else Qt.CursorShape.ArrowCursor)
        super().hoverMoveEvent(event)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        lod = _lod(option, painter)
        detailed = lod >= DETAIL_SCALE  # (as the nodes' text: no titles over blank boxes)
        c = theme.colors()
        if self.collapsed:
            selected = self.isSelected()
            painter.setPen(
                QPen(QColor(c.selected if selected else c.group_border), 3 if selected else 1.5)
            )
            painter.setBrush(QColor(c.group_fill))
            painter.drawRoundedRect(self.rect, 8, 8)
            if not detailed and lod >= FAR_SCALE:  # a box like a node: its name, legible
                draw_far_name(painter, self.rect, f"▸ {self.label}", lod)
            elif detailed:
                painter.setPen(QColor(c.group_text))
                painter.setFont(_font(8.5, bold=True))
                painter.drawText(self.rect, Qt.AlignmentFlag.AlignCenter, f"▸ {self.label}")
            return
        painter.setPen(QPen(QColor(c.frame), 1, Qt.PenStyle.DashLine))
        painter.setBrush(QColor(*c.frame_fill))
        painter.drawRoundedRect(self.rect, 8, 8)
        if detailed:
            painter.setPen(QColor(c.frame_text))
            painter.setFont(_font(*DETAIL_FONT))
            painter.drawText(
                self.rect.adjusted(8, 3, -8, 0),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                self.title(),
            )

    def title(self) -> str:
        """The expanded frame's title as drawn: cut at the right with "…" where the frame is
        narrower (its tooltip has it whole)."""
        width = self.rect.width() - 16
        if self._title is None or self._title[0] != width:
            text = elided(f"▾ {self.label}", DETAIL_FONT, width, Qt.TextElideMode.ElideRight)
            self._title = (width, text)
        return self._title[1]


def _at(detour: tuple[tuple[float, float], ...], sx, sy, ex, ey) -> bool:
    """Whether ``detour`` starts at ``sx, sy`` and ends at ``ex, ey``."""
    (ax, ay), (bx, by) = detour[0], detour[-1]
    return abs(ax - sx) + abs(ay - sy) + abs(bx - ex) + abs(by - ey) < 0.01


class EdgeItem(QGraphicsPathItem):
    """Producer -> user, a curve with an arrowhead; its tooltip says which argument it feeds.

    An edge from a shared value (a mask or position ids used by every layer) is a *stub*: a
    short labelled arrow into the user instead of a line across the picture; clicking it
    selects the value.
    """

    STUB_LENGTH = 20.0

    def __init__(
        self,
        source: BoxItem,
        target: BoxItem,
        labels: list[str],
        slot: tuple[int, int] = (0, 1),
        stub: str | None = None,
        detour: tuple[tuple[float, float], ...] = (),
    ) -> None:
        super().__init__()
        self.source = source
        # Drawn around the boxes its curve would cross, while its ends are where the layout
        # put them (dropped once either end moves: the plain curve follows the drag).
        self.detour = detour
        self.target = target
        self.slot = slot
        self.stub = stub  # the shared value's name
        self.label: str | None = None  # the argument it feeds, when it is one use
        self.source_name = source.name
        self.target_name = target.name
        self.setPen(_edge_pen(bool(stub)))
        tip = f"{source.name} → {target.name}: {', '.join(labels)}"
        if stub:
            tip += "\nshared value, drawn as a stub — click to select it"
            self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip(tip)
        self.setAcceptHoverEvents(True)
        self.setFlags(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)  # to insert on it
        self.update_path()

    def update_path(self) -> None:
        """Follow the two items (after one of them moved).  Worked out in plain numbers (a
        few thousand edges come with a big module expanded)."""
        self.prepareGeometryChange()
        source, target = self.source, self.target
        at, rect = target.pos(), target.rect
        ex, ey = at.x() + rect.width() / 2, at.y()
        index, count = self.slot  # several inputs enter the user side by side, in argument order
        if count > 1:
            width = rect.width() * 0.7
            ex += -width / 2 + width * index / (count - 1)
        if self.stub:
            sx, sy = ex, ey - self.STUB_LENGTH
            path = QPainterPath(QPointF(sx, sy))
            path.lineTo(ex, ey)
            # The name sits beside the stub, in the gap between ranks (never over a node).
            self.label_rect = QRectF(sx + 3, sy, 6.0 * len(self.stub) + 8, 13)
            left, top, right, bottom = sx, sy, sx, ey
        else:
            at, rect = source.pos(), source.rect
            sx, sy = at.x() + rect.width() / 2, at.y() + rect.height()
            path = QPainterPath(QPointF(sx, sy))
            if self.detour and not _at(self.detour, sx, sy, ex, ey):
                self.detour = ()  # an end moved: the plain curve from now on
            if self.detour:
                segments = edge_path((sx, sy, ex, ey), self.detour[1:-1])
                for _, c1, c2, end in segments:
                    path.cubicTo(*c1, *c2, *end)
                xs = [p[0] for seg in segments for p in seg]
                ys = [p[1] for seg in segments for p in seg]
                left, right, top, bottom = min(xs), max(xs), min(ys), max(ys)
            else:  # (as edge_path draws it, in plain numbers: thousands come at once)
                dy = max(abs(ey - sy) * 0.5, 20.0)
                path.cubicTo(sx, sy + dy, ex, ey - dy, ex, ey)
                # the curve's control points' box (what controlPointRect() gives)
                left, right = min(sx, ex), max(sx, ex)
                top, bottom = min(sy, ey - dy, ey), max(sy + dy, sy, ey)
        self.setPath(path)
        # Curves and stubs both end going straight down, so the arrowhead points down.
        self.ends = (sx, sy, ex, ey)  # the far-out picture draws a line
        self.arrow = QPolygonF(
            [QPointF(ex, ey), QPointF(ex - 3.5, ey - 7.0), QPointF(ex + 3.5, ey - 7.0)]
        )
        # Kept, not asked of Qt: a path item with a pen works its box out from shape(),
        # which is ours (a stroked outline) -- 13,000 of them when a big scene is indexed.
        left, right = min(left, ex - 3.5), max(right, ex + 3.5)
        top, bottom = min(top, ey - 7.0), max(bottom, ey)
        bounds = QRectF(left - 3, top - 3, right - left + 6, bottom - top + 6)
        if self.stub:
            bounds = bounds.united(self.label_rect.adjusted(-3, -3, 3, 3))
        self.bounds = bounds

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        pen = _selected_pen() if self.isSelected() else self.pen()
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path())
        if _lod(option, painter) >= DETAIL_SCALE * 0.5:
            painter.setBrush(pen.color())
            painter.drawPolygon(self.arrow)
            if self.stub:
                c = theme.colors()
                painter.setPen(QPen(QColor(c.stub_border), 0.8))
                painter.setBrush(QColor(c.stub_fill))
                painter.drawRoundedRect(self.label_rect, 4, 4)
                painter.setFont(_font(7, italic=True))
                painter.setPen(QColor(c.stub_text))
                painter.drawText(self.label_rect, Qt.AlignmentFlag.AlignCenter, self.stub)

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self.bounds

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(8)
        path = stroker.createStroke(self.path())
        if self.stub:
            path.addRect(self.label_rect)
        return path
