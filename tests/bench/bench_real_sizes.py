"""Real sizes, structure only (issue 38): the shapes of Llama-3-70B and -405B, Mixtral-8x22B
and Flux-12B opened without weights, against torch's bare step on the same machine in
the same run -- the model built under ``FakeTensorMode`` and captured by
``torch.export.export(strict=False)``, nothing else.  Each side runs in a fresh process and is
timed from the process's start (Python, torch, transformers and fxstudio imported; peak RSS
its own), as a user meets it.

Flux.1's 12B transformer (diffusers, a factory in ``real_models.py``) is measured the same way.

Measured: the open (start, build, capture, shapes, document) and its ratio to the bare step; the
first picture (layout with the top level collapsed, the repeated layers folded); expanding
one layer after it; fuse-attention over the whole model (where attention is written out);
the process's peak RSS after the open, before the baseline runs.

    python tests/bench/bench_real_sizes.py            # every model, one JSON line each
    python tests/bench/bench_real_sizes.py llama70b   # one model, in this process
    python tests/bench/bench_real_sizes.py bare llama70b  # torch's bare step, in this one
"""

from __future__ import annotations

import time

_START = time.perf_counter()  # each side is timed from here: before any import

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

#: name -> (transformers model type, config overrides).  Attention written out (eager), as
#: fuse-attention's subject; the shapes are the published configurations'.
MODELS: dict[str, tuple[str, dict]] = {
    "llama70b": (
        "llama",
        dict(
            num_hidden_layers=80,
            hidden_size=8192,
            intermediate_size=28672,
            num_attention_heads=64,
            num_key_value_heads=8,
            vocab_size=128256,
        ),
    ),
    "llama405b": (
        "llama",
        dict(
            num_hidden_layers=126,
            hidden_size=16384,
            intermediate_size=53248,
            num_attention_heads=128,
            num_key_value_heads=8,
            vocab_size=128256,
        ),
    ),
    "mixtral8x22b": (
        "mixtral",
        dict(
            num_hidden_layers=56,
            hidden_size=6144,
            intermediate_size=16384,
            num_attention_heads=48,
            num_key_value_heads=8,
            num_local_experts=8,
            num_experts_per_tok=2,
            vocab_size=32768,
        ),
    ),
}


#: Not hf: configs: name -> the factory's MODEL spec (tests/bench/real_models.py).
FACTORIES = {"flux12b": f"{ROOT / 'tests' / 'bench' / 'real_models.py'}:flux_12b"}


def spec_of(name: str, eager: bool = False) -> str:
    if name in FACTORIES:
        return FACTORIES[name]
    kind, overrides = MODELS[name]
    args = dict(overrides, **({"attn_implementation": "eager"} if eager else {}))
    return f"hf:{kind}(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"


def _rss_mb() -> float:
    """This process's own peak RSS (VmHWM: ``ru_maxrss`` keeps the peak of the process it was
    forked from, ``make bench``'s, which may hold gigabytes by then)."""
    with open("/proc/self/status") as status:
        kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    return round(kb / 1024, 1)


def bare_torch() -> None:
    """torch alone: build under FakeTensorMode, export (non-strict) on 16 fake tokens."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from transformers import AutoConfig, AutoModel

    name = sys.argv[2]
    with FakeTensorMode(allow_non_fake_inputs=True):
        if name in FACTORIES:
            from tests.bench.real_models import flux_12b

            model = flux_12b()
            inputs = model.example_inputs()
        else:
            kind, overrides = MODELS[name]
            config = AutoConfig.for_model(kind, **overrides, use_cache=False)
            model = AutoModel.from_config(config).eval()
            inputs = (torch.zeros(1, 16, dtype=torch.int64),)
    torch.export.export(model, inputs, strict=False)
    print(json.dumps({"seconds": time.perf_counter() - _START}), flush=True)


def one_model(name: str) -> list[dict]:
    from fxstudio.core.flows import (
        OpenRequest,
        RewriteRequest,
        RewriteSpec,
        open_document,
        rewrite_flow,
    )
    from fxstudio.core.layout.groups import top_level_groups
    from fxstudio.core.layout.placing import LayoutEngine
    from fxstudio.core.process import collector

    frontend = "export"  # as hf: models are captured (the factory's too)
    doc = open_document(OpenRequest(spec_of(name), frontend, weights=False))
    opened = time.perf_counter() - _START
    engine = LayoutEngine()
    top = top_level_groups(doc)
    t0 = time.perf_counter()
    with collector.sparing(len(doc)):
        first = engine.layout(doc, top)
    first_s = time.perf_counter() - t0
    folded = max((len(f) for f in first.folds.values()), default=0)
    layer = sorted(p for p in (g.path for g in doc.module_tree().walk()) if p.endswith(".0"))
    expand_s = None
    if layer:
        t0 = time.perf_counter()
        with collector.sparing(len(doc)):
            engine.layout(doc, (top | {layer[0].rsplit(".", 1)[0]}) - {layer[0]})
        expand_s = time.perf_counter() - t0
    rss = _rss_mb()
    common = {"bench": "real_sizes", "model": name, "nodes": len(doc), "weights": doc.weights}
    out = [
        {**common, "what": "open", "seconds": opened},
        {
            **common,
            "what": "first picture (top level collapsed)",
            "median_s": round(first_s, 3),
            "folded": folded,
        },
        {**common, "what": f"expand {layer[0] if layer else '-'}", "median_s": expand_s},
        {
            **common,
            "what": "peak RSS after the open and layouts (before the baseline)",
            "rss_mb": rss,
        },
    ]
    out += edit_records(doc, common)
    if name in FACTORIES:  # diffusers' attention processors call SDPA already
        return out
    eager = open_document(OpenRequest(spec_of(name, eager=True), frontend, weights=False))
    t0 = time.perf_counter()
    report = rewrite_flow(eager, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    out.append(
        {
            **common,
            "what": "fuse-attention over the whole model (eager attention)",
            "median_s": round(time.perf_counter() - t0, 2),
            "replaced": len(report.result.replaced),
        }
    )
    return out


def edit_records(doc, common: dict) -> list[dict]:
    """An edit of one node (an activation made another), shapes included, against
    propagating the whole graph's shapes again (what every edit cost before)."""
    import statistics

    from fxstudio.core import edits
    from fxstudio.core.graph.propagation import repropagate

    rows = doc.rows()
    node = next((r.name for r in rows if r.target.endswith(("silu.default", "gelu.default"))), None)
    if node is None:
        return []
    target = doc.row(node).target
    other = "torch.ops.aten.relu.default"
    runs, whole = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        edit = edits.set_target(doc, node, other)
        runs.append(time.perf_counter() - t0)
        edit.undo()
        t0 = time.perf_counter()
        repropagate(doc.graph_module, doc.graph, doc.example_inputs)
        whole.append(time.perf_counter() - t0)
    assert doc.row(node).target == target
    edit_s, whole_s = statistics.median(runs), statistics.median(whole)
    return [
        {
            **common,
            "what": f"an edit ({node} made relu), its shapes included, vs the whole graph's "
            "shapes propagated again",
            "median_s": round(edit_s, 3),
            "baseline_s": round(whole_s, 3),
            "ratio": round(edit_s / whole_s, 3),
        }
    ]


def _run(*args: str) -> tuple[list[dict], str]:
    done = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, timeout=1800
    )
    lines = [json.loads(line) for line in done.stdout.splitlines() if line[:1] == "{"]
    failed = "" if done.returncode == 0 and lines else (done.stderr.strip() or "failed")[-300:]
    return lines, failed


def bench_real_sizes(emit) -> None:
    for name in (*MODELS, *FACTORIES):
        bare, failed = _run("bare", name)
        if failed:
            emit(bench="real_sizes", model=name, skipped=f"torch's bare step: {failed}")
            continue
        lines, failed = _run(name)
        if failed:
            emit(bench="real_sizes", model=name, skipped=failed)
            continue
        opened, base = lines[0].pop("seconds"), bare[0]["seconds"]
        emit(
            **dict(
                lines[0],
                what="structure-only open vs torch's fake build + export (each in a fresh "
                "process, timed from before its imports)",
                median_s=round(opened, 2),
                baseline_s=round(base, 2),
                ratio=round(opened / base, 2),
            )
        )
        for record in lines[1:]:
            emit(**record)


if __name__ == "__main__":
    if sys.argv[1:2] == ["bare"]:
        bare_torch()
    elif len(sys.argv) > 1:
        for record in one_model(sys.argv[1]):
            print(json.dumps(record), flush=True)
    else:
        bench_real_sizes(lambda **r: print(json.dumps(r), flush=True))
