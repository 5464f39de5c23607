"""``GraphDocument``: the one source of truth for a captured graph and how it is viewed.

The document owns the ``GraphModule`` and the view state (node positions, collapsed module
groups, pattern boxes).  Views never touch ``torch.fx.Graph`` themselves: they read rows,
code and the module tree from the document, call document or edit functions to change it,
and redraw from the :class:`DocumentEvent` s it emits.  Nodes are named, not pointed at:
events carry node names, because undo may replace ``Node`` objects.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:simple")
    >>> [(r.opcode, r.name, r.shape) for r in doc.rows()][:2]
    [('placeholder', 'x', '2x16'), ('call_module', 'fc1', '2x32')]
    >>> doc.code_line_map()["fc1"], doc.code().splitlines()[doc.code_line_map()["fc1"] - 1]
    (2, '    fc1 = self.fc1(x);  x = None')
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import torch.fx as fx

from fxstudio.core.errors import SourceLocation, UserError, stack_trace_location
from fxstudio.core.fxcompat import is_compiled
from fxstudio.core.fxcompat.modules import module_state, set_module_state
from fxstudio.core.graph.graphviews import (
    ModuleGroup,
    NodeRow,
    RowMemo,
    code_of,
    graph_json,
    input_refs,
    line_map,
    make_row,
    make_rows,
    module_tree_of,
    tidy_code,
)
from fxstudio.core.graph.notation import group_key
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.graph.weights import has_weights, no_weights_message
from fxstudio.core.results import Json

#: The cache keys of values kept from runs of a version of the graph (not views of it).
VALUES = "values:"
#: The key, among the views an event brings (``emit``'s ``known``), of the rows' memo
#: (``graphviews.make_rows``): the document keeps it as its ``row_memo``.
ROW_MEMO = "row_memo"


class ChangeKind(str, Enum):
    GRAPH_REPLACED = "graph_replaced"  # everything may have changed: re-read the document
    NODES_ADDED = "nodes_added"
    NODES_REMOVED = "nodes_removed"
    NODES_CHANGED = "nodes_changed"  # target, args, kwargs, name or shapes
    SHAPES_CHANGED = "shapes_changed"  # shapes propagated again after deferred edits
    VIEW_CHANGED = "view_changed"  # positions, collapsed groups or pattern boxes


@dataclass(frozen=True)
class DocumentEvent:
    kind: ChangeKind
    names: frozenset[str] = frozenset()  # nodes added, removed or changed
    reshaped: frozenset[str] = frozenset()  # nodes whose shape or dtype is no longer the same


Listener = Callable[[DocumentEvent], None]


@dataclass(frozen=True)
class PatternBox:
    """A box the user drew around nodes to make a pattern."""

    name: str
    nodes: tuple[str, ...]


@dataclass(frozen=True)
class UndoState:
    """The document at one moment, for undo.

    The graph is copied (nodes, args, meta); parameters, buffers and submodules are shared
    by reference, so the state of a 1 GB model costs kilobytes.
    """

    graph: fx.Graph
    modules: OrderedDict[str, Any]
    parameters: OrderedDict[str, Any]
    buffers: OrderedDict[str, Any]
    positions: dict[str, tuple[float, float]]
    collapsed: frozenset[str]
    pattern_boxes: tuple[PatternBox, ...]


class GraphDocument:
    """The graph being edited and the state of its views."""

    def __init__(
        self,
        graph_module: fx.GraphModule,
        request: OpenRequest | None = None,
        example_inputs: tuple[Any, ...] = (),
        notes: list[str] | None = None,
        source_file: str | None = None,
    ) -> None:
        self._gm = graph_module
        #: what was opened (to title it, open it again, save it); its frontend the one used
        self.request = request or OpenRequest("", "fx")
        self.source_file = source_file  # the user's file, for the lines nodes come from
        self.checkpoint: str | None = None  # where its weights come from (hf:FOLDER, a .pt2)
        self.example_inputs = example_inputs
        self.notes = list(notes or [])
        self.positions: dict[str, tuple[float, float]] = {}
        self.collapsed: set[str] = set()
        self.pattern_boxes: list[PatternBox] = []
        self.history: list[dict[str, Any]] = []  # the edits applied since capture, as records
        self.shape_problem: tuple[str, str] | None = None  # (node, error) after an edit
        # A big graph's editor defers code generation and shape propagation past the moment
        # an edit is drawn: a worker thread does them on a snapshot (fxstudio.core.edits.catchup).
        self.defer_heavy = False
        self.shapes_stale = False
        self.version = 0  # counts changes to the graph, to drop work done on an older one
        #: the rows last made, of whichever version (graphviews.make_rows): kept across edits
        self.row_memo: RowMemo = {}
        self.session_extra: dict[str, Any] = {}  # what else the session it came from saved
        self.replayed: list[Any] = []  # the Edits a session's replay made (for an undo stack)
        self._listeners: list[Listener] = []
        self._cache: dict[str, Any] = {}
        self._weights: bool | None = None  # (weights: known until a module changes)

    @property
    def weights(self) -> bool:
        """Whether the document holds the model's weights; ``False`` for a structure-only one
        (:mod:`fxstudio.core.graph.weights`): shapes and edits, nothing to run.  Walked once,
        and again after an edit changed the module's submodules or tensors
        (:meth:`modules_changed`): the window asks two or three times an edit, and a walk
        costs 17 ms over the 6,700 submodules of a 20,000-node chain, 67 ms over the 20,000
        of a nested one."""
        if self._weights is None:
            self._weights = has_weights(self._gm)
        return self._weights

    def weights_known(self) -> bool | None:
        """:attr:`weights` if it is known now (``None``: a walk would be needed)."""
        return self._weights

    def know_weights(self, known: bool | None) -> None:
        """Take :attr:`weights` as ``known`` elsewhere: a copy over the very tensors of a
        document that knew it (:func:`~fxstudio.core.edits.snapshots.detached`) need not walk
        them again (60-70 ms over the nested 20,000-node graph's, in a rewrite's worker)."""
        self._weights = known

    def modules_changed(self) -> None:
        """An edit step added, removed or replaced a submodule or a tensor of the module."""
        self._weights = None

    def require_weights(self, what: str) -> None:
        """Refuse ``what`` (e.g. "Profiling") on a structure-only document, saying why and
        what to do instead (a :class:`~fxstudio.core.errors.UserError`)."""
        if not self.weights:
            raise UserError(no_weights_message(what, self.request.spec, not self.request.weights))

    # --- events ------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event)`` after every change; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(
        self,
        kind: ChangeKind,
        names: frozenset[str] | set[str] = frozenset(),
        known: dict[str, Any] | None = None,
        reshaped: frozenset[str] | set[str] = frozenset(),
    ) -> None:
        """Tell the listeners what changed (edits call this after they change the graph).

        ``known`` holds views of the changed graph already computed elsewhere (``code``,
        ``lines``, ``rows``); every other cached view is dropped.
        """
        if kind is not ChangeKind.VIEW_CHANGED:
            self.version += 1
            self._cache = dict(known or {})
            self.row_memo = self._cache.pop(ROW_MEMO, None) or self.row_memo
        event = DocumentEvent(kind, frozenset(names), frozenset(reshaped))
        for listener in list(self._listeners):
            listener(event)

    # --- the graph ---------------------------------------------------------------------------

    @property
    def graph_module(self) -> fx.GraphModule:
        return self._gm

    @property
    def graph(self) -> fx.Graph:
        return self._gm.graph

    def replace_graph_module(self, gm: fx.GraphModule) -> None:
        """Swap in a new module (a re-capture); the view state of vanished nodes is dropped."""
        self._gm = gm
        self._weights = None
        self.drop_missing_view_state()
        self.emit(ChangeKind.GRAPH_REPLACED)

    def _cached(self, key: str, make: Callable[[], Any]) -> Any:
        """A view of the graph, made once per version.  The dict is taken before ``make``
        runs: a view made in a worker thread while an edit lands goes into the old version's
        dict, never into the new one."""
        cache = self._cache
        if key not in cache:
            cache[key] = make()
        return cache[key]

    def memo(self, key: str, make: Callable[[], Any]) -> Any:
        """``make()``, made once per version of the graph (what a layout derives from it
        alone, whatever is collapsed); the caller must not change it."""
        return self._cached(key, make)

    def keep_values(self, key: str, values: Any) -> None:
        """Keep ``values`` computed by running this version of the graph (a numerical check's
        outputs: the next check's model before); gone with the next change, and carried
        with the graph to a worker's copy and back (:mod:`~fxstudio.core.edits.snapshots`).
        Whether they still hold (the same inputs, weights not changed in place) is for the
        one who keeps them to say."""
        self._cache[VALUES + key] = values

    def kept_values(self, key: str | None = None) -> Any:
        """What :meth:`keep_values` kept under ``key`` for this version (None: nothing), or,
        without ``key``, every value kept, by key (to give to a copy of this version)."""
        if key is not None:
            return self._cache.get(VALUES + key)
        return {k[len(VALUES) :]: v for k, v in self._cache.items() if k.startswith(VALUES)}

    def node(self, name: str) -> fx.Node:
        node = self.node_index().get(name)
        if node is None:
            raise KeyError(f"no node named '{name}'")
        return node

    def __contains__(self, name: object) -> bool:
        """Whether the graph has a node of that name."""
        return name in self.node_index()

    def node_names(self) -> list[str]:
        return [n.name for n in self.graph.nodes]

    def __len__(self) -> int:
        return len(self.graph.nodes)

    def node_index(self) -> dict[str, fx.Node]:
        """Node name -> node, kept up to date as edit steps change the graph."""
        return self._cached("index", lambda: {n.name: n for n in self.graph.nodes})

    def graph_touched(self, added: fx.Node | None = None, removed: str | None = None) -> None:
        """An edit step changed the graph: every cached view goes but the name index, which
        follows the change (a rewrite of thousands of nodes must not rebuild it per step)."""
        index = self._cache.get("index")
        for key in [k for k in self._cache if k != "index"]:
            del self._cache[key]
        if index is not None:
            if removed is not None:
                index.pop(removed, None)
            if added is not None:
                index[added.name] = added

    def users(self, name: str) -> list[str]:
        return [u.name for u in self.node(name).users]

    def inputs(self, name: str) -> list[tuple[str, str]]:
        """``(argument label, producer name)`` for each use of another node's value."""
        return [(label, n.name) for label, n in input_refs(self.node(name))]

    def edges(self) -> list[tuple[str, str, str]]:
        """``(producer, user, argument label)``, one per use, in graph order (made once per
        version: a layout reads them twice; do not change the list)."""
        return self._cached(
            "edges",
            lambda: [
                (n.name, user.name, label)
                for user in self.graph.nodes
                for label, n in input_refs(user)
            ],
        )

    # --- views of the graph ------------------------------------------------------------------

    def rows(self) -> list[NodeRow]:
        """The table: one row per node in graph order."""
        return self._cached("rows", self._make_rows)

    def _make_rows(self) -> list[NodeRow]:
        rows, self.row_memo = make_rows(self.graph.nodes, self.row_memo)
        return rows

    def row(self, name: str) -> NodeRow:
        return make_row(self.node(name))

    def find(self, query: str) -> list[str]:
        """Nodes whose name, target, op, shape or module contains ``query`` (any case), in
        graph order.

        >>> from fxstudio.core.sessions.documents import open_document
        >>> open_document("examples:negrelu").find("RELU")
        ['relu']
        """
        q = query.strip().lower()
        if not q:
            return []
        return [
            r.name
            for r in self.rows()
            if any(q in v.lower() for v in (r.name, r.target, r.opcode, r.shape, r.module_path))
        ]

    @property
    def compiled(self) -> bool:
        """Whether the module's forward is its graph's: an edit leaves its generation and
        compilation to the module's first call (:func:`~fxstudio.core.fxcompat.compile_on_call`)
        or to :meth:`ensure_compiled`."""
        return is_compiled(self._gm)

    def ensure_compiled(self) -> None:
        """Recompile if an edit left that for later (before the module is handed to torch:
        Dynamo, export, the profiler; a plain call compiles it itself)."""
        if not self.compiled:
            self._gm.recompile()

    def code(self) -> str:
        """The generated ``forward`` (``GraphModule.code``) without its leading blank lines:
        always that of the graph as it is now."""
        if self.compiled:
            return tidy_code(self._gm.code)
        return self._cached("code", lambda: code_of(self.graph))

    def code_ready(self) -> bool:
        """Whether :meth:`code` answers at once: no code generation needed, or a small
        graph's (made when asked; a big graph's editor leaves it to a worker, ``defer_heavy``)."""
        return self.compiled or "code" in self._cache or not self.defer_heavy

    def code_line_map(self) -> dict[str, int]:
        """Node name -> 1-based line in :meth:`code` where the node's value is computed.

        Placeholders map to the line that binds them (the ``def`` line, or the pytree
        unflatten line of an exported graph); the output node maps to ``return``.
        """
        return self._cached("lines", lambda: line_map(self.code(), self.graph))

    def node_at_line(self, line: int) -> str | None:
        """The node computed on a 1-based line of :meth:`code`, if any."""

        def by_line() -> dict[int, str]:
            out: dict[int, str] = {}
            for name, ln in self.code_line_map().items():
                out.setdefault(ln, name)
            return out

        return self._cached("by_line", by_line).get(line)

    def module_tree(self) -> ModuleGroup:
        """The module hierarchy, each node placed in the innermost module that produced it."""
        return self._cached("tree", lambda: module_tree_of(self.graph))

    def source_location(self, name: str) -> SourceLocation | None:
        """The line of the user's code that produced the node, from its stack trace."""
        return stack_trace_location(self.node(name).stack_trace, self.source_file)

    def to_json(self) -> Json:
        """Nodes (op, target, args, kwargs, shape, dtype, module path) and edges, JSON-ready."""
        return {
            "model": self.request.spec,
            "frontend": self.request.frontend,
            "weights": self.weights,
            **graph_json(self.graph, self.source_file),
        }

    # --- view state --------------------------------------------------------------------------

    def set_positions(self, positions: dict[str, tuple[float, float] | None]) -> None:
        """Place nodes (by name) and collapsed groups (by ``group_key(path)``) where the user
        put them (top-left, canvas coordinates); ``None`` gives one back to the layout."""
        unknown = set(positions) - self._placeable()
        if unknown:
            raise KeyError(f"no nodes or groups named {', '.join(sorted(unknown))}")
        for name, pos in positions.items():
            if pos is None:
                self.positions.pop(name, None)
            else:
                self.positions[name] = (float(pos[0]), float(pos[1]))
        self.emit(ChangeKind.VIEW_CHANGED, set(positions))

    def set_collapsed(self, group: str, collapsed: bool) -> None:
        """Collapse (or expand) one module group."""
        (self.collapsed.add if collapsed else self.collapsed.discard)(group)
        self.emit(ChangeKind.VIEW_CHANGED)

    def set_collapsed_groups(self, groups: Iterable[str]) -> None:
        """Exactly these module groups collapsed, the rest expanded (one change event)."""
        self.collapsed = set(groups)
        self.emit(ChangeKind.VIEW_CHANGED)

    def set_pattern_box(self, name: str, nodes: Iterable[str]) -> None:
        """Draw (or redraw) the pattern box ``name`` around ``nodes``."""
        box = PatternBox(name, tuple(nodes))
        self.pattern_boxes = [b for b in self.pattern_boxes if b.name != name] + [box]
        self.emit(ChangeKind.VIEW_CHANGED)

    def restore_view(
        self,
        positions: dict[str, tuple[float, float]],
        collapsed: Iterable[str],
        pattern_boxes: Iterable[PatternBox],
    ) -> None:
        """A saved view (a session's) put back; what the graph no longer has is dropped."""
        self.positions = dict(positions)
        self.collapsed = set(collapsed)
        self.pattern_boxes = list(pattern_boxes)
        self.drop_missing_view_state()
        self.emit(ChangeKind.VIEW_CHANGED)

    def cached_views(self) -> dict[str, Any]:
        """The views of the graph made so far (to be given back with it, see
        :meth:`emit`'s ``known``), its code among them."""
        views = dict(self._cache)
        if self.compiled:
            views["code"] = self.code()
        return views

    def drop_caches(self) -> None:
        """Forget every view of the graph made so far (its nodes were replaced)."""
        self._cache.clear()

    def _placeable(self) -> set[str]:
        keys = set(self.node_index())
        keys.update(group_key(g.path) for g in self.module_tree().walk() if g.path)
        return keys

    def drop_missing_view_state(self) -> None:
        """Forget positions and pattern boxes of nodes and groups the graph no longer has."""
        names = set(self.node_index())
        keys = self._placeable()
        self.positions = {k: v for k, v in self.positions.items() if k in keys}
        self.pattern_boxes = [b for b in self.pattern_boxes if set(b.nodes) <= names]

    # --- undo support ------------------------------------------------------------------------

    def undo_state(self) -> UndoState:
        """Everything an undo needs to bring the document back; weights are shared."""
        gm = self._gm
        modules, parameters, buffers = module_state(gm)
        return UndoState(
            graph=copy.deepcopy(gm.graph),
            modules=modules,
            parameters=parameters,
            buffers=buffers,
            positions=dict(self.positions),
            collapsed=frozenset(self.collapsed),
            pattern_boxes=tuple(self.pattern_boxes),
        )

    def restore(self, snap: UndoState) -> None:
        """Bring back an undo state (the same ``GraphModule`` object, with its graph replaced)."""
        self.put_back(snap)
        self.emit(ChangeKind.GRAPH_REPLACED)

    def put_back(self, snap: UndoState) -> None:
        """:meth:`restore` without the change event (an edit step: the edit emits one)."""
        gm = self._gm
        set_module_state(gm, snap.modules, snap.parameters, snap.buffers)
        gm.graph = copy.deepcopy(snap.graph)  # the setter recompiles; the state stays reusable
        self.positions = dict(snap.positions)
        self.collapsed = set(snap.collapsed)
        self.pattern_boxes = list(snap.pattern_boxes)
        self._cache.clear()  # new Node objects: the name index goes too
