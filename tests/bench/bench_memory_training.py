"""The training step's memory estimate (issue 39: ``fxstudio memory --train``) against what
it stands on, in the same run: AOTAutograd tracing and partitioning the joint graph on fake
tensors (``fxcompat.autograd.joint_graphs``: what any estimator built on the partitioned
graphs pays at least) -- and, where the model has weights, one real step measured, with the
estimate's ratio to it.

    python tests/bench/bench_memory_training.py             # a small LLaMA, the 70B
    python tests/bench/bench_memory_training.py llama405b   # these only (names below)
"""

from __future__ import annotations

import gc
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SMALL = (
    "hf:llama(num_hidden_layers=2, hidden_size=256, intermediate_size=512, "
    "num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=1024, "
    "attn_implementation='eager')"
)
LLAMA70B = (
    "hf:llama(num_hidden_layers=80, hidden_size=8192, intermediate_size=28672, "
    "num_attention_heads=64, num_key_value_heads=8, vocab_size=128256)"
)
LLAMA405B = (
    "hf:llama(num_hidden_layers=126, hidden_size=16384, intermediate_size=53248, "
    "num_attention_heads=128, num_key_value_heads=8, vocab_size=128256)"
)

#: name -> (MODEL spec, inputs, structure only, repeats)
CASES: dict[str, tuple[str, tuple[str, ...], bool, int]] = {
    "llama-small-2x256": (SMALL, ("2x256:int64",), False, 3),
    "llama70b-8192": (LLAMA70B, ("1x8192:int64",), True, 1),
    "llama405b-8192": (LLAMA405B, ("1x8192:int64",), True, 1),
}
DEFAULT = ("llama-small-2x256", "llama70b-8192")
GIB = 1 << 30


def _best(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    times, got = [], None
    for _ in range(repeats):
        got = None
        gc.collect()  # the last run's graphs gone before the clock starts
        t0 = time.perf_counter()
        got = fn()
        times.append(time.perf_counter() - t0)
    return min(times), got


def bench(name: str) -> dict[str, object]:
    from fxstudio.core.flows import OpenRequest, open_document
    from fxstudio.core.fxcompat.autograd import joint_graphs
    from fxstudio.core.graph.weights import faked
    from fxstudio.core.memory.training import step_loss, training_estimate
    from fxstudio.core.memory.training_run import measure_training

    spec, inputs, bare, repeats = CASES[name]
    doc = open_document(OpenRequest(spec, "export", inputs=inputs, weights=not bare))
    gm, args = doc.graph_module, doc.example_inputs

    def aot_only() -> object:
        with faked(gm, args) as fakes:
            return joint_graphs(gm, fakes, step_loss)

    baseline, _ = _best(aot_only, repeats)
    took, est = _best(lambda: training_estimate(gm, args, "adamw"), repeats)
    record: dict[str, object] = {
        "case": name,
        "nodes": len(gm.graph.nodes),
        "estimate_s": round(took, 2),
        "aot_autograd_s": round(baseline, 2),
        "peak_gib": round(est.peak_bytes / GIB, 3),  # type: ignore[attr-defined]
        "peak_at": f"{est.peak_phase} {est.peak_node}",  # type: ignore[attr-defined]
        "saved_gib": round(est.saved_bytes / GIB, 3),  # type: ignore[attr-defined]
        "optimizer_gib": round(est.optimizer_bytes / GIB, 3),  # type: ignore[attr-defined]
    }
    if not bare:
        measured = measure_training(gm, args, "adamw")
        record["measured_peak_gib"] = round(measured.peak_bytes / GIB, 4)
        record["ratio"] = round(est.peak_bytes / measured.peak_bytes, 4)  # type: ignore[attr-defined]
    return record


if __name__ == "__main__":
    for case in sys.argv[1:] or DEFAULT:
        print(json.dumps(bench(case)), flush=True)
