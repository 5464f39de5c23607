"""Heat overlays for a picture, from what the flows measured: each node's fraction (0..1)
and the text of its tag, and each module's (``group:PATH``: what its box shows collapsed),
as :func:`~fxstudio.core.share.svg.drawing_svg` takes them.

- :func:`profile_heat` -- a per-node profile: each node's and module's share of the time;
- :func:`memory_heat` -- the memory estimate: the bytes each node's output allocates and
  each module's nodes together, over the largest;
- :func:`diff_heat` -- a compare against a baseline, on the right (the drawn) graph: nodes
  added (1), changed (0.75, and why), values that differ (0.5, the largest difference); a
  module by its hottest node, tagged with how many differ.

Example:
    >>> from fxstudio.core.flows.diff import DiffRequest, diff_flow
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.edits import set_target
    >>> doc = open_document("examples:negrelu")
    >>> _ = set_target(doc, "relu", "torch.tanh")
    >>> heat = diff_heat(diff_flow(DiffRequest("examples:negrelu", doc)))
    >>> heat["relu"][1]
    'changed (kind)'
"""

from __future__ import annotations

from typing import Any

from fxstudio.core.graph.graphviews import module_path
from fxstudio.core.graph.notation import group_key
from fxstudio.core.process.guard import format_bytes

__all__ = ["diff_heat", "memory_heat", "profile_heat"]

ADDED, CHANGED, VALUES = 1.0, 0.75, 0.5


def profile_heat(nodes: Any) -> dict[str, tuple[float, str]]:
    """From a :class:`~fxstudio.core.runtime.breakdown.NodeProfile`: each timed node's and
    module's share of the profiled run (what took no time left out)."""
    out = {n.name: (n.share, f"{n.share:.1%}") for n in nodes.nodes if n.share > 0}
    for m in nodes.modules:
        if m.path and m.share > 0:
            out[group_key(m.path)] = (m.share, f"{m.share:.1%}")
    return out


def memory_heat(estimate: Any) -> dict[str, tuple[float, str]]:
    """From a :class:`~fxstudio.core.memory.estimate.MemoryEstimate`: each node that
    allocates (views and in-place ops allocate nothing) and each module, by bytes over the
    largest of them all (a module's box holds the sum of its nodes, as on the canvas)."""
    sizes = {n.name: n.bytes for n in estimate.nodes if n.bytes > 0}
    sizes.update({group_key(m.path): m.bytes for m in estimate.modules if m.path and m.bytes})
    top = max(sizes.values(), default=1)
    return {name: (b / top, format_bytes(b)) for name, b in sizes.items()}


def diff_heat(result: Any) -> dict[str, tuple[float, str]]:
    """From a :class:`~fxstudio.core.flows.diff.DiffResult`, on its right graph: what was
    added, what changed (and why), then where the values differ; each module holding some
    by its hottest, tagged with how many."""
    out: dict[str, tuple[float, str]] = {}
    if result.values is not None:
        for v in result.values.nodes:
            if v.differs:
                said = v.note if v.max_abs_diff is None else f"Δ {v.max_abs_diff:.2g}"
                out[v.right] = (VALUES, said)
    for pair in result.alignment.changed():
        for name in pair.right:
            out[name] = (CHANGED, f"changed ({pair.why})" if pair.why else "changed")
    for name in result.alignment.added:
        out[name] = (ADDED, "added")
    modules: dict[str, list[float]] = {}
    graph = result.right.node_index()
    for name, (value, _) in list(out.items()):
        path = module_path(graph[name]) if name in graph else ""
        while path:
            modules.setdefault(path, []).append(value)
            path = path.rpartition(".")[0]
    for path, values in modules.items():
        n = len(values)
        out[group_key(path)] = (max(values), f"{n} differ" if n > 1 else "1 differs")
    return out
