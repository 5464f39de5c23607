"""Running graphviz's ``dot`` on one graph without holding the GIL (so the window stays live
while it works), boxes laid out by it (:func:`dot_positions`), and the plain layered layout
used where graphviz is missing or fails.  Torch-free."""

from __future__ import annotations

import ctypes
import threading
from typing import Any

NODESEP, RANKSEP = 0.25, 0.4  # inches, between nodes in a rank and between ranks

_DOT_LOCK = threading.Lock()  # graphviz keeps global state: one layout at a time
_GVC: Any = None  # ctypes handle on the libgvc pygraphviz loaded, once found


def libgvc() -> Any:
    """The graphviz library pygraphviz uses, for calls that release the GIL (ctypes does;
    pygraphviz's own wrappers hold it, freezing the window for as long as ``dot`` runs).
    ``False`` where it cannot be found (not Linux, or an unusual build)."""
    global _GVC
    if _GVC is None:
        _GVC = False
        try:
            with open("/proc/self/maps") as maps:
                paths = sorted({line.split()[-1] for line in maps if "/libgvc" in line})
            if paths:
                lib = ctypes.CDLL(paths[0])
                ptr = ctypes.c_void_p
                lib.gvLayout.argtypes = [ptr, ptr, ctypes.c_char_p]
                lib.gvRender.argtypes = [ptr, ptr, ctypes.c_char_p, ptr]
                lib.gvFreeLayout.argtypes = [ptr, ptr]
                _GVC = lib
        except (OSError, AttributeError):
            _GVC = False
    return _GVC


def run_dot(graph: Any) -> None:
    """``graph.layout(prog="dot")``, without holding the GIL while graphviz works."""
    from pygraphviz import graphviz as gv

    with _DOT_LOCK:
        lib = libgvc()
        if not lib:
            graph.layout(prog="dot")
            return
        gvc = gv.gvContextWithBuiltins()
        try:
            if lib.gvLayout(int(gvc), int(graph.handle), b"dot") != 0:
                raise RuntimeError("graphviz dot could not lay out the graph")
            lib.gvRender(int(gvc), int(graph.handle), b"dot", None)  # positions -> attributes
            lib.gvFreeLayout(int(gvc), int(graph.handle))
        finally:
            gv.gvFreeContext(gvc)
        graph.has_layout = True


def layered(keys, sizes, edges, beside=None):
    """Longest-path layers top to bottom, items side by side in graph order; a key of
    ``beside`` (a source: a weight) in the layer of the key it maps to."""
    preds: dict[str, list[str]] = {k: [] for k in keys}
    for a, b in edges:
        preds[b].append(a)
    rank: dict[str, int] = {}
    for k in keys:  # keys are in graph order, so producers come first
        rank[k] = 1 + max((rank[p] for p in preds[k] if p in rank), default=-1)
    for k, partner in (beside or {}).items():
        rank[k] = rank[partner]
    rows: dict[int, list[str]] = {}
    for k in keys:
        rows.setdefault(rank[k], []).append(k)
    pos = {}
    y = 0.0
    width = 0.0
    gap_x, gap_y = NODESEP * 72, RANKSEP * 72
    for r in sorted(rows):
        row = rows[r]
        x = 0.0
        row_h = max(sizes[k][1] for k in row)
        for k in row:
            w, _ = sizes[k]
            pos[k] = (x + w / 2, y + row_h / 2)
            x += w + gap_x
        width = max(width, x - gap_x)
        y += row_h + gap_y
    return pos, width, max(y - gap_y, 0.0)


def dot_positions(keys, sizes, edges, beside=None):
    """``keys`` (boxes of ``sizes`` in points) wired by ``edges``, laid out top to bottom by
    ``dot``: each key's centre (y down), the width and the height.  A key of ``beside`` is
    put in the rank of the key it maps to."""
    import pygraphviz

    graph = pygraphviz.AGraph(directed=True, strict=True)
    big = len(keys) > 60
    graph.graph_attr.update(
        rankdir="TB",
        nodesep=str(NODESEP),
        ranksep=str(RANKSEP),
        splines="false",
        **({"nslimit": "2", "mclimit": "0.5"} if big else {}),
    )
    graph.node_attr.update(shape="box", fixedsize="true", label="")
    for k in keys:
        w, h = sizes[k]
        graph.add_node(k, width=f"{w / 72:.3f}", height=f"{h / 72:.3f}")
    for a, b in edges:
        graph.add_edge(a, b)
    for i, (a, b) in enumerate((beside or {}).items()):
        graph.add_subgraph([a, b], name=f"beside{i}", rank="same")
    run_dot(graph)
    bb = [float(v) for v in graph.graph_attr["bb"].split(",")]
    height = bb[3] - bb[1]
    pos = {}
    for k in keys:
        x, y = (float(v) for v in graph.get_node(k).attr["pos"].split(","))
        pos[k] = (x - bb[0], height - (y - bb[1]))
    return pos, bb[2] - bb[0], height
