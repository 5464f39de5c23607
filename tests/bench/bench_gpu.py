"""The one short script to run whenever a CUDA machine is at hand (``make bench-gpu``):
the CUDA tests, then on torchvision's resnet18 at batch 1 and 32 the headline against
``blocked_autorange`` (and ``triton.testing.do_bench`` where triton is installed), warm and
cold L2, and the per-node run's overhead, attribution and sum of parts.  One JSON line per
figure; nothing asserted about speed.  Exits 0 with a line saying so when there is no GPU.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from typing import Any


def emit(**fields: Any) -> None:
    print(json.dumps(fields, default=str), flush=True)


def main() -> int:
    import torch

    if not torch.cuda.is_available():
        emit(skipped="no CUDA device on this machine")
        return 0
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-k", "cuda", "tests/core"],
        capture_output=True,
        text=True,
    )
    emit(bench="cuda tests", rc=tests.returncode, tail=tests.stdout.strip().splitlines()[-1:])
    import torch.utils.benchmark as tb

    from fxstudio.core.graph.request import OpenRequest
    from fxstudio.core.runtime.ondevice import prepared, profile_whole
    from fxstudio.core.sessions.documents import open_document

    for batch in (1, 32):
        doc = open_document(
            OpenRequest("torchvision.models:resnet18", inputs=(f"{batch}x3x224x224",))
        )
        ours, theirs, bench = [], [], []
        with prepared(doc, "cuda", None) as p:
            gm, x = p.module, p.inputs
            for _ in range(5):
                ours.append(profile_whole(doc, "cuda", None, None, 1.0).timing.median_s)
                with torch.no_grad():
                    t: Any = tb.Timer("gm(*x)", globals={"gm": gm, "x": x})
                    theirs.append(t.blocked_autorange(min_run_time=1).median)
                try:
                    from triton.testing import do_bench

                    with torch.no_grad():
                        bench.append(
                            do_bench(lambda gm=gm, x=x: gm(*x), return_mode="median") * 1e-3
                        )
                except ImportError:
                    pass
        a = statistics.median(ours)
        emit(
            bench="gpu agreement",
            batch=batch,
            fxstudio_median_s=a,
            ratio_blocked_autorange=a / statistics.median(theirs),
            ratio_do_bench_cold_l2=(a / statistics.median(bench)) if bench else None,
        )
        cold = profile_whole(doc, "cuda", None, None, 1.0, cold_l2=True)
        emit(bench="gpu cold L2", batch=batch, median_s=cold.timing.median_s, warm_s=a)
        r = profile_whole(doc, "cuda", None, None, 1.0, per_node=True)
        n = r.nodes
        assert n is not None
        emit(
            bench="gpu per-node",
            batch=batch,
            profiled_over_clean=n.profiled_over_clean,
            overhead=n.overhead,
            attributed=n.attributed,
            parts_over_whole=n.parts_s / n.whole_s,
            gap_share=n.gap_s / n.whole_s,
            invalid=[x.name for x in n.nodes if x.bound == "invalid"],
            peak_bytes=r.peak_bytes,
            env=r.env,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
