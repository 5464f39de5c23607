"""The clean whole-model timer against torch.utils.benchmark's blocked_autorange, on the same
module, inputs and threads, in the same process, interleaved: the medians should agree within
3 % at 1 and 2 threads on models from ~50 µs to ~0.5 s a call (at 1 thread).

The sizes are MLPs (linear + GELU) captured by fx -- the same graph code path as any model --
plus the examples and, when torchvision imports, resnet18 / mobilenet_v2 / vit_b_16.  Both
timers get a warm-up first (blocked_autorange's own is one call: on a 0.5 s model, the calls
right after it are still slower -- fresh buffers, the allocator's pools not grown -- and that
alone read 7 % apart), and blocked_autorange gets the time for at least 6 blocks.  Each
repeat is a pair measured back to back, the order alternating; the figure is the median of
the pairs' ratios (with their IQR: the machine's noise in the same run)."""

from __future__ import annotations

import importlib.util
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.fx as fx
import torch.utils.benchmark as tb
from torch import nn

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.runtime.ondevice import profile_whole
from fxstudio.core.sessions.documents import open_document

MODELS = [("examples:resnet", ()), ("examples:transformer", ())]
if importlib.util.find_spec("torchvision") is not None:
    MODELS += [
        ("torchvision.models:resnet18", ("1x3x224x224",)),
        ("torchvision.models:mobilenet_v2", ("1x3x224x224",)),
        ("torchvision.models:vit_b_16", ("1x3x224x224",)),
    ]
#: (depth, width, batch) of the MLPs: about 50 µs, 0.3 ms, 5 ms, 60 ms and 0.5 s a call at
#: one thread on a 2020s x86 core.
SIZES = ((2, 64, 4), (4, 256, 32), (8, 512, 128), (8, 1024, 512), (10, 2048, 512))
REPEATS = 9  # pairs
MIN_TIME = 0.5  # seconds each side measures, per pair


def mlp(depth: int, width: int, batch: int) -> tuple[fx.GraphModule, tuple[torch.Tensor]]:
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.GELU()]
    return fx.symbolic_trace(nn.Sequential(*layers).eval()), (torch.randn(batch, width),)


def _theirs(gm: Any, x: tuple[Any, ...], threads: int, one_s: float) -> float:
    timer: Any = tb.Timer("gm(*x)", globals={"gm": gm, "x": x}, num_threads=threads)
    timer.blocked_autorange(min_run_time=0.05 + one_s)  # its warm-up
    return float(timer.blocked_autorange(min_run_time=max(MIN_TIME, 6 * one_s)).median)


def agreement(doc: Any, threads: int, emit: Callable[..., None], **labels: Any) -> None:
    """REPEATS pairs (ours, theirs) back to back, the order alternating; the ratio of each
    pair (the two saw the same machine), their median and IQR."""
    gm, x = doc.graph_module, tuple(doc.example_inputs)
    ours: list[float] = []
    theirs: list[float] = []
    with torch.no_grad():
        t0 = time.perf_counter()
        gm(*x)
        one_s = time.perf_counter() - t0
        for rep in range(REPEATS):
            sides = ("ours", "theirs") if rep % 2 == 0 else ("theirs", "ours")
            for side in sides:
                if side == "ours":
                    ours.append(profile_whole(doc, "cpu", threads, None, MIN_TIME).timing.median_s)
                else:
                    theirs.append(_theirs(gm, x, threads, one_s))
    ratios = sorted(a / b for a, b in zip(ours, theirs, strict=True))
    ratio = statistics.median(ratios)
    q = statistics.quantiles(ratios, n=4)
    emit(
        bench="agreement",
        **labels,
        threads=threads,
        fxstudio_median_s=statistics.median(ours),
        blocked_autorange_median_s=statistics.median(theirs),
        ratio=round(ratio, 4),
        ratio_iqr=round(q[2] - q[0], 4),
        within_3_percent=abs(ratio - 1) <= 0.03,
    )


def bench_runtime(emit: Callable[..., None], timed: Callable[..., list[float]]) -> None:
    from fxstudio.core.graph.document import GraphDocument

    for threads in (1, 2):
        for depth, width, batch in SIZES:
            gm, x = mlp(depth, width, batch)
            doc = GraphDocument(gm, None, x)
            agreement(doc, threads, emit, model=f"mlp {depth}x{width} batch {batch}")
        for spec, inputs in MODELS:
            try:
                doc = open_document(OpenRequest(spec, inputs=inputs))
            except Exception as exc:  # torchvision built for another torch
                emit(bench="agreement", model=spec, skipped=f"{type(exc).__name__}: {exc}")
                continue
            agreement(doc, threads, emit, model=spec)


def _kendall_tau(a: list[str], b: list[str]) -> float:
    """Kendall's τ between two rankings of the same items (those in both)."""
    common = [x for x in a if x in b]
    pos = {x: i for i, x in enumerate(b)}
    n = len(common)
    if n < 2:
        return 1.0
    concordant = discordant = 0
    for i in range(n):
        for j in range(i + 1, n):
            if pos[common[i]] < pos[common[j]]:
                concordant += 1
            else:
                discordant += 1
    return (concordant - discordant) / (n * (n - 1) / 2)


def bench_profile(emit: Callable[..., None], timed: Callable[..., list[float]]) -> None:
    """The per-node run against the clean one: overhead, attribution, sum of parts, the top-10
    ranking over 3 runs; the A/A rate of the comparison; a fold's speed-up with its CI."""
    from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
    from fxstudio.core.runtime.speedup import compare

    threads = torch.get_num_threads()
    for spec, inputs in MODELS:
        try:
            doc = open_document(OpenRequest(spec, inputs=inputs))
        except Exception as exc:
            emit(bench="per-node", model=spec, skipped=f"{type(exc).__name__}: {exc}")
            continue
        runs = [profile_whole(doc, "cpu", threads, None, 1.0, per_node=True) for _ in range(3)]
        profiles = [r.nodes for r in runs if r.nodes is not None]
        tops = [[n.name for n in p.top(10)] for p in profiles]
        taus = [_kendall_tau(tops[0], t) for t in tops[1:]]
        p = profiles[0]
        emit(
            bench="per-node",
            model=spec,
            nodes=len(p.nodes),
            calls=p.calls,
            profiled_over_clean=statistics.median(q.profiled_over_clean for q in profiles),
            overhead=statistics.median(q.overhead for q in profiles),
            attributed=min(q.attributed for q in profiles),
            parts_over_whole=max(abs(q.parts_s / q.whole_s - 1) for q in profiles),
            median_whole_over_whole=statistics.median(
                q.median_whole_s / q.whole_s for q in profiles
            ),
            gap_share=statistics.median(q.gap_s / q.whole_s for q in profiles),
            top10_kendall_tau_min=min(taus),
        )
    doc = open_document("examples:resnet")
    trials = [compare(doc, doc, "cpu", threads, None, 1.0, 9) for _ in range(20)]
    emit(
        bench="A/A",
        model="examples:resnet",
        trials=len(trials),
        not_significant=sum(not t.whole.significant for t in trials),
        speedups=[round(t.whole.speedup, 4) for t in trials],
    )
    per_node = [compare(doc, doc, "cpu", threads, None, 1.0, 9, per_node=True) for _ in range(5)]
    emit(
        bench="A/A per node",
        model="examples:resnet",
        trials=len(per_node),
        rows=sum(len(t.nodes) + len(t.modules) for t in per_node),
        significant_rows=sum(
            d.change.significant for t in per_node for d in [*t.nodes, *t.modules]
        ),
    )
    spec, inputs = MODELS[2] if len(MODELS) > 2 else MODELS[0]
    before = open_document(OpenRequest(spec, inputs=inputs))
    after = open_document(OpenRequest(spec, inputs=inputs))
    rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    c = compare(before, after, "cpu", threads, None, 4.0, 15, per_node=True)
    emit(
        bench="fold-conv-bn before/after",
        model=spec,
        speedup=c.whole.speedup,
        ci=(c.whole.ci_low, c.whole.ci_high),
        p=c.whole.p_value,
        significant=c.whole.significant,
        max_abs_diff=c.max_abs_diff,
        provenance_rows=sum(d.how == "provenance" for d in c.nodes),
    )
