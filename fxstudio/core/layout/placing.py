"""Place the graph on a canvas: graphviz ``dot``, hierarchically by module.

Plain ``dot`` over a whole flat graph is superlinear and slow on big models, so the layout
is hierarchical: nodes are grouped by module path (``nn_module_stack``); each group is laid
out on its own, with its child groups as single boxes (collapsed: a small box; expanded: the
size of their own layout).  Groups of one structure -- the same items, their sizes aside,
wired the same way: the repeated blocks of a model -- are laid out once, each item as big as
its biggest instance, so the whole layout costs a dot run per distinct structure; results are
cached across calls by sizes and wiring, so expanding or collapsing one group re-lays out that
group's structure and its ancestors' only.  Each edge is given to the innermost group holding
both its ends, in one pass.  A group with very many items is split into chunks laid out one
under another.  Runs of identical collapsed siblings are drawn as one box
(:mod:`fxstudio.core.layout.repeats`).

When graphviz is missing or fails, a simple layered layout is used, with a note saying so.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:resnet")
    >>> lay = LayoutEngine().layout(doc, collapsed={"stem", "layer1", "layer2", "layer3"})
    >>> sorted(lay.groups)[:3], "x" in lay.nodes, lay.engine
    (['layer1', 'layer2', 'layer3'], True, 'dot')
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import ModuleGroup
from fxstudio.core.layout.boxes import COLLAPSED_HEIGHT, GROUP_PAD, GROUP_TITLE, NODE_HEIGHT, Box
from fxstudio.core.layout.dot import RANKSEP, dot_positions, layered
from fxstudio.core.layout.groups import drawn_tree, group_label, node_label
from fxstudio.core.layout.labels import ESTIMATE, TextMetrics
from fxstudio.core.layout.repeats import FOLD_AT, Structures, fold_label, runs
from fxstudio.core.process import progress as progress_of
from fxstudio.core.results import Json

CHUNK = 250  # items in one dot run at most
SHARED_ITEMS, SHARED_SPAN = 3, 100  # a value used by this many items this far apart is shared


@dataclass
class Layout:
    """Where everything visible goes."""

    nodes: dict[str, Box] = field(default_factory=dict)  # nodes not inside a collapsed group
    groups: dict[str, Box] = field(default_factory=dict)  # every visible group's box
    collapsed: set[str] = field(default_factory=set)  # the visible groups drawn as one box
    owner: dict[str, str] = field(default_factory=dict)  # hidden node -> its collapsed group
    shared: set[str] = field(default_factory=set)  # values drawn as stubs at their users
    folds: dict[str, list[str]] = field(default_factory=dict)  # box -> identical groups it is
    width: float = 0.0
    height: float = 0.0
    engine: str = "dot"
    seconds: float = 0.0
    dot_runs: int = 0
    cache_hits: int = 0
    notes: list[str] = field(default_factory=list)

    def visible(self, name: str) -> str:
        """The item that stands for a node: itself, or the collapsed group hiding it."""
        return self.owner.get(name, name)

    def to_json(self) -> Json:
        return {
            "engine": self.engine,
            "seconds": round(self.seconds, 4),
            "size": [round(self.width, 2), round(self.height, 2)],
            "nodes": {k: v.to_json() for k, v in self.nodes.items()},
            "groups": {
                k: {"box": v.to_json(), "collapsed": k in self.collapsed}
                for k, v in self.groups.items()
            },
            "shared": sorted(self.shared),
            "folds": self.folds,
            "notes": self.notes,
        }


class LayoutCancelled(Exception):
    """The caller asked the layout to stop (a newer one replaces it)."""


def node_size(
    doc: GraphDocument, name: str, metrics: TextMetrics = ESTIMATE
) -> tuple[float, float]:
    """A node's box, wide enough for its name, target and shape lines in the canvas's fonts
    (``metrics``), up to :data:`~fxstudio.core.layout.labels.MAX_NODE_WIDTH`; once per version."""
    widths = doc.memo("layout.widths", dict).setdefault(metrics, {})  # metrics -> name -> w
    width = widths.get(name)
    if width is None:
        width = widths[name] = metrics.box_width(name, *node_label(doc, name)[1:])
    return width, NODE_HEIGHT


def _tell_layout(done: int, total: int) -> None:
    """Layout progress, told to whoever listens (:mod:`fxstudio.core.process.progress`)."""
    progress_of.tell("Laying out", done, total)


def collapsed_size(label: str, metrics: TextMetrics = ESTIMATE) -> tuple[float, float]:
    """The box of a collapsed module labelled ``label`` (written ``▸ label``, in bold): as
    wide as its label, at least 110, and :data:`COLLAPSED_HEIGHT` high."""
    return (max(110.0, metrics.width(f"▸ {label}", bold=True) + 24), COLLAPSED_HEIGHT)


class LayoutEngine:
    """Lays out documents; keeps a cache of group layouts across calls."""

    def __init__(self, use_graphviz: bool = True, metrics: TextMetrics = ESTIMATE) -> None:
        self.use_graphviz = use_graphviz
        self.metrics = metrics  # how wide the canvas's labels are (boxes fit their text)
        self._cache: dict[Any, tuple[list[tuple[float, float]], float, float]] = {}
        self.structures = Structures()  # hashed once per version of the document

    def clear_cache(self) -> None:
        self._cache.clear()
        self.structures = Structures()

    def layout(
        self,
        doc: GraphDocument,
        collapsed: Iterable[str] = (),
        cancelled: Callable[[], bool] = lambda: False,
        progress: Callable[[int, int], None] = _tell_layout,
    ) -> Layout:
        """Lay out ``doc`` with the groups in ``collapsed`` drawn as single boxes."""
        t0 = time.perf_counter()
        tree = doc.memo("layout.tree", lambda: drawn_tree(doc))  # (read, never changed, here)
        collapsed_set = set(collapsed)
        run = _Run(self, doc, tree, collapsed_set, cancelled, progress)
        out = Layout(engine="dot" if self.use_graphviz else "fallback")
        if not self.use_graphviz:
            out.notes.append("graphviz is turned off: a simple layered layout is shown.")
        w, h = run.place(tree, 0.0, 0.0, out)
        out.width, out.height = w, h
        out.engine = run.engine
        out.notes.extend(run.notes)
        out.dot_runs, out.cache_hits = run.dot_runs, run.cache_hits
        out.shared = run.shared
        out.seconds = time.perf_counter() - t0
        return out


def _chains(doc: GraphDocument, tree: ModuleGroup) -> tuple[dict, dict, dict]:
    """Per node its groups (root first) and place in the graph; per group its first's."""
    chain: dict[str, list[str]] = {}
    todo: list[tuple[ModuleGroup, list[str]]] = [(tree, [])]
    while todo:
        group, above = todo.pop()
        here = [*above, group.path] if group.path else above
        chain.update(dict.fromkeys(group.nodes, here))
        todo.extend((child, here) for child in group.children.values())
    index = {n: i for i, n in enumerate(doc.node_names())}
    first: dict[str, int] = {}
    for node, paths in chain.items():
        i = index[node]
        for path in paths:
            if i < first.get(path, len(index)):
                first[path] = i
    return chain, index, first


class _Run:
    """One layout call: sizes groups bottom-up, then places everything top-down."""

    def __init__(self, engine, doc, tree, collapsed, cancelled, progress) -> None:
        self.engine_obj: LayoutEngine = engine
        self.doc: GraphDocument = doc
        self.collapsed: set[str] = collapsed
        self.cancelled = cancelled
        self.progress = progress
        self.engine = "dot" if engine.use_graphviz else "fallback"
        self.notes: list[str] = []
        self.dot_runs = 0
        self.cache_hits = 0
        self.folded_away: set[str] = set()  # groups drawn inside a fold's box
        # (per graph version, read only: the tree's groups by path, and the nodes under each)
        self.groups: dict[str, ModuleGroup] = doc.memo(
            "layout.groups", lambda: {g.path: g for g in tree.walk()}
        )
        self._under: dict[str, list[str]] = doc.memo("layout.under", dict)
        visible = self._visible(tree)
        chain, self.index, self.first = doc.memo("layout.chains", lambda: _chains(doc, tree))
        self.chain: dict[str, list[str]] = dict(chain)  # this run's: a fold redraws some
        self._items: dict[str, list[tuple[str, str]]] = {}
        self._sizes: dict[str, tuple[float, float]] = {}  # group path -> its box
        self.folds = self._fold(doc, visible)
        self.shared = self._shared_values(doc)
        # Of a shared value's edges only the one to its first user steers the layout; the
        # others are drawn as stubs.
        self.edges = []
        first_use: set[str] = set()
        for s, t, _ in doc.edges():
            if s in self.shared:
                if s in first_use:
                    continue
                first_use.add(s)
            self.edges.append((s, t))
        self.item_edges = self._item_edges()
        self.local: dict[str, tuple[dict[str, tuple[float, float]], float, float]] = {}
        # Groups of one structure (the same items, their sizes aside, wired the same way) are
        # laid out once: repeated blocks cost one dot run, not one each.
        self.kinds: dict[Any, int] = {}  # structure -> its number in this run
        self.kind: dict[str, int] = {}  # group path -> the number of its structure
        self.members: dict[int, list[ModuleGroup]] = {}  # structure -> its groups
        self.kind_edges: dict[int, tuple[tuple[int, int], ...]] = {}
        self.kind_layout: dict[int, tuple[list[tuple[float, float]], float, float]] = {}
        shown = [g for g in visible if g.path not in collapsed]
        for g in reversed(shown):  # children before their parents
            self._structure(g)
        self.total = len(shown)
        self.done = 0

    def _shared_values(self, doc: GraphDocument) -> set[str]:
        """Values (masks, position ids, shared weights) used by several items of their own
        group that lie far apart in the graph: edges to all of them would cross the picture."""
        users: dict[str, list[str]] = {}
        for s, t, _ in doc.edges():
            users.setdefault(s, []).append(t)
        shared = set()
        for s, ts in users.items():
            if len(ts) < SHARED_ITEMS:
                continue
            span = max(self.index[t] for t in ts) - min(self.index[t] for t in ts)
            if span < SHARED_SPAN:
                continue
            # The innermost group holding the value and all its users: its items are what
            # the edges would connect.
            common = self.chain[s]
            for t in ts:
                chain = self.chain[t]
                k = 0
                while k < min(len(common), len(chain)) and common[k] == chain[k]:
                    k += 1
                common = common[:k]
            group = self.groups[common[-1] if common else ""]
            items = {self.item_of(group, t) for t in ts} - {self.item_of(group, s)}
            if len(items) >= SHARED_ITEMS:
                shared.add(s)
        return shared

    def _visible(self, tree: ModuleGroup) -> list[ModuleGroup]:
        """The groups not inside a collapsed one, parents before children (a collapsed
        group's subtree is not walked)."""
        out, stack = [], [tree]
        while stack:
            group = stack.pop()
            out.append(group)
            if group.path not in self.collapsed:
                stack.extend(reversed(group.children.values()))
        return out

    def nodes_under(self, path: str) -> list[str]:
        """Every node in the group at ``path`` and below (once per graph version)."""
        nodes = self._under.get(path)
        if nodes is None:
            nodes = self._under[path] = self.groups[path].all_nodes()
        return nodes

    def _fold(self, doc: GraphDocument, visible: list[ModuleGroup]) -> dict[str, list[str]]:
        """Runs of identical collapsed siblings (:mod:`fxstudio.core.layout.repeats`), each drawn as
        its first member's box: the others' nodes are counted as the first's."""
        parents = [g for g in visible if sum(c in self.collapsed for c in g.children) >= FOLD_AT]
        if not parents:
            return {}
        same = self.engine_obj.structures.of(doc, [c for g in parents for c in g.children.values()])
        found = {run[0]: run for g in parents for run in runs(self.items(g), same, self.collapsed)}
        self.folded_away = {m for run in found.values() for m in run[1:]}
        for first, run in found.items():
            for member in run[1:]:
                for n in self.nodes_under(member):
                    chain = self.chain[n]
                    at = chain.index(member)
                    self.chain[n] = [*chain[:at], first, *chain[at + 1 :]]
        self._items.clear()  # (without the folded-away members, from now on)
        return found

    def _item_edges(self) -> dict[str, set[tuple[str, str]]]:
        """Per group, the edges between its items: an edge belongs to the innermost group
        holding both its ends, between the items there that hold them (in the groups above,
        both ends are in one item; below, one end is outside)."""
        out: dict[str, set[tuple[str, str]]] = {}
        for s, t in self.edges:
            cs, ct = self.chain[s], self.chain[t]
            if cs and ct and cs[0] == ct[0] and cs[0] in self.collapsed:
                continue  # inside one collapsed box: an edge of no group drawn
            k = 0
            while k < len(cs) and k < len(ct) and cs[k] == ct[k]:
                k += 1
            a = f"group:{cs[k]}" if len(cs) > k else f"node:{s}"
            b = f"group:{ct[k]}" if len(ct) > k else f"node:{t}"
            if a != b:
                out.setdefault(cs[k - 1] if k else "", set()).add((a, b))
        return out

    def _structure(self, group: ModuleGroup) -> None:
        """Number ``group``'s structure: its items (a node, a collapsed group, or an expanded
        group of a numbered structure) in order and the edges between them, by position."""
        items = self.items(group)
        at = {f"{k}:{v}": i for i, (k, v) in enumerate(items)}
        what = tuple(
            -1 if k == "node" else -2 if v in self.collapsed else self.kind[v] for k, v in items
        )
        edges = tuple(sorted((at[a], at[b]) for a, b in self.item_edges.get(group.path, ())))
        number = self.kinds.setdefault((what, edges), len(self.kinds))
        self.kind[group.path] = number
        self.members.setdefault(number, []).append(group)
        self.kind_edges[number] = edges

    # --- sizes ---------------------------------------------------------------------------------

    def item_size(self, kind: str, key: str) -> tuple[float, float]:
        """An item's box (asked when its parent is laid out and again when it is placed)."""
        if kind == "node":
            return node_size(self.doc, key, self.engine_obj.metrics)
        size = self._sizes.get(key)
        if size is None:
            size = self._sizes[key] = self._group_size(key)
        return size

    def _group_size(self, key: str) -> tuple[float, float]:
        metrics = self.engine_obj.metrics
        group = self.groups[key]
        if key in self.collapsed:
            run = self.folds.get(key)
            label = fold_label(run, group.type_name) if run else group_label(group)
            return collapsed_size(label, metrics)
        _, w, h = self.group_layout(group)
        title = metrics.width(f"▾ {group_label(group)}") + 16  # the frame's title fits too
        return (max(w + 2 * GROUP_PAD, title), h + 2 * GROUP_PAD + GROUP_TITLE)

    def items(self, group: ModuleGroup) -> list[tuple[str, str]]:
        """The group's direct nodes and child groups, in graph order (computed once a group)."""
        cached = self._items.get(group.path)
        if cached is None:
            order: dict[tuple[str, str], int] = {("node", n): self.index[n] for n in group.nodes}
            for child in group.children.values():
                if child.path not in self.folded_away:
                    order[("group", child.path)] = self.first[child.path]
            cached = self._items[group.path] = sorted(order, key=order.__getitem__)
        return cached

    def item_of(self, group: ModuleGroup, node: str) -> tuple[str, str] | None:
        """The item of ``group`` that holds ``node`` (None when outside the group)."""
        chain = self.chain[node]
        if group.path:
            if group.path not in chain:
                return None
            depth = chain.index(group.path)
        else:
            depth = -1
        if len(chain) > depth + 1:
            return ("group", chain[depth + 1])
        return ("node", node)

    # --- laying out one group ------------------------------------------------------------------

    def group_layout(
        self, group: ModuleGroup
    ) -> tuple[dict[str, tuple[float, float]], float, float]:
        """Item centres relative to the group's content origin, and the content size."""
        if group.path in self.local:
            return self.local[group.path]
        if self.cancelled():
            raise LayoutCancelled()
        number = self.kind[group.path]
        centres, w, h = self.kind_layout.get(number) or self._lay_out_structure(number)
        keys = [f"{k}:{v}" for k, v in self.items(group)]
        result = dict(zip(keys, centres, strict=True)), w, h
        self.local[group.path] = result
        self.done += 1
        self.progress(self.done, self.total)
        return result

    def _lay_out_structure(self, number: int) -> tuple[list[tuple[float, float]], float, float]:
        """One layout for every group of a structure, each item as big as its biggest
        instance (so each group's own boxes fit), cached across calls by sizes and edges."""
        sizes: list[tuple[float, float]] = []
        for group in self.members[number]:
            own = [self.item_size(k, v) for k, v in self.items(group)]
            sizes = (
                own
                if not sizes
                else [(max(a[0], b[0]), max(a[1], b[1])) for a, b in zip(sizes, own, strict=True)]
            )
        edges = self.kind_edges[number]
        cache_key = (self.engine, tuple(sizes), edges)
        cached = self.engine_obj._cache.get(cache_key)
        if cached is not None:
            self.cache_hits += 1
            result = cached
        else:
            keys = [str(i) for i in range(len(sizes))]
            centres, w, h = self._compute(
                keys, dict(zip(keys, sizes, strict=True)), {(str(a), str(b)) for a, b in edges}
            )
            result = ([centres[k] for k in keys], w, h)
            self.engine_obj._cache[cache_key] = result
        self.kind_layout[number] = result
        return result

    def _compute(self, keys, sizes, edges):
        chunks = [keys[i : i + CHUNK] for i in range(0, len(keys), CHUNK)] or [[]]
        centres: dict[str, tuple[float, float]] = {}
        width = height = 0.0
        for chunk in chunks:
            members = set(chunk)
            sub_edges = [(a, b) for a, b in edges if a in members and b in members]
            pos, w, h = self._layout_chunk(chunk, sizes, sub_edges)
            offset = height + (RANKSEP * 72 if height else 0.0)
            for k, (x, y) in pos.items():
                centres[k] = (x, y + offset)
            width = max(width, w)
            height = offset + h
        return centres, width, height

    def _layout_chunk(self, keys, sizes, edges):
        if self.engine == "dot":
            try:
                return self._dot(keys, sizes, edges)
            except Exception as exc:  # graphviz missing or failing: say so, keep going
                self.engine = "fallback"
                self.notes.append(
                    f"graphviz failed ({type(exc).__name__}: {str(exc).strip()[:200]}); "
                    "a simple layered layout is shown."
                )
        return layered(keys, sizes, edges)

    def _dot(self, keys, sizes, edges):
        self.dot_runs += 1
        return dot_positions(keys, sizes, edges)

    # --- placing -------------------------------------------------------------------------------

    def place(self, group: ModuleGroup, ox: float, oy: float, out: Layout) -> tuple[float, float]:
        """Put ``group``'s items at absolute positions (content origin ``ox, oy``)."""
        centres, w, h = self.group_layout(group)
        for kind, key in self.items(group):
            cx, cy = centres[f"{kind}:{key}"]
            iw, ih = self.item_size(kind, key)
            box = Box(ox + cx - iw / 2, oy + cy - ih / 2, iw, ih)
            if kind == "node":
                out.nodes[key] = box
                continue
            out.groups[key] = box
            child = self.groups[key]
            if key in self.collapsed:
                out.collapsed.add(key)
                for member in self.folds.get(key, [key]):
                    out.owner.update(dict.fromkeys(self.nodes_under(member), key))
                if key in self.folds:
                    out.folds[key] = self.folds[key]
            else:  # (centred in a frame made wider for its title)
                inner = self.group_layout(child)[1] + 2 * GROUP_PAD
                x = box.x + GROUP_PAD + (box.w - inner) / 2
                self.place(child, x, box.y + GROUP_PAD + GROUP_TITLE, out)
        return w, h
