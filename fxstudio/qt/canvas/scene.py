"""The scene: the items of one layout of one document, kept up to date item by item as
edits land (:meth:`GraphScene.patch`), frames fitted to what they hold, and the far-out
picture (:mod:`~fxstudio.qt.canvas.overview`).

The scene never changes the graph: its tools emit what the user did (``nodesMoved``,
``rewireRequested``, ``groupToggled``, ``jumpRequested``) and the controller turns that into
document calls.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator

import torch.fx as fx
from PySide6.QtCore import QPointF, QRectF, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsSceneMouseEvent

from fxstudio.core.flows import layout as placing
from fxstudio.core.flows.layout import GROUP_PAD, GROUP_TITLE, Box, Drawing, Layout
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import ModuleGroup
from fxstudio.qt import theme
from fxstudio.qt.canvas.items import BoxItem, EdgeItem, GroupItem, NodeItem, text_metrics
from fxstudio.qt.canvas.overview import Overview

EdgeKey = tuple[str, str, "str | None", bool]  # source, target, argument (one use), stub
BUILD_BUDGET_S = 0.025  # work between two turns of the event loop while a scene is made
PATCH_LIMIT = 200  # an edit touching more nodes than this is shown by a new layout
NODE_GAP = 30.0


class Tool:
    """One mouse interaction on a :class:`GraphScene`: :meth:`press` takes a press (True) or
    leaves it to the next tool; the one that took it gets :meth:`move` and :meth:`release`."""

    def __init__(self, scene: GraphScene) -> None:
        self.scene = scene

    def press(self, event: QGraphicsSceneMouseEvent) -> bool:
        return False

    def move(self, event: QGraphicsSceneMouseEvent) -> None:
        pass

    def release(self, event: QGraphicsSceneMouseEvent) -> None:
        pass


class GraphScene(QGraphicsScene):
    """Items for one layout of one document.

    The mouse is the tools' (:mod:`fxstudio.qt.canvas.tools`): a press goes to each in turn,
    the first that takes it gets the moves and the release.
    """

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
        self._dirty: set[str] = set()  # frames to fit to what they hold
        self.tools: list[Tool] = []  # fxstudio.qt.canvas.tools installs them, in order
        self._active: Tool | None = None  # the tool that took the press
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

    def build(self, doc: GraphDocument, layout: Layout, plan: Drawing | None = None) -> None:
        """Make the items for ``layout`` (all at once)."""
        for _ in self.build_steps(doc, layout, plan):
            pass

    def build_steps(
        self,
        doc: GraphDocument,
        layout: Layout,
        plan: Drawing | None = None,
        budget_s: float = BUILD_BUDGET_S,
    ) -> Iterator[float]:
        """Make the items for ``layout`` from its ``plan`` (made in the layout's worker; here
        when not given), pausing -- yielding the fraction done -- once ``budget_s`` of work
        is done, so that a caller can keep the window responsive."""
        plan = plan if plan is not None else placing.drawing(doc, layout)
        self.build_empty()
        total = max(len(layout.groups) + len(layout.nodes) + len(plan.edges), 1)
        self.layout = layout
        self.tree, self.parent_of = plan.tree, dict(plan.parent_of)
        # The index grows with the items, a chunk at a time (index_now): a scene rect set
        # after them, or a tree depth Qt picks as they come, would index them all again
        # in the first paint (a frozen window at 20,000 nodes).
        margin = 40
        self.setSceneRect(
            QRectF(-margin, -margin, layout.width + 2 * margin, layout.height + 2 * margin)
        )
        self.setBspTreeDepth(_bsp_depth(total))
        overview = self._overview = Overview(self)
        clock = time.perf_counter
        deadline, made = clock() + budget_s, 0
        for path, box in layout.groups.items():
            group = self.tree.get(path)
            label = placing.group_title(layout, group, path)  # (a fold: identical siblings)
            item = GroupItem(path, label, box, path in layout.collapsed, plan.members.get(path, 0))
            if item.collapsed and item.key in doc.positions:
                item.setPos(*doc.positions[item.key])
            self.groups[path] = item
            self._add(item, 2 if item.collapsed else 0)
            if item.collapsed:
                overview.add(item)
            made += 1
            if made & 63 == 0 and clock() > deadline:
                self.index_now()
                yield made / total
                deadline = clock() + budget_s
        bad = doc.shape_problem or ("", "")  # (node, error) an edit left
        for name, box in layout.nodes.items():
            op, target, shape = plan.labels[name]
            node = NodeItem(name, op, target, shape, box, bad[1] if bad[0] == name else None)
            if name in doc.positions:  # the user put it there
                node.setPos(*doc.positions[name])
            self.nodes[name] = node
            self._add(node, 2)
            overview.add(node)
            made += 1
            if made & 63 == 0 and clock() > deadline:
                self.index_now()
                yield made / total
                deadline = clock() + budget_s
        for e in plan.edges:
            self._add_edge(
                self.item(e.source),
                self.item(e.target),
                e.texts,
                e.slot,
                e.slots,
                e.stub,
                e.label,
                e.detour,
            )
            made += 1
            if made & 63 == 0 and clock() > deadline:
                self.index_now()
                yield min(made / total, 0.99)
                deadline = clock() + budget_s
        self._bounds = QRectF(0, 0, layout.width, layout.height)
        for key in doc.positions:
            placed = self.item_by_key(key)
            if placed is not None:
                self._bounds = self._bounds.united(placed.sceneBoundingRect())
        self._dirty = {self.parent_of[k] for k in doc.positions if k in self.parent_of}
        self.refit_frames()
        overview.refresh_frames()

    def index_now(self) -> None:
        """Index the items added so far (Qt indexes new items at the first query -- all of
        a big scene's in the first paint, a second of frozen window at 20,000 nodes)."""
        self.items(QRectF(0, 0, 1, 1))

    def _add_edge(self, sa, sb, labels, index, count, stub=None, label=None, detour=()) -> None:
        if sa is None or sb is None:
            return
        edge = EdgeItem(sa, sb, labels, (index, count), stub, detour)
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
            if placing.node_size(doc, name, text_metrics())[0] != self.nodes[name].rect.width():
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
        # Those drawn before keep their places; new ones go where no node is (so, after them).
        for name in sorted(redo, key=lambda n: (n not in old_pos, order[n])):
            node = index[name]
            w, h = placing.node_size(doc, name, text_metrics())
            item = NodeItem(
                name,
                *placing.node_label(doc, name),
                Box(0, 0, w, h),
                bad[1] if bad[0] == name else None,
            )
            item.setPos(old_pos.get(name) or self._place_new(doc, node, layout, item.rect))
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
        for (a, b, one_use, _stub), labels in keys.items():
            sa, sb = self.item(a), self.item(b)
            if sa is None or sb is None or sa is sb:
                continue
            stub = a if a in layout.shared and a in self.nodes else None
            self._add_edge(sa, sb, labels, 0, 1, stub, one_use)
            targets.add(b)
        for b in targets:  # inputs enter side by side in argument order
            self._reslot(doc, layout, b)
        for name in relabel:
            item = self.nodes[name]
            item.set_shape(placing.node_label(doc, name)[2])
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

    def _place_new(
        self, doc: GraphDocument, node: fx.Node, layout: Layout, rect: QRectF
    ) -> QPointF:
        """Where a node without a place goes: where the layout had it (an undone delete), or
        beside its first drawn input, a little lower; else at :attr:`place_hint` -- moved
        right, past what is drawn there, until it covers no other node.

        The layout may have no place for a node that comes back: a session reopened lays
        out the graph its replayed edits left, so undoing them brings back nodes it never
        placed, each beside its input -- two beside one input landed on one spot."""
        if node.name in layout.nodes:
            box = layout.nodes[node.name]
            return self._free_spot(QPointF(box.x, box.y), rect)
        for arg in node.all_input_nodes:
            item = self.item(layout.visible(arg.name))
            if item is not None:
                beside = item.pos() + QPointF(item.rect.width() + 30, NODE_GAP)
                return self._free_spot(beside, rect)
        return self._free_spot(QPointF(self.place_hint), rect)  # where the user is looking

    def _free_spot(self, at: QPointF, rect: QRectF) -> QPointF:
        """``at``, or the first place to its right where a box of ``rect``'s size covers no
        drawn node or collapsed group."""
        spot = rect.translated(at - rect.topLeft())
        for _ in range(len(self.nodes) + len(self.groups) + 1):  # each step passes one box
            covered = [
                item.sceneBoundingRect().right()
                for item in self.items(spot.adjusted(-4, -4, 4, 4))
                if isinstance(item, NodeItem) or (isinstance(item, GroupItem) and item.collapsed)
            ]
            if not covered:
                break
            spot.moveLeft(max(covered) + NODE_GAP)
        return spot.topLeft()

    def _add(self, item: QGraphicsItem, z: float) -> None:
        """Frames (0) under edges (1) under nodes and collapsed groups (2)."""
        item.setZValue(z)
        self.addItem(item)

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
        """The zoomed-out picture of the scene as it is now (made as its items were)."""
        if self._overview is None:  # an empty scene
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
            inside: list[BoxItem] = [self.nodes[n] for n in group.nodes if n in self.nodes]
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

    def movable_selection(self) -> list[BoxItem]:
        return [i for i in self.selectedItems() if isinstance(i, BoxItem)]

    # --- the mouse: the first tool that takes a press has the drag until the release --------

    def mousePressEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        self._active = next((tool for tool in self.tools if tool.press(event)), None)
        if self._active is None:
            super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        if self._active is not None:
            self._active.move(event)
        else:
            super().mouseMoveEvent(event)

    def mouseReleaseEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        tool, self._active = self._active, None
        if tool is not None:
            tool.release(event)
        else:
            super().mouseReleaseEvent(event)

    # Qt's own handling (select, move the selected items), for a tool that builds on it.

    def default_press(self, event) -> None:
        super().mousePressEvent(event)

    def default_move(self, event) -> None:
        super().mouseMoveEvent(event)

    def default_release(self, event) -> None:
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QGraphicsSceneMouseEvent) -> None:  # noqa: N802
        for item in self.items(event.scenePos()):
            if isinstance(item, GroupItem):
                self.groupToggled.emit(item.path)
                event.accept()
                return
        super().mouseDoubleClickEvent(event)


def _bsp_depth(items: int) -> int:
    """The depth Qt would pick for ``items`` items (log2, at least 5), fixed up front."""
    return max(5, math.ceil(math.log2(max(items, 2))))
