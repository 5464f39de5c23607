"""Compare: aligning two 10,000-node graphs (the nested synthetic model: modules four levels
deep), against a plain name match of the same two graphs in the same run.

- the same graph twice (an edit's before and after: everything pairs by name);
- after a rewrite of every GELU (swap-activation gelu:relu: provenance pairs);
- the right side renamed and stripped of its source lines and module stacks (nothing but the
  graph's structure to go on: the worst case).

    python tests/bench/bench_compare.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SIZE = 10000


def _median(fn, repeats: int = 5) -> float:
    from tests.bench.run import timed

    return statistics.median(timed(fn, repeats))


def _anonymous(doc):
    """The document's graph with every node renamed and its source and modules forgotten."""
    for i, node in enumerate(doc.graph.nodes):
        if node.op not in ("placeholder", "output"):
            node._rename(f"n{i}")
        node.meta.pop("stack_trace", None)
        node.meta.pop("nn_module_stack", None)
        node.stack_trace = None
    doc.drop_caches()
    return doc


def bench_compare(emit, timed=None) -> None:
    from fxstudio.core.compare.align import align
    from fxstudio.core.graph.request import OpenRequest
    from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
    from fxstudio.core.sessions.documents import open_document
    from tests.bench.bench_scale import SYNTHETIC

    request = OpenRequest(f"{SYNTHETIC}:nested_{SIZE}", "fx", ("2x8",))
    left = open_document(request)
    swapped = open_document(request)
    rewrite_flow(swapped, RewriteRequest(RewriteSpec(builtin="swap-activation:gelu:relu")))
    cases = [
        ("the same graph twice", open_document(request)),
        ("after swap-activation gelu:relu", swapped),
        ("renamed, no source or modules (structure only)", _anonymous(open_document(request))),
    ]
    for what, right in cases:
        names = [n.name for n in right.graph.nodes]

        def by_name(right=right) -> int:
            mine = {n.name for n in left.graph.nodes}
            return sum(n.name in mine for n in right.graph.nodes)

        base = _median(by_name)
        seconds = _median(lambda right=right: align(left, right), 3)
        a = align(left, right)
        emit(
            bench="compare",
            what=f"align {len(left)} vs {len(names)} nodes: {what}",
            median_s=round(seconds, 3),
            baseline_s=round(base, 4),
            baseline="a plain name match",
            ratio=round(seconds / base, 1),
            pairs=len(a.pairs),
            removed=len(a.removed),
            added=len(a.added),
        )


if __name__ == "__main__":
    from tests.bench.run import emit

    bench_compare(emit)
