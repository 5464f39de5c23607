"""What the canvas draws for a layout -- every box's text, the frames' nesting, every edge with
its argument slot and the shared values drawn as stubs -- worked out where the layout is
made (a worker thread), so that the GUI thread only makes the items.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.layout.placing import LayoutEngine
    >>> doc = open_document("examples:negrelu")
    >>> plan = drawing(doc, LayoutEngine().layout(doc))
    >>> plan.labels["relu"], sorted(e.target for e in plan.edges if e.source == "relu")
    (('call_function', 'torch.relu', '4x8'), ['add'])
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import ModuleGroup
from fxstudio.core.graph.notation import group_key
from fxstudio.core.layout.boxes import Box
from fxstudio.core.layout.groups import drawn_tree, group_label, node_label
from fxstudio.core.layout.labels import ESTIMATE
from fxstudio.core.layout.placing import Layout
from fxstudio.core.layout.routes import edge_ends, routes

__all__ = ["Drawing", "Edge", "drawing"]


@dataclass(frozen=True)
class Edge:
    """One drawn edge: from the item ``source`` to the item ``target`` (node names, or
    collapsed groups' paths), entering at ``slot`` of ``slots``; ``stub``: the shared value
    drawn as a short arrow; ``label``: the argument it feeds, when it is one use."""

    source: str
    target: str
    texts: tuple[str, ...]
    slot: int
    slots: int
    stub: str | None = None
    label: str | None = None
    #: Where it is drawn around boxes it would cross (:mod:`fxstudio.core.layout.routes`): the
    #: producer's bottom, the detour's corners, the user's top; empty: the plain curve.
    detour: tuple[tuple[float, float], ...] = ()


@dataclass
class Drawing:
    tree: dict[str, ModuleGroup] = field(default_factory=dict)  # path -> the drawn group
    parent_of: dict[str, str] = field(default_factory=dict)  # item key -> its frame's path
    members: dict[str, int] = field(default_factory=dict)  # path -> nodes inside, any depth
    labels: dict[str, tuple[str, str, str]] = field(default_factory=dict)  # op, target, shape
    edges: list[Edge] = field(default_factory=list)


def drawing(doc: GraphDocument, layout: Layout) -> Drawing:
    """The drawing of ``layout`` of ``doc``: one edge per use between two drawn nodes
    (``x * x``: two), one per pair where a collapsed group stands for several nodes, and
    stubs for shared values (an edge to the first user only)."""
    out = Drawing()
    # (the tree, its groups by path, who is in which frame and how many nodes each holds:
    # once per graph version, shared with the layout; the per-drawing parts are copies)
    root = doc.memo("layout.tree", lambda: drawn_tree(doc))
    out.tree = doc.memo("layout.groups", lambda: {g.path: g for g in root.walk()})
    parent_of, members = doc.memo("drawing.frames", lambda: _frames(root, out.tree))
    out.parent_of, out.members = dict(parent_of), dict(members)
    for first, run in layout.folds.items():  # a fold's box stands for all its members
        out.members[first] = sum(out.members[m] for m in run)
    out.labels = {name: node_label(doc, name) for name in layout.nodes}
    keys: dict[tuple[str, str, str | None, bool], list[str]] = {}
    first_use: set[str] = set()
    owner, shared = layout.owner.get, layout.shared  # (50,000 edges at 50k nodes: no calls)
    for src, dst, label in doc.edges():
        a, b = owner(src, src), owner(dst, dst)
        if a == b:
            continue
        if src in shared and (src in first_use or first_use.add(src)):  # type: ignore[func-returns-value]
            keys.setdefault((src, b, None, True), []).append(label if b == dst else dst)
        elif (a, b) == (src, dst):
            keys.setdefault((a, b, label, False), []).append(label)
        else:
            keys.setdefault((a, b, None, False), []).append(f"{src} → {dst}")
    inputs: dict[str, list[tuple[str, str, str | None, bool]]] = {}
    for key in keys:
        inputs.setdefault(key[1], []).append(key)
    for key, texts in keys.items():
        a, b, text, stub = key
        slots = inputs[b]
        out.edges.append(
            Edge(
                layout.visible(a),
                b,
                tuple(texts),
                slots.index(key),
                len(slots),
                a if stub else None,
                text,
            )
        )
    _detours(out, layout)
    return out


#: Above this many drawn edges (a 20,000-node graph expanded: seen far out, where edges are
#: drawn as straight lines anyway) no detours are worked out: about 2 s at 50,000 nodes.
DETOUR_EDGES = 12_000


def _detours(out: Drawing, layout: Layout) -> None:
    """Edges whose plain curve would run through boxes they do not connect (a skip
    connection through the block it bypasses) are drawn around them (about 0.25 s at
    10,000 nodes fully expanded)."""
    if len(out.edges) > DETOUR_EDGES:
        return
    boxes = {k: layout.groups[k] for k in layout.collapsed}
    boxes.update(layout.nodes)
    at, ends = [], []  # (the edges drawn as curves: their places, ends and boxes)
    for i, e in enumerate(out.edges):
        source, target = boxes.get(e.source), boxes.get(e.target)
        if not e.stub and source is not None and target is not None:
            at.append(i)
            ends.append((edge_ends(source, target, e.slot, e.slots), source, target))
    frames, titles = [], []
    for path, frame in layout.groups.items():
        if path in layout.collapsed:
            continue
        frames.append(frame)
        group = out.tree.get(path)
        width = ESTIMATE.width(f"▾ {group_label(group) if group else path}")
        titles.append(Box(frame.x + 8, frame.y + 3, min(width, frame.w - 16), 12.0))
    for k, line in routes(ends, list(boxes.values()), frames, titles).items():
        out.edges[at[k]] = replace(out.edges[at[k]], detour=line)


def _frames(
    root: ModuleGroup, tree: dict[str, ModuleGroup]
) -> tuple[dict[str, str], dict[str, int]]:
    parent_of: dict[str, str] = {}
    for path, group in tree.items():
        for child in group.children:
            parent_of[group_key(child)] = path
        parent_of.update(dict.fromkeys(group.nodes, path))
    members: dict[str, int] = {}
    _count(root, members)
    return parent_of, members


def _count(group: ModuleGroup, into: dict[str, int]) -> int:
    n = len(group.nodes) + sum(_count(c, into) for c in group.children.values())
    into[group.path] = n
    return n
