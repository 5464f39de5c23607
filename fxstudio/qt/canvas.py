"""The canvas: the graph drawn from a :class:`~fxstudio.core.layout.Layout`.

Items are keyed by node name (``NodeItem``), module path (``GroupItem``) and edge
(``EdgeItem``).  The scene never changes the graph: selecting items updates the shared
:class:`SelectionModel`; double-clicking a group asks the controller to collapse or expand
it, which lays the graph out again (in a worker thread) and rebuilds the scene.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
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
    QGraphicsPathItem,
    QGraphicsScene,
    QGraphicsView,
    QStyleOptionGraphicsItem,
    QWidget,
)

from fxstudio.core.capture import format_shape, node_shape
from fxstudio.core.document import GraphDocument, format_target
from fxstudio.core.layout import Box, Layout, drawn_tree, group_label

OP_COLORS = {
    "placeholder": "#d1fae5",
    "get_attr": "#fef3c7",
    "call_function": "#dbeafe",
    "call_method": "#e0e7ff",
    "call_module": "#fce7f3",
    "output": "#e5e7eb",
}
OP_BORDERS = {
    "placeholder": "#059669",
    "get_attr": "#d97706",
    "call_function": "#2563eb",
    "call_method": "#4f46e5",
    "call_module": "#db2777",
    "output": "#4b5563",
}
DETAIL_SCALE = 0.45  # below this zoom, nodes are drawn as plain shapes without text


def _lod(option: QStyleOptionGraphicsItem, painter: QPainter) -> float:
    return option.levelOfDetailFromTransform(painter.worldTransform())


class NodeItem(QGraphicsItem):
    """One node: a rounded box coloured by op, with name, target and output shape."""

    def __init__(self, name: str, op: str, target: str, shape: str, box: Box) -> None:
        super().__init__()
        self.name = name
        self.op = op
        self.lines = [name, target if target != name else "", shape]
        self.rect = QRectF(0, 0, box.w, box.h)
        self.setPos(box.x, box.y)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsMovable)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges)
        self.edges: list[EdgeItem] = []
        self.setToolTip(f"{name}\n{op}: {target}\n{shape}")
        self.setZValue(2)

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self.rect.adjusted(-2, -2, 2, 2)

    def itemChange(self, change, value):  # noqa: N802
        if change == QGraphicsItem.GraphicsItemChange.ItemPositionHasChanged:
            for edge in self.edges:
                edge.update_path()
        return super().itemChange(change, value)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        fill = QColor(OP_COLORS.get(self.op, "#f3f4f6"))
        border = QColor(OP_BORDERS.get(self.op, "#6b7280"))
        selected = self.isSelected()
        painter.setPen(QPen(QColor("#f59e0b") if selected else border, 3 if selected else 1.2))
        painter.setBrush(QBrush(fill))
        if _lod(option, painter) < DETAIL_SCALE:
            painter.drawRect(self.rect)
            return
        painter.drawRoundedRect(self.rect, 6, 6)
        font = QFont(painter.font())
        font.setPointSizeF(8.5)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("#111827"))
        r = self.rect.adjusted(6, 2, -6, -2)
        third = r.height() / 3
        painter.drawText(
            QRectF(r.x(), r.y(), r.width(), third), Qt.AlignmentFlag.AlignCenter, self.lines[0]
        )
        font.setBold(False)
        font.setPointSizeF(7.5)
        painter.setFont(font)
        painter.setPen(QColor("#374151"))
        painter.drawText(
            QRectF(r.x(), r.y() + third, r.width(), third),
            Qt.AlignmentFlag.AlignCenter,
            self.lines[1],
        )
        painter.setPen(QColor("#6b7280"))
        painter.drawText(
            QRectF(r.x(), r.y() + 2 * third, r.width(), third),
            Qt.AlignmentFlag.AlignCenter,
            self.lines[2],
        )

    def top(self) -> QPointF:
        return self.pos() + QPointF(self.rect.width() / 2, 0)

    def bottom(self) -> QPointF:
        return self.pos() + QPointF(self.rect.width() / 2, self.rect.height())


class GroupItem(QGraphicsItem):
    """A module: a frame around its nodes, or (collapsed) one box standing for all of them."""

    def __init__(self, path: str, label: str, box: Box, collapsed: bool, members: int) -> None:
        super().__init__()
        self.path = path
        self.name = path  # collapsed groups stand in for nodes: the same key as NodeItem
        self.label = label
        self.collapsed = collapsed
        self.rect = QRectF(0, 0, box.w, box.h)
        self.setPos(box.x, box.y)
        self.setZValue(2 if collapsed else 0)
        self.edges: list[EdgeItem] = []
        if collapsed:
            self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        what = "expand" if collapsed else "collapse"
        self.setToolTip(f"{label}\n{members} nodes — double-click to {what}")

    def boundingRect(self) -> QRectF:  # noqa: N802
        return self.rect.adjusted(-2, -2, 2, 2)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        detailed = _lod(option, painter) >= DETAIL_SCALE * 0.5
        if self.collapsed:
            selected = self.isSelected()
            painter.setPen(
                QPen(QColor("#f59e0b") if selected else QColor("#7c3aed"), 3 if selected else 1.5)
            )
            painter.setBrush(QColor("#ede9fe"))
            painter.drawRoundedRect(self.rect, 8, 8)
            if detailed:
                painter.setPen(QColor("#4c1d95"))
                font = QFont(painter.font())
                font.setPointSizeF(8.5)
                font.setBold(True)
                painter.setFont(font)
                painter.drawText(self.rect, Qt.AlignmentFlag.AlignCenter, f"▸ {self.label}")
            return
        painter.setPen(QPen(QColor("#a78bfa"), 1, Qt.PenStyle.DashLine))
        painter.setBrush(QColor(245, 243, 255, 120))
        painter.drawRoundedRect(self.rect, 8, 8)
        if detailed:
            painter.setPen(QColor("#6d28d9"))
            font = QFont(painter.font())
            font.setPointSizeF(7.5)
            painter.setFont(font)
            painter.drawText(
                self.rect.adjusted(8, 3, -8, 0),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                f"▾ {self.label}",
            )

    def top(self) -> QPointF:
        return self.pos() + QPointF(self.rect.width() / 2, 0)

    def bottom(self) -> QPointF:
        return self.pos() + QPointF(self.rect.width() / 2, self.rect.height())


class EdgeItem(QGraphicsPathItem):
    """Producer -> user, a curve with an arrowhead; its tooltip says which argument it feeds."""

    def __init__(self, source, target, labels: list[str], slot: tuple[int, int] = (0, 1)) -> None:
        super().__init__()
        self.source = source
        self.target = target
        self.slot = slot
        self.source_name = source.name
        self.target_name = target.name
        self.setPen(QPen(QColor("#6b7280"), 1.2))
        self.setZValue(1)
        self.setToolTip(f"{source.name} → {target.name}: {', '.join(labels)}")
        self.setAcceptHoverEvents(True)
        self.update_path()

    def update_path(self) -> None:
        """Follow the two items (after one of them moved)."""
        self.prepareGeometryChange()
        source, target = self.source, self.target
        start, end = source.bottom(), target.top()
        index, count = self.slot  # several inputs enter the user side by side, in argument order
        if count > 1:
            width = target.rect.width() * 0.7
            end = end + QPointF(-width / 2 + width * index / (count - 1), 0)
        path = QPainterPath(start)
        dy = max(abs(end.y() - start.y()) * 0.5, 20.0)
        path.cubicTo(start + QPointF(0, dy), end - QPointF(0, dy), end)
        self.setPath(path)
        # The arrowhead points along the curve's last tangent, into the user.
        angle = math.radians(-path.angleAtPercent(1.0))
        size = 7.0
        back = QPointF(math.cos(angle), math.sin(angle))
        side = QPointF(-back.y(), back.x())
        self.arrow = QPolygonF(
            [end, end - back * size + side * 3.5, end - back * size - side * 3.5]
        )

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget=None) -> None:
        painter.setPen(self.pen())
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path())
        if _lod(option, painter) >= DETAIL_SCALE * 0.5:
            painter.setBrush(self.pen().color())
            painter.drawPolygon(self.arrow)

    def boundingRect(self) -> QRectF:  # noqa: N802
        return super().boundingRect().united(self.arrow.boundingRect()).adjusted(-2, -2, 2, 2)

    def shape(self) -> QPainterPath:
        stroker = QPainterPathStroker()
        stroker.setWidth(8)
        return stroker.createStroke(self.path())


class GraphScene(QGraphicsScene):
    """Items for one layout of one document."""

    groupToggled = Signal(str)  # noqa: N815 - a group was double-clicked
    nodesMoved = Signal(dict, dict)  # noqa: N815 - a drag ended: {name: before}, {name: after}

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.nodes: dict[str, NodeItem] = {}
        self.groups: dict[str, GroupItem] = {}
        self.edges: list[EdgeItem] = []
        self.layout: Layout | None = None
        self.setBackgroundBrush(QColor("#fafafa"))
        self.setItemIndexMethod(QGraphicsScene.ItemIndexMethod.BspTreeIndex)

    def build_empty(self) -> None:
        self.clear()
        self.nodes, self.groups, self.edges = {}, {}, []
        self.layout = None

    def build(self, doc: GraphDocument, layout: Layout) -> None:
        self.clear()
        self.nodes, self.groups, self.edges = {}, {}, []
        self.layout = layout
        tree = {g.path: g for g in drawn_tree(doc).walk()}
        for path, box in layout.groups.items():
            group = tree.get(path)
            label = group_label(group) if group else path
            members = len(group.all_nodes()) if group else 0
            item = GroupItem(path, label, box, path in layout.collapsed, members)
            self.groups[path] = item
            self.addItem(item)
        for name, box in layout.nodes.items():
            node = doc.node(name)
            item = NodeItem(name, node.op, format_target(node), format_shape(node_shape(node)), box)
            if name in doc.positions:  # the user put it there
                item.setPos(*doc.positions[name])
            self.nodes[name] = item
            self.addItem(item)
        seen: dict[tuple[str, str], list[str]] = {}
        for src, dst, label in doc.edges():
            a, b = layout.visible(src), layout.visible(dst)
            if a == b:
                continue
            seen.setdefault((a, b), []).append(label if (a, b) == (src, dst) else f"{src} → {dst}")
        inputs: dict[str, list[str]] = {}
        for a, b in seen:
            inputs.setdefault(b, []).append(a)
        for (a, b), labels in seen.items():
            sa, sb = self.item(a), self.item(b)
            if sa is None or sb is None:
                continue
            edge = EdgeItem(sa, sb, labels, (inputs[b].index(a), len(inputs[b])))
            sa.edges.append(edge)
            sb.edges.append(edge)
            self.edges.append(edge)
            self.addItem(edge)
        margin = 40
        self.setSceneRect(
            QRectF(-margin, -margin, layout.width + 2 * margin, layout.height + 2 * margin)
        )

    def item(self, key: str):
        return self.nodes.get(key) or self.groups.get(key)

    def move_nodes(self, positions: dict[str, tuple[float, float] | None]) -> None:
        """Show the document's positions (after a move, an undo or a redo)."""
        layout = self.layout
        for name, pos in positions.items():
            item = self.nodes.get(name)
            if item is None:
                continue
            if pos is None and layout is not None and name in layout.nodes:
                pos = (layout.nodes[name].x, layout.nodes[name].y)
            if pos is not None and (item.pos().x(), item.pos().y()) != pos:
                item.setPos(*pos)

    def mousePressEvent(self, event) -> None:  # noqa: N802
        super().mousePressEvent(event)
        self._drag_start = {
            i.name: (i.pos().x(), i.pos().y())
            for i in self.selectedItems()
            if isinstance(i, NodeItem)
        }

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802
        super().mouseReleaseEvent(event)
        start = getattr(self, "_drag_start", {})
        self._drag_start = {}
        moved_from, moved_to = {}, {}
        for name, before in start.items():
            item = self.nodes.get(name)
            if item is not None and (item.pos().x(), item.pos().y()) != before:
                moved_from[name] = before
                moved_to[name] = (item.pos().x(), item.pos().y())
        if moved_to:
            self.nodesMoved.emit(moved_from, moved_to)

    def mouseDoubleClickEvent(self, event) -> None:  # noqa: N802
        for item in self.items(event.scenePos()):
            if isinstance(item, GroupItem):
                self.groupToggled.emit(item.path)
                event.accept()
                return
        super().mouseDoubleClickEvent(event)


class CanvasView(QGraphicsView):
    """Zoom with the wheel or +/-, pan by dragging the background or with the middle button."""

    ZOOM_STEP = 1.2

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

    def zoom_in(self) -> None:
        self.zoom(self.ZOOM_STEP)

    def zoom_out(self) -> None:
        self.zoom(1 / self.ZOOM_STEP)

    def actual_size(self) -> None:
        self.resetTransform()

    def fit(self) -> None:
        """Show the whole graph (never magnified past 150%)."""
        if self.scene() is not None:
            rect = self.scene().itemsBoundingRect().adjusted(-20, -20, 20, 20)
            self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
            if self.transform().m11() > 1.5:
                self.resetTransform()
                self.scale(1.5, 1.5)

    def first_view(self) -> None:
        """The view of a freshly opened graph: all of it if that stays readable, else its top
        at a readable zoom (a deep model is a tall, thin picture)."""
        self.fit()
        if self.transform().m11() < 0.6 and self.scene() is not None:
            self.resetTransform()
            self.scale(0.85, 0.85)
            rect = self.scene().itemsBoundingRect()
            self.centerOn(rect.center().x(), rect.top() + self.viewport().height() / 2 / 0.85)

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
