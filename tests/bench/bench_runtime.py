"""The clean whole-model timer against torch.utils.benchmark's blocked_autorange, on the same
module, inputs and threads, in the same run: the medians should agree within 3 %."""

from __future__ import annotations

import importlib.util
import statistics
from collections.abc import Callable
from typing import Any

import torch
import torch.utils.benchmark as tb

from fxstudio.core.opening import OpenRequest, open_document
from fxstudio.core.runtime.run import profile_whole

MODELS = [("examples:resnet", ()), ("examples:transformer", ())]
if importlib.util.find_spec("torchvision") is not None:
    MODELS += [
        ("torchvision.models:resnet18", ("1x3x224x224",)),
        ("torchvision.models:mobilenet_v2", ("1x3x224x224",)),
        ("torchvision.models:vit_b_16", ("1x3x224x224",)),
    ]


def bench_runtime(emit: Callable[..., None], timed: Callable[..., list[float]]) -> None:
    threads = torch.get_num_threads()
    for spec, inputs in MODELS:
        try:
            doc = open_document(OpenRequest(spec, inputs=inputs))
        except Exception as exc:  # torchvision built for another torch
            emit(bench="agreement", model=spec, skipped=f"{type(exc).__name__}: {exc}")
            continue
        gm, x = doc.graph_module, tuple(doc.example_inputs)
        ours, theirs = [], []
        for _ in range(5):  # interleaved, so drift hits both alike
            ours.append(profile_whole(doc, "cpu", threads, None, 1.0).timing.median_s)
            with torch.no_grad():
                timer: Any = tb.Timer("gm(*x)", globals={"gm": gm, "x": x}, num_threads=threads)
                theirs.append(timer.blocked_autorange(min_run_time=1).median)
        a, b = statistics.median(ours), statistics.median(theirs)
        emit(
            bench="agreement",
            model=spec,
            threads=threads,
            fxstudio_median_s=a,
            blocked_autorange_median_s=b,
            ratio=a / b,
        )


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
    from fxstudio.core.patterns.apply import RewriteSpec, run
    from fxstudio.core.runtime.compare import compare

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
    run(after, RewriteSpec(builtin="fold-conv-bn"))
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
