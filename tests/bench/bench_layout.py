"""Layout benchmarks: fxstudio's hierarchical layout against one plain `dot` run over the
same flat graph (bounded by a timeout)."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import time
import tracemalloc
from pathlib import Path

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.layout.groups import top_level_groups
from fxstudio.core.layout.placing import LayoutEngine
from fxstudio.core.sessions.documents import open_document

ROOT = Path(__file__).resolve().parents[2]
DOT_TIMEOUT_S = 60


def flat_dot_source(doc) -> str:
    lines = ["digraph G {", "rankdir=TB;", "node [shape=box];"]
    lines += [f'"{n}";' for n in doc.node_names()]
    lines += [f'"{s}" -> "{t}";' for s, t, _ in doc.edges()]
    return "\n".join(lines + ["}"])


def plain_dot_seconds(doc) -> float | None:
    if shutil.which("dot") is None:
        return None
    t0 = time.perf_counter()
    try:
        subprocess.run(
            ["dot", "-Tplain", "-o", "/dev/null"],
            input=flat_dot_source(doc),
            text=True,
            timeout=DOT_TIMEOUT_S,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return float("inf")
    return time.perf_counter() - t0


#: The graphs the layout and canvas benchmarks measure: (label, MODEL spec, frontend).
CASES = [
    ("GPT-2 12 layers (transformers, export)", "tests/models/hf_models.py:gpt2_12", "export"),
    ("GPT-2 48 layers (transformers, export)", "tests/models/hf_models.py:gpt2_48", "export"),
    ("synthetic residual MLP", "tests/bench/synthetic.py:deep_10000", "fx"),
]


def open_cases(emit, bench: str, cases=CASES):
    """``(label, document)`` for each case that opens; the others are reported as skipped."""
    for label, spec, frontend in cases:
        try:
            doc = open_document(OpenRequest(str(ROOT / spec), frontend))
        except Exception as exc:  # transformers missing
            emit(bench=bench, model=label, skipped=f"{type(exc).__name__}: {exc}"[:200])
            continue
        yield label, doc


def bench_layout(emit, timed) -> None:
    for label, doc in open_cases(emit, "layout"):
        common = {"bench": "layout", "model": label, "nodes": len(doc)}
        collapsed = top_level_groups(doc)
        first = timed(lambda d=doc, c=collapsed: LayoutEngine().layout(d, c), 3)
        expanded = timed(lambda d=doc: LayoutEngine().layout(d, set()), 3)
        engine = LayoutEngine()
        engine.layout(doc, set())
        warm = timed(lambda d=doc, e=engine: e.layout(d, set()), 3)
        tracemalloc.start()
        LayoutEngine().layout(doc, set())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        dot = plain_dot_seconds(doc)
        emit(
            **common,
            what="first picture (top-level modules collapsed)",
            median_s=round(statistics.median(first), 3),
            collapsed=len(collapsed),
        )
        emit(
            **common,
            what="fully expanded, cold cache",
            median_s=round(statistics.median(expanded), 3),
            python_peak_mb=round(peak / 2**20, 1),
        )
        emit(
            **common,
            what="fully expanded, warm cache (relayout)",
            median_s=round(statistics.median(warm), 4),
        )
        if dot is not None:
            emit(
                **common,
                what=f"baseline: plain dot over the flat graph (timeout {DOT_TIMEOUT_S} s)",
                seconds=None if dot == float("inf") else round(dot, 3),
                timed_out=dot == float("inf"),
                ratio_dot_vs_expanded=None
                if dot == float("inf")
                else round(dot / statistics.median(expanded), 1),
            )
