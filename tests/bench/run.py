"""fxstudio benchmarks: one JSON object per measurement, each against a baseline measured
in the same run.  Run with ``make bench``.  Timings are medians of several runs; compare
ratios, not absolute seconds, across machines."""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.fx as fx  # noqa: E402
from torch.fx.passes.shape_prop import ShapeProp  # noqa: E402

from fxstudio.core.graph.propagation import propagate_shapes  # noqa: E402
from fxstudio.core.model.capture import trace_fx  # noqa: E402
from fxstudio.core.model.loading import load_model  # noqa: E402
from fxstudio.core.sessions.documents import open_document  # noqa: E402

SYNTHETIC = ROOT / "tests" / "bench" / "synthetic.py"


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return runs


def emit(**record: object) -> None:
    print(json.dumps(record), flush=True)


def bench_capture(nodes: int, repeats: int) -> None:
    spec = f"{SYNTHETIC}:deep_{nodes}"
    loaded = load_model(spec)
    module, inputs = loaded.module, loaded.example_inputs
    graph_nodes = len(fx.symbolic_trace(module).graph.nodes)

    base = timed(lambda: fx.symbolic_trace(module), repeats)
    trace = timed(lambda: trace_fx(module), repeats)
    gm = trace_fx(module)
    shapes = timed(lambda: propagate_shapes(gm, inputs), repeats)
    fake = timed(lambda: propagate_shapes(gm, inputs, method="fake"), repeats)
    real_shapes = timed(lambda: ShapeProp(fx.symbolic_trace(module)).propagate(*inputs), repeats)
    whole = timed(lambda: open_document(spec), repeats)

    base_med = statistics.median(base)
    common = {"bench": "capture", "nodes": graph_nodes, "repeats": repeats}
    emit(**common, what="baseline: torch.fx.symbolic_trace", median_s=round(base_med, 4))
    emit(
        **common,
        what="fxstudio trace (symbolic_trace + stack traces)",
        median_s=round(statistics.median(trace), 4),
        ratio_vs_symbolic_trace=round(statistics.median(trace) / base_med, 2),
    )
    emit(
        **common,
        what="fxstudio shapes, auto (a real run for a model this small)",
        median_s=round(statistics.median(shapes), 4),
    )
    emit(
        **common,
        what="fxstudio shapes, fake tensors (the path for large models)",
        median_s=round(statistics.median(fake), 4),
    )
    emit(
        **common,
        what="baseline: symbolic_trace + ShapeProp (real tensors)",
        median_s=round(statistics.median(real_shapes), 4),
    )
    emit(
        **common,
        what="fxstudio open: load + capture + shapes + document",
        median_s=round(statistics.median(whole), 4),
        ratio_vs_symbolic_trace=round(statistics.median(whole) / base_med, 2),
    )


def main() -> None:
    from tests.bench.bench_export import bench_export

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    # e.g. `run.py export` runs one group (capture, export, layout, edits, patterns, runtime,
    # profile, stepping, scale, real_sizes, compare, canvas, rewrite_scale, memory)
    only = set(sys.argv[1:])
    if not only or "capture" in only:
        for nodes, repeats in ((100, 7), (1000, 5), (10000, 3)):
            bench_capture(nodes, repeats)
    if not only or "export" in only:
        bench_export(emit, timed)
    if not only or "layout" in only:
        from tests.bench.bench_layout import bench_layout

        bench_layout(emit, timed)
    if not only or "edits" in only:
        from tests.bench.bench_edits import bench_edits, bench_window_edits

        bench_edits(emit, timed)
        bench_window_edits(emit)
    if not only or "patterns" in only:
        from tests.bench.bench_patterns import bench_patterns

        bench_patterns(emit, timed)
        from tests.bench.bench_rewrite_stalls import bench_rewrite_stalls

        bench_rewrite_stalls(emit)
    if not only or "rewrite_scale" in only:
        from tests.bench.bench_rewrite_scale import bench_rewrite_scale

        bench_rewrite_scale(emit)
    if not only or "runtime" in only:
        from tests.bench.bench_runtime import bench_runtime

        bench_runtime(emit, timed)
    if not only or "profile" in only:
        from tests.bench.bench_runtime import bench_profile

        bench_profile(emit, timed)
    if not only or "stepping" in only:
        from tests.bench.bench_stepping import bench_stepping

        bench_stepping(emit, timed)
    if not only or "scale" in only:
        from tests.bench.bench_scale import bench_scale

        bench_scale(emit)
    if not only or "real_sizes" in only:
        from tests.bench.bench_real_sizes import bench_real_sizes

        bench_real_sizes(emit)
    if not only or "compare" in only:
        from tests.bench.bench_compare import bench_compare

        bench_compare(emit)
    if not only or "canvas" in only:
        from tests.bench.bench_canvas import bench_canvas, bench_responsiveness

        bench_canvas(emit, timed)
        bench_responsiveness(emit)
    if not only or "viewers" in only:
        from tests.bench.bench_viewers import bench_viewers

        bench_viewers(emit, timed)
    if not only or "memory" in only:
        from tests.bench.bench_memory import bench_memory

        bench_memory(emit, timed)
    if not only or "render" in only:
        from tests.bench.bench_render import bench_render

        bench_render(emit, timed)


if __name__ == "__main__":
    main()
