"""The clean whole-model timer against torch.utils.benchmark's blocked_autorange, on the same
module, inputs and threads, in the same run: the medians should agree within 3 %."""

from __future__ import annotations

import importlib.util
import statistics
from collections.abc import Callable
from typing import Any

import torch
import torch.utils.benchmark as tb

from fxstudio.core.runtime.run import profile_whole
from fxstudio.core.session import OpenRequest, open_document

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
