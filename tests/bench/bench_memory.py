"""The static memory estimate (issue 39) against torch's own fake pass over the same graph in
the same run (``torch.fx.passes.fake_tensor_prop.FakeTensorProp``: every node on fake
tensors, which is what any estimator built on fake values pays at least).

Measured, medians of a few runs: the estimate as ``fxstudio memory`` and the Memory dock make
it (``memory_flow``: the document's recorded shapes, each kind of call run once alone), the
estimate at other input sizes (a fake run of its own), and the baseline.  The issue's
targets: the structure-only Llama-3-70B at 8,192 tokens in <= 5 s, a 10k-node graph in <= 1 s.

    python tests/bench/bench_memory.py            # 70B, a 10k-node graph, resnet50, GPT-2
    python tests/bench/bench_memory.py llama405b  # these only (names below)
    python tests/bench/run.py memory              # as part of make bench
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LLAMA70B = (
    "hf:llama(num_hidden_layers=80, hidden_size=8192, intermediate_size=28672, "
    "num_attention_heads=64, num_key_value_heads=8, vocab_size=128256)"
)
LLAMA405B = (
    "hf:llama(num_hidden_layers=126, hidden_size=16384, intermediate_size=53248, "
    "num_attention_heads=128, num_key_value_heads=8, vocab_size=128256)"
)

#: name -> (MODEL spec, inputs, structure only, the issue's limit in seconds or None)
CASES: dict[str, tuple[str, tuple[str, ...], bool, float | None]] = {
    "llama70b-8192": (LLAMA70B, ("1x8192:int64",), True, 5.0),
    "synthetic-10k": (f"{ROOT / 'tests' / 'bench' / 'synthetic.py'}:deep_10000", (), False, 1.0),
    "resnet50": ("torchvision.models:resnet50", ("1x3x224x224",), False, None),
    "gpt2-512": ("hf:gpt2(attn_implementation='eager')", ("1x512:int64",), False, None),
    "llama405b-8192": (LLAMA405B, ("1x8192:int64",), True, 5.0),
}
DEFAULT = ("llama70b-8192", "synthetic-10k", "resnet50", "gpt2-512")


def _timed(fn: Callable[[], object], repeats: int) -> list[float]:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return runs


def _emit(**record: object) -> None:
    print(json.dumps(record), flush=True)


def _fake_tensor_prop(doc) -> Callable[[], object]:
    """torch's FakeTensorProp over the document's graph, its weights fake (meta ones too)."""
    from torch.fx.passes.fake_tensor_prop import FakeTensorProp

    from fxstudio.core.fxcompat import fake_tensor_mode, reparametrized
    from fxstudio.core.graph.weights import fake_of, fake_state

    gm = doc.graph_module

    def run() -> object:
        mode = fake_tensor_mode()
        fakes = [fake_of(mode, t) for t in doc.example_inputs]
        with reparametrized(gm, fake_state(gm, mode)):
            return FakeTensorProp(gm, mode).propagate_dont_convert_inputs(*fakes)

    return run


def bench_memory(emit=_emit, timed=_timed, names: tuple[str, ...] = DEFAULT) -> None:
    from fxstudio.core.errors import UserError
    from fxstudio.core.flows import MemoryRequest, OpenRequest, memory_flow, open_document
    from fxstudio.core.memory.estimate import estimate

    for name in names:
        spec, inputs, bare, limit = CASES[name]
        t0 = time.perf_counter()
        doc = open_document(OpenRequest(spec, inputs=inputs, weights=not bare))
        open_s = time.perf_counter() - t0
        repeats = 3
        result = memory_flow(doc)  # (warm: the first fake mode imports torch._dynamo)
        flow = timed(lambda d=doc: memory_flow(d), repeats)
        gm, given = doc.graph_module, tuple(doc.example_inputs)
        fake = timed(lambda g=gm, i=given: estimate(g, i, recorded=False), repeats)
        base = timed(_fake_tensor_prop(doc), repeats)
        est = result.estimate
        common = {
            "bench": "memory",
            "model": name,
            "nodes": len(doc.graph.nodes),
            "structure_only": bare,
            "open_s": round(open_s, 2),
        }
        b = statistics.median(base)
        emit(**common, what="baseline: torch FakeTensorProp", median_s=round(b, 4))
        m = statistics.median(flow)
        emit(
            **common,
            what=f"fxstudio memory (estimate: {est.how})",
            median_s=round(m, 4),
            vs_baseline=round(m / b, 3),
            limit_s=limit,
            within=None if limit is None else m <= limit,
            peak_bytes=est.peak_bytes,
            peak_gib=round(est.peak_bytes / 2**30, 3),
            peak_node=est.peak_node,
            params_gib=round(est.params_bytes / 2**30, 2),
        )
        f = statistics.median(fake)
        emit(
            **common,
            what="estimate at other sizes (a fake run of its own)",
            median_s=round(f, 4),
            vs_baseline=round(f / b, 3),
        )
        if inputs and inputs[0].startswith("1x"):  # the batch doubled: another fake run
            doubled = ",".join("2" + s[1:] for s in inputs)
            t0 = time.perf_counter()
            try:
                two = memory_flow(doc, MemoryRequest(inputs=doubled)).estimate
            except UserError as exc:  # an export graph: captured at fixed sizes
                emit(**common, what=f"estimate at {doubled}", refused=str(exc).split(":")[0])
                continue
            emit(
                **common,
                what=f"estimate at {doubled}",
                seconds=round(time.perf_counter() - t0, 4),
                peak_bytes=two.peak_bytes,
                peak_ratio_to_batch_1=round(two.peak_bytes / est.peak_bytes, 3),
            )
        del doc, result


if __name__ == "__main__":
    asked = tuple(a for a in sys.argv[1:] if a in CASES)
    bench_memory(names=asked or DEFAULT)
