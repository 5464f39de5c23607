"""What the mouse does on the canvas, one class per interaction (as orange-canvas-core's
``interactions.py``): draw a wire from a node's output port onto another node, click a
shared value's stub, drag an expanded module by its title, drag nodes, and -- on the view --
drag a box around nodes to select them.

A scene tool takes a press or leaves it to the next (:class:`~fxstudio.qt.canvas.scene.Tool`);
none of them changes the graph: they emit what the user did and the controller calls the
document.
"""

from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QGraphicsLineItem, QGraphicsSceneMouseEvent, QGraphicsView

from fxstudio.qt.canvas.items import BoxItem, EdgeItem, GroupItem, NodeItem, wire_pen
from fxstudio.qt.canvas.scene import GraphScene, Tool

PORT = 6.0  # radius of a node's output port, where a wire drag starts
LEFT = Qt.MouseButton.LeftButton


class WireTool(Tool):
    """Drag from a node's output port (the dot under it) onto another node: that node's
    argument nearest the drop takes the value (``rewireRequested``)."""

    def __init__(self, scene: GraphScene) -> None:
        super().__init__(scene)
        self.source: NodeItem | None = None
        self.line: QGraphicsLineItem | None = None

    def port_at(self, pos: QPointF) -> NodeItem | None:
        """The node whose output port is at ``pos``."""
        area = QRectF(pos.x() - PORT, pos.y() - PORT, 2 * PORT, 2 * PORT)
        for item in self.scene.items(area):
            if isinstance(item, NodeItem) and item.op != "output":
                if QLineF(item.bottom(), pos).length() <= PORT:
                    return item
        return None

    def press(self, event: QGraphicsSceneMouseEvent) -> bool:
        source = self.port_at(event.scenePos()) if event.button() == LEFT else None
        if source is None:
            return False
        self.source = source
        self.line = self.scene.addLine(QLineF(source.bottom(), event.scenePos()), wire_pen())
        self.line.setZValue(5)
        event.accept()
        return True

    def move(self, event: QGraphicsSceneMouseEvent) -> None:
        if self.source is not None and self.line is not None:
            self.line.setLine(QLineF(self.source.bottom(), event.scenePos()))

    def release(self, event: QGraphicsSceneMouseEvent) -> None:
        source, line = self.source, self.line
        self.source = self.line = None
        if line is not None:
            self.scene.removeItem(line)
        if source is None:
            return
        target = next(
            (
                i
                for i in self.scene.items(event.scenePos())
                if isinstance(i, NodeItem) and i is not source and i.op != "placeholder"
            ),
            None,
        )
        if target is not None:
            x = target.mapFromScene(event.scenePos()).x() / max(target.rect.width(), 1.0)
            self.scene.rewireRequested.emit(source.name, target.name, min(max(x, 0.0), 1.0))


class StubTool(Tool):
    """Click a shared value's stub (a short labelled arrow) to select that value."""

    def press(self, event: QGraphicsSceneMouseEvent) -> bool:
        if event.button() != LEFT:
            return False
        for item in self.scene.items(event.scenePos()):
            if isinstance(item, EdgeItem) and item.stub:
                self.scene.jumpRequested.emit(item.stub)
                event.accept()
                return True
        return False


class _Moves(Tool):
    """Keeps the edges and frames of moving items up to date, and says at the end which
    items moved from where to where (``nodesMoved``: one undo step)."""

    def __init__(self, scene: GraphScene) -> None:
        super().__init__(scene)
        self.start: dict[str, tuple[float, float]] = {}
        self.last: dict[str, tuple[float, float]] = {}

    def track(self, items: list[BoxItem]) -> None:
        self.start = {i.key: (i.pos().x(), i.pos().y()) for i in items}
        self.last = dict(self.start)

    def follow(self) -> None:
        for key in self.start:
            item = self.scene.item_by_key(key)
            if item is not None and (item.pos().x(), item.pos().y()) != self.last.get(key):
                self.last[key] = (item.pos().x(), item.pos().y())
                item.follow()
        self.scene.refit_frames()

    def finish(self) -> None:
        start, self.start = self.start, {}
        moved_from, moved_to = {}, {}
        for key, before in start.items():
            item = self.scene.item_by_key(key)
            if item is not None and (item.pos().x(), item.pos().y()) != before:
                moved_from[key] = before
                moved_to[key] = (item.pos().x(), item.pos().y())
        if moved_to:
            self.scene.nodesMoved.emit(moved_from, moved_to)


class GroupDragTool(_Moves):
    """Drag an expanded module by its title bar: everything inside comes along."""

    def __init__(self, scene: GraphScene) -> None:
        super().__init__(scene)
        self.origin = QPointF()
        self.items: dict[BoxItem, QPointF] = {}

    def press(self, event: QGraphicsSceneMouseEvent) -> bool:
        if event.button() != LEFT:
            return False
        pos = event.scenePos()
        group = next(
            (
                i
                for i in self.scene.items(pos)
                if isinstance(i, GroupItem) and not i.collapsed and i.in_title(i.mapFromScene(pos))
            ),
            None,
        )
        if group is None:
            return False
        members = self.scene.members(group.path)
        self.origin = pos
        self.items = {item: item.pos() for item in members}
        self.track(members)
        event.accept()
        return True

    def move(self, event: QGraphicsSceneMouseEvent) -> None:
        delta = event.scenePos() - self.origin
        for item, origin in self.items.items():
            item.setPos(origin + delta)
        self.follow()

    def release(self, event: QGraphicsSceneMouseEvent) -> None:
        self.items = {}
        self.finish()


class NodeDragTool(_Moves):
    """Qt's own press, move and release (select, Ctrl+click, move the selected items), with
    their edges and frames following; the last tool, it takes every press the others left
    (a press on the background stays unaccepted, and the view pans or draws a box)."""

    def press(self, event: QGraphicsSceneMouseEvent) -> bool:
        self.scene.default_press(event)
        self.track(self.scene.movable_selection())
        return True

    def move(self, event: QGraphicsSceneMouseEvent) -> None:
        self.scene.default_move(event)
        self.follow()

    def release(self, event: QGraphicsSceneMouseEvent) -> None:
        self.scene.default_release(event)
        self.finish()


def install(scene: GraphScene) -> None:
    """Give a new scene its tools, in the order they are offered a press."""
    scene.tools = [WireTool(scene), StubTool(scene), GroupDragTool(scene), NodeDragTool(scene)]


class RubberBandTool:
    """Shift (or Ctrl) + drag on the background of the view draws a box; the nodes it touches
    are selected (with Ctrl, added to the selection).  A plain drag pans.  The view calls
    :meth:`press` before its own press handling and :meth:`release` after its release."""

    MODIFIERS = Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.ControlModifier

    def __init__(self, view: QGraphicsView) -> None:
        self.view = view
        view.setRubberBandSelectionMode(Qt.ItemSelectionMode.IntersectsItemShape)

    def press(self, event: QMouseEvent) -> None:
        if event.button() != LEFT or not event.modifiers() & self.MODIFIERS:
            return
        item = self.view.itemAt(event.position().toPoint())
        if item is None or (isinstance(item, GroupItem) and not item.collapsed):
            self.view.setDragMode(QGraphicsView.DragMode.RubberBandDrag)

    def release(self, event: QMouseEvent) -> None:
        if self.view.dragMode() == QGraphicsView.DragMode.RubberBandDrag:
            self.view.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
