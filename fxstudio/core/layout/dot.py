"""Running graphviz's ``dot`` on one graph without holding the GIL (so the window stays live
while it works), and the plain layered layout used where graphviz is missing or fails."""

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


def layered(keys, sizes, edges):
    """Longest-path layers top to bottom, items side by side in graph order."""
    preds: dict[str, list[str]] = {k: [] for k in keys}
    for a, b in edges:
        preds[b].append(a)
    rank: dict[str, int] = {}
    for k in keys:  # keys are in graph order, so producers come first
        rank[k] = 1 + max((rank[p] for p in preds[k] if p in rank), default=-1)
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
