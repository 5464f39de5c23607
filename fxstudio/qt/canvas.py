"""The canvas: the graph drawn from a :class:`~fxstudio.core.layout.Layout`.

Items are keyed by node name (``NodeItem``), module path (``GroupItem``) and edge
(``EdgeItem``).  The scene never changes the graph: selecting items updates the shared
:class:`SelectionModel`; double-clicking a group asks the controller to collapse or expand
it, which lays the graph out again (in a worker thread) and rebuilds the scene.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

import torch.fx as fx
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsLineItem,
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from fxstudio.core.capture import format_shape, node_shape
from fxstudio.core.document import GraphDocument, group_key
from fxstudio.core.graphviews import ModuleGroup, format_target
from fxstudio.core.layout import (
    GROUP_PAD,
    GROUP_TITLE,
    Box,
    Layout,
    drawn_tree,
    group_label,
    node_size,
)
from fxstudio.qt import theme

DETAIL_SCALE = 0.45  # below this zoom, nodes are drawn as plain shapes without text
EdgeKey = tuple[str, str, "str | None", bool]  # source, target, argument (one use), stub
PORT = 6.0  # radius of a node's output port, where a wire drag starts
PATCH_LIMIT = 200  # an edit touching more nodes than this is shown by a new layout
NODE_GAP = 30.0
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


_PENS: dict[object, QPen] = {}


theme.on_change(_PENS.clear)  # the pens are made again in the new colours


def _edge_pen(dashed: bool) -> QPen:
    pen = _PENS.get(dashed)
    if pen is None:
        style = Qt.PenStyle.DashLine if dashed else Qt.PenStyle.SolidLine
        pen = _PENS[dashed] = QPen(QColor(theme.colors().edge), 1.2, style)
    return pen


def _wire_pen() -> QPen:
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
    (the scene, for drags; :meth:`GraphScene.move_nodes`, for the document's positions): an
    ``itemChange`` override would cost a Python call for each of a dozen changes per item
    while a scene of thousands is built.
    """

    key: str
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
        scene = self.scene()
        if isinstance(scene, GraphScene):
            scene.moved(self.key)

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
        self.rect = QRectF(0, 0, box.w, box.h)
        self.setPos(box.x, box.y)
        self.setFlags(MOVABLE)
        tip = f"{name}\n{op}: {target}\n{shape}"
        self.setToolTip(f"{tip}\n\nShapes do not fit here: {problem}" if problem else tip)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        c = theme.colors()
        fill = QColor(c.fills.get(self.op, c.fill))
        border = QColor(c.problem if self.problem else c.borders.get(self.op, c.border))
        selected = self.isSelected()
        wide = selected or self.problem
        painter.setPen(QPen(QColor(c.selected) if selected else border, 3 if wide else 1.2))
        painter.setBrush(QBrush(fill))
        if _lod(option, painter) < DETAIL_SCALE:
            painter.drawRect(self.rect)
            return
        painter.drawRoundedRect(self.rect, 6, 6)
        painter.setFont(_font(8.5, bold=True))
        painter.setPen(QColor(c.text))
        r = self.rect.adjusted(6, 2, -6, -2)
        third = r.height() / 3
        painter.drawText(
            QRectF(r.x(), r.y(), r.width(), third), Qt.AlignmentFlag.AlignCenter, self.lines[0]
        )
        painter.setFont(_font(7.5))
        painter.setPen(QColor(c.subtext))
        painter.drawText(
            QRectF(r.x(), r.y() + third, r.width(), third),
            Qt.AlignmentFlag.AlignCenter,
            self.lines[1],
        )
        painter.setPen(QColor(c.faint))
        painter.drawText(
            QRectF(r.x(), r.y() + 2 * third, r.width(), third),
            Qt.AlignmentFlag.AlignCenter,
            self.lines[2],
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

    A collapsed group moves like a node.  An expanded one is dragged by its title bar and
    takes everything inside along; its frame follows what it holds.
    """

    def __init__(self, path: str, label: str, box: Box, collapsed: bool, members: int) -> None:
        super().__init__()
        self.path = path
        self.name = path  # collapsed groups stand in for nodes: the same key as NodeItem
        self.key = group_key(path)
        self.label = label
        self.collapsed = collapsed
        self.rect = QRectF(0, 0, box.w, box.h)
        self.setPos(box.x, box.y)
        self._drag: tuple[QPointF, dict[BoxItem, QPointF]] | None = None
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

    def hoverMoveEvent(self, event) -> None:  # noqa: N802
        title = self.in_title(event.pos())
        self.setCursor(Qt.CursorShape.OpenHandCursor if title else Qt.CursorShape.ArrowCursor)
        super().hoverMoveEvent(event)

    def mousePressEvent(self, event) -> None:  # noqa: N802
        scene = self.scene()
        if (
            self.collapsed
            or event.button() != Qt.MouseButton.LeftButton
            or not self.in_title(event.pos())
            or not isinstance(scene, GraphScene)
        ):
            super().mousePressEvent(event)
            if not self.collapsed:
                event.ignore()  # the background: the view pans
            return
        members = scene.members(self.path)
        self._drag = (event.scenePos(), {item: item.pos() for item in members})
        scene.group_drag = {item.key for item in members}
        event.accept()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        if self._drag is None:
            super().mouseMoveEvent(event)
            return
        start, origins = self._drag
        delta = event.scenePos() - start
        for item, origin in origins.items():
            item.setPos(origin + delta)  # the scene calls follow() after this event

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        self._drag = None
        super().mouseReleaseEvent(event)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        detailed = _lod(option, painter) >= DETAIL_SCALE * 0.5
        c = theme.colors()
        if self.collapsed:
            selected = self.isSelected()
            painter.setPen(
                QPen(QColor(c.selected if selected else c.group_border), 3 if selected else 1.5)
            )
            painter.setBrush(QColor(c.group_fill))
            painter.drawRoundedRect(self.rect, 8, 8)
            if detailed:
                painter.setPen(QColor(c.group_text))
                painter.setFont(_font(8.5, bold=True))
                painter.drawText(self.rect, Qt.AlignmentFlag.AlignCenter, f"▸ {self.label}")
            return
        painter.setPen(QPen(QColor(c.frame), 1, Qt.PenStyle.DashLine))
        painter.setBrush(QColor(*c.frame_fill))
        painter.drawRoundedRect(self.rect, 8, 8)
        if detailed:
            painter.setPen(QColor(c.frame_text))
            painter.setFont(_font(7.5))
            painter.drawText(
                self.rect.adjusted(8, 3, -8, 0),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                f"▾ {self.label}",
            )


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
    ) -> None:
        super().__init__()
        self.source = source
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
        """Follow the two items (after one of them moved)."""
        self.prepareGeometryChange()
        source, target = self.source, self.target
        end = target.top()
        index, count = self.slot  # several inputs enter the user side by side, in argument order
        if count > 1:
            width = target.rect.width() * 0.7
            end = end + QPointF(-width / 2 + width * index / (count - 1), 0)
        if self.stub:
            start = end - QPointF(0, self.STUB_LENGTH)
            path = QPainterPath(start)
            path.lineTo(end)
            # The name sits beside the stub, in the gap between ranks (never over a node).
            width = 6.0 * len(self.stub) + 8
            self.label_rect = QRectF(start.x() + 3, start.y(), width, 13)
        else:
            start = source.bottom()
            path = QPainterPath(start)
            dy = max(abs(end.y() - start.y()) * 0.5, 20.0)
            path.cubicTo(start + QPointF(0, dy), end - QPointF(0, dy), end)
        self.setPath(path)
        # Curves and stubs both end going straight down, so the arrowhead points down.
        x, y = end.x(), end.y()
        self.ends = (start.x(), start.y(), x, y)  # the far-out picture draws a line
        self.arrow = QPolygonF([end, QPointF(x - 3.5, y - 7.0), QPointF(x + 3.5, y - 7.0)])
        # Kept, not asked of Qt: a path item with a pen works its box out from shape(),
        # which is ours (a stroked outline) -- 13,000 of them when a big scene is indexed.
        bounds = path.controlPointRect().united(self.arrow.boundingRect())
        if self.stub:
            bounds = bounds.united(self.label_rect)
        self.bounds = bounds.adjusted(-3, -3, 3, 3)

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

    def mousePressEvent(self, event) -> None:  # noqa: N802
        scene = self.scene()
        if self.stub and isinstance(scene, GraphScene):
            scene.jumpRequested.emit(self.stub)
            event.accept()
            return
        super().mousePressEvent(event)


class GraphScene(QGraphicsScene):
    """Items for one layout of one document."""

    groupToggled = Signal(str)  # noqa: N815 - a group was double-clicked
    nodesMoved = Signal(dict, dict)  # noqa: N815 - a drag ended: {key: before}, {key: after}
    jumpRequested = Signal(str)  # noqa: N815 - show this node (a stub was clicked)
    # a wire was dragged from a node's output port onto a node, dropped this far across it
    rewireRequested = Signal(str, str, float)  # noqa: N815

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.nodes: dict[str, NodeItem] = {}
        self.groups: dict[str, GroupItem] = {}
        self.edges: list[EdgeItem] = []
        self.layout: Layout | None = None
        self.tree: dict[str, ModuleGroup] = {}
        self.parent_of: dict[str, str] = {}  # item key -> path of the frame around it
        self.group_drag: set[str] = set()  # keys taken along by a group's title drag
        self._dirty: set[str] = set()  # frames to fit to what they hold
        self._drag_start: dict[str, tuple[float, float]] = {}
        self._drag_last: dict[str, tuple[float, float]] = {}
        self._wire: tuple[NodeItem, QGraphicsLineItem] | None = None
        self.place_hint = QPointF()  # the cursor (or the view's centre), for new nodes
        self._overview: Overview | None = None
        self._bounds = QRectF()  # what the items cover, kept up to date as they move
        self.selectionChanged.connect(self._selection_changed)
        self.setBackgroundBrush(QColor(theme.colors().canvas))
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)

    def apply_theme(self) -> None:
        """Repaint in the theme's colours (View ▸ Theme, or the system switching)."""
        self.setBackgroundBrush(QColor(theme.colors().canvas))
        if self._overview is not None:
            self._overview.restyle()
        self.update()

    def build_empty(self) -> None:
        self.clear()
        self.nodes, self.groups, self.edges = {}, {}, []
        self.layout = None
        self.tree, self.parent_of, self._dirty = {}, {}, set()
        self._overview = None
        self._bounds = QRectF()

    def build(self, doc: GraphDocument, layout: Layout) -> None:
        """Make the items for ``layout`` (all at once)."""
        for _ in self.build_steps(doc, layout):
            pass

    def build_steps(self, doc: GraphDocument, layout: Layout, chunk: int = 2000) -> Iterator[float]:
        """Make the items for ``layout``, pausing (yielding the fraction done) after every
        ``chunk`` items, so that a caller can keep the window responsive."""
        self.build_empty()
        total = max(len(layout.groups) + len(layout.nodes) + len(doc), 1)
        made = 0
        self.layout = layout
        self.tree = {g.path: g for g in drawn_tree(doc).walk()}
        for path, group in self.tree.items():
            for child in group.children:
                self.parent_of[group_key(child)] = path
            for name in group.nodes:
                self.parent_of[name] = path
        for path, box in layout.groups.items():
            group = self.tree.get(path)
            label = group_label(group) if group else path
            members = len(group.all_nodes()) if group else 0
            item = GroupItem(path, label, box, path in layout.collapsed, members)
            if item.collapsed and item.key in doc.positions:
                item.setPos(*doc.positions[item.key])
            self.groups[path] = item
            self._add(item, 2 if item.collapsed else 0)
            made += 1
            if made % chunk == 0:
                yield made / total
        bad = doc.shape_problem or ("", "")  # (node, error) an edit left
        for name, box in layout.nodes.items():
            node = doc.node(name)
            problem = bad[1] if bad[0] == name else None
            item = NodeItem(
                name, node.op, format_target(node), format_shape(node_shape(node)), box, problem
            )
            if name in doc.positions:  # the user put it there
                item.setPos(*doc.positions[name])
            self.nodes[name] = item
            self._add(item, 2)
            made += 1
            if made % chunk == 0:
                yield made / total
        # One edge per use between two drawn nodes (x * x: two edges); one edge per pair
        # where a collapsed group stands for several nodes; stubs for shared values.
        keys: dict[EdgeKey, list[str]] = {}
        first_use: set[str] = set()
        for src, dst, label in doc.edges():
            a, b = layout.visible(src), layout.visible(dst)
            if a == b:
                continue
            if src in layout.shared and (src in first_use or first_use.add(src)):
                # A shared value: one edge to its first user (as laid out), stubs elsewhere.
                keys.setdefault((src, b, None, True), []).append(label if b == dst else dst)
            elif (a, b) == (src, dst):
                keys.setdefault((a, b, label, False), []).append(label)
            else:
                keys.setdefault((a, b, None, False), []).append(f"{src} → {dst}")
        inputs: dict[str, list[EdgeKey]] = {}
        for key in keys:
            inputs.setdefault(key[1], []).append(key)
        for key, labels in keys.items():
            a, b, label, stub = key
            slots = inputs[b]
            self._add_edge(
                self.item(layout.visible(a)),
                self.item(b),
                labels,
                slots.index(key),
                len(slots),
                stub=a if stub else None,
                label=label,
            )
            made += 1
            if made % chunk == 0:
                yield min(made / total, 0.99)
        self._bounds = QRectF(0, 0, layout.width, layout.height)
        for key in doc.positions:
            item = self.item_by_key(key)
            if item is not None:
                self._bounds = self._bounds.united(item.sceneBoundingRect())
        self._dirty = {self.parent_of[k] for k in doc.positions if k in self.parent_of}
        self.refit_frames()
        margin = 40
        self.setSceneRect(
            QRectF(-margin, -margin, layout.width + 2 * margin, layout.height + 2 * margin)
        )

    def _add_edge(self, sa, sb, labels, index, count, stub=None, label=None) -> None:
        if sa is None or sb is None:
            return
        edge = EdgeItem(sa, sb, labels, (index, count), stub)
        edge.label = label  # the argument it feeds (a use between two drawn nodes)
        sa.edges.append(edge)
        sb.edges.append(edge)
        self.edges.append(edge)
        self._add(edge, 1)
        if self._overview is not None:
            self._overview.add_edge(edge)

    # --- one edit at a time, without a new layout --------------------------------------------

    def patch(self, doc: GraphDocument, names: Iterable[str], reshaped: Iterable[str] = ()) -> bool:
        """Show an edit of a few nodes in place: items for removed nodes go, new and changed
        nodes get new items (new ones next to their first input), and only their edges are
        redrawn; nodes whose shape changed get their new label.  False when the change needs
        a new layout (a node inside a collapsed group, or too much changed); nothing is
        changed then."""
        layout = self.layout
        if layout is None:
            return False
        index = doc.node_index()
        removed = [n for n in self.nodes if n not in index]
        redo = {n for n in names if n in index} | {n for n in index if n not in self.nodes}
        redo -= set(layout.owner)  # hidden inside a collapsed group: nothing drawn
        if doc.shape_problem and doc.shape_problem[0] in self.nodes:
            redo.add(doc.shape_problem[0])  # (a big graph's may name a node an undo removed)
        redo &= index.keys()
        redo |= {n for n, item in self.nodes.items() if item.problem and n in index}
        relabel = {n for n in reshaped if n in self.nodes and n in index and n not in redo}
        for name in list(relabel):  # a label that no longer fits: a new, wider item
            if node_size(doc, name)[0] != self.nodes[name].rect.width():
                relabel.discard(name)
                redo.add(name)
        if len(removed) + len(redo) > PATCH_LIMIT:
            return False
        for name in redo:
            if name not in self.nodes and self._hidden_group(doc.node(name)) is not None:
                return False  # it belongs inside a collapsed group: lay out again
        old_pos: dict[str, QPointF] = {}
        for name in [*removed, *redo]:
            item = self.nodes.pop(name, None)
            if item is None:
                continue
            old_pos[name] = item.pos()
            for edge in list(item.edges):
                self._drop_edge(edge)
            self.moved(name)
            group = self.tree.get(self.parent_of.pop(name, ""))
            if group is not None and name in group.nodes:
                group.nodes.remove(name)
            if self._overview is not None:
                self._overview.forget(item)
            self.removeItem(item)
        bad = doc.shape_problem or ("", "")
        order = {n: i for i, n in enumerate(index)}
        for name in sorted(redo, key=order.__getitem__):
            node = index[name]
            w, h = node_size(doc, name)
            item = NodeItem(
                name,
                node.op,
                format_target(node),
                format_shape(node_shape(node)),
                Box(0, 0, w, h),
                bad[1] if bad[0] == name else None,
            )
            item.setPos(old_pos.get(name) or self._place_new(doc, node, layout))
            self.nodes[name] = item
            parent = self.parent_of[name] = self._drawn_group(node)
            if parent in self.tree:  # its frame fits around it
                self.tree[parent].nodes.append(name)
            self._add(item, 2)
            if self._overview is not None:
                self._overview.add(item)
            self.moved(name)
        # The edges of every node made again: all its inputs and all its users.
        keys: dict[EdgeKey, list[str]] = {}
        for name in redo:
            for label, src in doc.inputs(name):
                a = layout.visible(src)
                keys.setdefault((a, name, label if a == src else None, False), []).append(label)
            for user in doc.users(name):
                if user in redo:
                    continue
                b = layout.visible(user)
                for label, src in doc.inputs(user):
                    if src == name:
                        direct = b == user
                        text = label if direct else f"{name} → {user}"
                        keys.setdefault((name, b, label if direct else None, False), []).append(
                            text
                        )
        targets = set()
        for (a, b, label, _stub), labels in keys.items():
            sa, sb = self.item(a), self.item(b)
            if sa is None or sb is None or sa is sb:
                continue
            stub = a if a in layout.shared and a in self.nodes else None
            self._add_edge(sa, sb, labels, 0, 1, stub, label)
            targets.add(b)
        for b in targets:  # inputs enter side by side in argument order
            self._reslot(doc, layout, b)
        for name in relabel:
            item = self.nodes[name]
            item.lines[2] = format_shape(node_shape(index[name]))
            item.update()
        self.refit_frames()
        return True

    def _drop_edge(self, edge: EdgeItem) -> None:
        for end in (edge.source, edge.target):
            if edge in end.edges:
                end.edges.remove(edge)
        if edge in self.edges:
            self.edges.remove(edge)
        if self._overview is not None:
            self._overview.forget_edge(edge)
        self.removeItem(edge)

    def _reslot(self, doc: GraphDocument, layout: Layout, key: str) -> None:
        item = self.item(key)
        if not isinstance(item, NodeItem):
            return
        order: list[tuple[str, str | None]] = []
        for label, src in doc.inputs(key):
            a = layout.visible(src)
            entry = (a, label if a == src else None)
            if entry not in order:
                order.append(entry)
        incoming = [e for e in item.edges if e.target is item]
        for edge in incoming:
            entry = (edge.stub or edge.source_name, edge.label)
            i = order.index(entry) if entry in order else 0
            edge.slot = (i, max(len(order), 1))
            edge.update_path()
            if self._overview is not None:
                self._overview.edge_moved(edge)

    def _hidden_group(self, node: fx.Node) -> str | None:
        """The collapsed group a node would be inside, if any."""
        layout = self.layout
        for path, _type in (node.meta.get("nn_module_stack") or {}).values():
            if layout is not None and str(path) in layout.collapsed:
                return str(path)
        return None

    def _drawn_group(self, node: fx.Node) -> str:
        """The innermost drawn frame a node sits in ("" for none)."""
        inner = ""
        for path, _type in (node.meta.get("nn_module_stack") or {}).values():
            if str(path) in self.groups and not self.groups[str(path)].collapsed:
                inner = str(path)
        return inner

    def _place_new(self, doc: GraphDocument, node: fx.Node, layout: Layout) -> QPointF:
        """Where a node without a place goes: where the layout had it (an undone delete), or
        beside its first drawn input, a little lower; else at :attr:`place_hint`."""
        if node.name in layout.nodes:
            box = layout.nodes[node.name]
            return QPointF(box.x, box.y)
        for arg in node.all_input_nodes:
            item = self.item(layout.visible(arg.name))
            if item is not None:
                return item.pos() + QPointF(item.rect.width() + 30, NODE_GAP)
        return QPointF(self.place_hint)  # nothing to sit beside: where the user is looking

    def _add(self, item: QGraphicsItem, z: float) -> None:
        """Frames (0) under edges (1) under nodes and collapsed groups (2)."""
        self.addItem(item)
        item.setZValue(z)

    def item(self, key: str):
        return self.nodes.get(key) or self.groups.get(key)

    def item_by_key(self, key: str) -> BoxItem | None:
        if key.startswith("group:"):
            return self.groups.get(key[len("group:") :])
        return self.nodes.get(key)

    def members(self, path: str) -> list[BoxItem]:
        """The movable items drawn inside an expanded group (at any depth)."""
        out: list[BoxItem] = []
        group = self.tree.get(path)
        if group is None:
            return out
        for g in group.walk():
            item = self.groups.get(g.path)
            if g.path != path and item is not None and item.collapsed:
                out.append(item)
            out.extend(self.nodes[n] for n in g.nodes if n in self.nodes)
        return out

    def overview(self) -> Overview:
        """The zoomed-out picture of the scene as it is now."""
        if self._overview is None:
            self._overview = Overview(self)
        return self._overview

    def _selection_changed(self) -> None:
        if self._overview is not None:
            self._overview.select(self.selectedItems())

    def content_rect(self) -> QRectF:
        """What the items cover (like ``itemsBoundingRect()``, without asking each of
        thousands of items for its box)."""
        return QRectF(self._bounds)

    def moved(self, key: str) -> None:
        """An item moved: the frames around it must fit again (see :meth:`refit_frames`)."""
        item = self.item_by_key(key)
        if item is not None:
            self._bounds = self._bounds.united(item.sceneBoundingRect())
            if self._overview is not None:
                self._overview.moved(item)
        parent = self.parent_of.get(key)
        if parent:
            self._dirty.add(parent)

    def refit_frames(self) -> None:
        """Fit each dirty expanded frame to what it holds, innermost first."""
        while self._dirty:
            path = max(self._dirty, key=lambda p: p.count("."))
            self._dirty.discard(path)
            frame = self.groups.get(path)
            group = self.tree.get(path)
            if frame is None or frame.collapsed or group is None:
                continue
            inside = [self.nodes[n] for n in group.nodes if n in self.nodes]
            inside += [self.groups[c] for c in group.children if c in self.groups]
            if not inside:
                continue
            rect = QRectF()
            for item in inside:
                rect = rect.united(item.rect.translated(item.pos()))
            rect = rect.adjusted(-GROUP_PAD, -GROUP_PAD - GROUP_TITLE, GROUP_PAD, GROUP_PAD)
            if rect.size() != frame.rect.size():
                frame.prepareGeometryChange()
                frame.rect = QRectF(0, 0, rect.width(), rect.height())
            if frame.pos() != rect.topLeft():
                frame.setPos(rect.topLeft())
            if self._overview is not None:
                self._overview.refresh_frames()
            parent = self.parent_of.get(frame.key)
            if parent:
                self._dirty.add(parent)

    def move_nodes(self, positions: dict[str, tuple[float, float] | None]) -> None:
        """Show the document's positions (after a move, an undo or a redo)."""
        layout = self.layout
        for key, pos in positions.items():
            item = self.item_by_key(key)
            if item is None:
                continue
            if pos is None and layout is not None:
                box = layout.groups.get(item.name) if isinstance(item, GroupItem) else None
                box = box or layout.nodes.get(key)
                pos = (box.x, box.y) if box is not None else None
            if pos is not None and (item.pos().x(), item.pos().y()) != pos:
                item.setPos(*pos)
                item.follow()
        self.refit_frames()

    def _movable_selection(self) -> list[BoxItem]:
        return [i for i in self.selectedItems() if isinstance(i, BoxItem)]

    # --- the wiring tool: drag from a node's output port onto another node -------------------

    def port_at(self, pos: QPointF) -> NodeItem | None:
        """The node whose output port (the dot under it) is at ``pos``."""
        for item in self.items(QRectF(pos.x() - PORT, pos.y() - PORT, 2 * PORT, 2 * PORT)):
            if isinstance(item, NodeItem) and item.op != "output":
                if QLineF(item.bottom(), pos).length() <= PORT:
                    return item
        return None

    def _wire_to(self, pos: QPointF) -> None:
        if self._wire is not None:
            source, line = self._wire
            line.setLine(QLineF(source.bottom(), pos))

    def mousePressEvent(self, event) -> None:  # noqa: N802
        self.group_drag = set()
        source = (
            self.port_at(event.scenePos()) if event.button() == Qt.MouseButton.LeftButton else None
        )
        if source is not None:
            line = self.addLine(QLineF(source.bottom(), event.scenePos()), _wire_pen())
            line.setZValue(5)
            self._wire = (source, line)
            event.accept()
            return
        super().mousePressEvent(event)
        if self.group_drag:
            items = [self.item_by_key(k) for k in self.group_drag]
        else:
            items = self._movable_selection()
        self._drag_start = {i.key: (i.pos().x(), i.pos().y()) for i in items if i is not None}
        self._drag_last = dict(self._drag_start)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        if self._wire is not None:
            self._wire_to(event.scenePos())
            return
        super().mouseMoveEvent(event)
        for key in self._drag_start:
            item = self.item_by_key(key)
            if item is not None and (item.pos().x(), item.pos().y()) != self._drag_last.get(key):
                self._drag_last[key] = (item.pos().x(), item.pos().y())
                item.follow()
        self.refit_frames()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        if self._wire is not None:
            source, line = self._wire
            self._wire = None
            self.removeItem(line)
            target = next(
                (
                    i
                    for i in self.items(event.scenePos())
                    if isinstance(i, NodeItem) and i is not source and i.op != "placeholder"
                ),
                None,
            )
            if target is not None:
                x = target.mapFromScene(event.scenePos()).x() / max(target.rect.width(), 1.0)
                self.rewireRequested.emit(source.name, target.name, min(max(x, 0.0), 1.0))
            return
        super().mouseReleaseEvent(event)
        start, self._drag_start, self.group_drag = self._drag_start, {}, set()
        moved_from, moved_to = {}, {}
        for key, before in start.items():
            item = self.item_by_key(key)
            if item is not None and (item.pos().x(), item.pos().y()) != before:
                moved_from[key] = before
                moved_to[key] = (item.pos().x(), item.pos().y())
        if moved_to:
            self.nodesMoved.emit(moved_from, moved_to)

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802
        for item in self.items(event.scenePos()):
            if isinstance(item, GroupItem):
                self.groupToggled.emit(item.path)
                event.accept()
                return
        super().mouseDoubleClickEvent(event)


class Overview:
    """The zoomed-out picture, drawn without the items: coloured boxes and straight edges.

    Far out, a view shows thousands of items, and a Python ``paint`` per item costs more than
    a frame.  This draws the same shapes the items draw at that zoom (boxes without text) in
    a few batched calls, culled to the visible area with arrays.  The scene keeps it up to
    date item by item (:meth:`moved`, :meth:`select`): making it costs a quarter of a second
    at 10,000 nodes, too much for every click.
    """

    def __init__(self, scene: GraphScene) -> None:
        import numpy as np

        self._np = np
        self.scene = scene
        self.refresh_frames()
        self.items: list[BoxItem] = [*scene.nodes.values()]
        self.items += [g for g in scene.groups.values() if g.collapsed]
        self.index = {id(item): i for i, item in enumerate(self.items)}
        self.boxes = [item.rect.translated(item.pos()) for item in self.items]
        self.style = [_style(i) for i in self.items]
        self.selected: set[int] = set()
        self.select(scene.selectedItems())
        self.edges: list[EdgeItem | None] = list(scene.edges)
        self.edge_index = {id(edge): j for j, edge in enumerate(self.edges)}
        self.edges_of: dict[int, list[int]] = {}
        for j, edge in enumerate(self.edges):
            self.edges_of.setdefault(id(edge.source), []).append(j)
            self.edges_of.setdefault(id(edge.target), []).append(j)
        self.lines = [_line(edge) for edge in self.edges]
        self._boxes = np.array([_extent(r) for r in self.boxes] or np.zeros((0, 4))).reshape(-1, 4)
        self._lines = np.array([_line_extent(e) for e in self.edges] or np.zeros((0, 4))).reshape(
            -1, 4
        )

    def restyle(self) -> None:
        self.style = [_style(i) for i in self.items]

    # An edit patched into the scene changes a few entries: a removed one is never drawn
    # again (its extent is empty), a new one is appended.

    def add(self, item: BoxItem) -> None:
        self.index[id(item)] = len(self.items)
        self.items.append(item)
        self.boxes.append(item.rect.translated(item.pos()))
        self.style.append(_style(item))
        self._boxes = self._np.vstack([self._boxes, [_extent(self.boxes[-1])]])

    def forget(self, item: BoxItem) -> None:
        i = self.index.pop(id(item), None)
        if i is not None:
            self._boxes[i] = _NOWHERE
            self.selected.discard(i)
            self.edges_of.pop(id(item), None)

    def add_edge(self, edge: EdgeItem) -> None:
        j = self.edge_index[id(edge)] = len(self.edges)
        self.edges.append(edge)
        self.edges_of.setdefault(id(edge.source), []).append(j)
        self.edges_of.setdefault(id(edge.target), []).append(j)
        self.lines.append(_line(edge))
        self._lines = self._np.vstack([self._lines, [_line_extent(edge)]])

    def forget_edge(self, edge: EdgeItem) -> None:
        j = self.edge_index.pop(id(edge), None)
        if j is not None:
            self.edges[j] = None
            self._lines[j] = _NOWHERE

    def edge_moved(self, edge: EdgeItem) -> None:
        j = self.edge_index.get(id(edge))
        if j is not None:
            self.lines[j] = _line(edge)
            self._lines[j] = _line_extent(edge)

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
        self._boxes[i] = _extent(self.boxes[i])
        for j in self.edges_of.get(id(item), ()):
            edge = self.edges[j]
            if edge is not None:
                self.lines[j] = _line(edge)
                self._lines[j] = _line_extent(edge)

    def boxes_in(self, area: QRectF) -> dict[str, list[QRectF]]:
        """The boxes that meet ``area``, by border colour."""
        out: dict[str, list[QRectF]] = {}
        for i in self._visible(self._boxes, area):
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
        painter.drawLines([self.lines[i] for i in self._visible(self._lines, area)])
        groups: dict[tuple[str, str], list[QRectF]] = {}
        chosen: list[QRectF] = []
        for i in self._visible(self._boxes, area):
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


def _content(scene: QGraphicsScene) -> QRectF:
    return scene.content_rect() if isinstance(scene, GraphScene) else scene.itemsBoundingRect()


class CanvasView(QGraphicsView):
    """Zoom with the wheel or +/-, pan by dragging the background or with the middle button."""

    ZOOM_STEP = 1.2
    OVERVIEW_SCALE = 0.2  # below this zoom the scene is drawn by its Overview, not its items
    viewChanged = Signal()  # noqa: N815 - scrolled, zoomed or resized

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setOptimizationFlag(QGraphicsView.OptimizationFlag.DontSavePainterState)
        self._pan_from = None

    def zoom(self, factor: float) -> None:
        scale = self.transform().m11() * factor
        if 0.02 <= scale <= 8:
            self.scale(factor, factor)
            self.viewChanged.emit()

    def zoom_in(self) -> None:
        self.zoom(self.ZOOM_STEP)

    def zoom_out(self) -> None:
        self.zoom(1 / self.ZOOM_STEP)

    def actual_size(self) -> None:
        self.resetTransform()
        self.viewChanged.emit()

    def fit(self) -> None:
        """Show the whole graph (never magnified past 150%)."""
        if self.scene() is not None:
            rect = _content(self.scene()).adjusted(-20, -20, 20, 20)
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
            if self.transform().m11() > 1.5:
                self.resetTransform()
                self.scale(1.5, 1.5)
            self.viewChanged.emit()

    def first_view(self) -> None:
        """The view of a freshly opened graph: all of it if that stays readable, else its top
        at a readable zoom (a deep model is a tall, thin picture)."""
        self.fit()
        if self.transform().m11() < 0.6 and self.scene() is not None:
            self.resetTransform()
            self.scale(0.85, 0.85)
            rect = _content(self.scene())
            self.centerOn(rect.center().x(), rect.top() + self.viewport().height() / 2 / 0.85)
            self.viewChanged.emit()

    def paintEvent(self, event) -> None:  # noqa: N802
        scene = self.scene()
        if not isinstance(scene, GraphScene) or self.transform().m11() >= self.OVERVIEW_SCALE:
            super().paintEvent(event)
            return
        painter = QPainter(self.viewport())
        painter.fillRect(event.rect(), scene.backgroundBrush())
        painter.setTransform(self.viewportTransform())
        area = self.mapToScene(event.rect()).boundingRect()
        scene.overview().draw(painter, area)
        painter.end()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802
        super().scrollContentsBy(dx, dy)
        self.viewChanged.emit()

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.viewChanged.emit()

    def wheelEvent(self, event) -> None:  # noqa: N802
        delta = event.angleDelta().y()
        if delta:
            self.zoom(self.ZOOM_STEP if delta > 0 else 1 / self.ZOOM_STEP)
        event.accept()

    def mousePressEvent(self, event) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.MiddleButton:
            self._pan_from = event.position()
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event) -> None:  # noqa: N802
        if self._pan_from is not None:
            delta = event.position() - self._pan_from
            self._pan_from = event.position()
            self.horizontalScrollBar().setValue(self.horizontalScrollBar().value() - int(delta.x()))
            self.verticalScrollBar().setValue(self.verticalScrollBar().value() - int(delta.y()))
            event.accept()
            return
        super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.MiddleButton:
            self._pan_from = None
            event.accept()
            return
        super().mouseReleaseEvent(event)
