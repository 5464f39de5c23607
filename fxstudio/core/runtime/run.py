"""The document's model on a device: its outputs checked first, then timed clean.

The document is never changed: on another device or dtype the model is a copy (the weights
copied there), and a failure -- a missing device, a wrong input, out of memory -- is a message
saying what to do.

Example:
    >>> from fxstudio.core.session import open_document
    >>> result = profile_whole(open_document("examples:simple"), min_time=0.05)
    >>> result.check.ok, result.timing.median_s > 0, result.items
    (True, True, 2)
"""

from __future__ import annotations

import copy
import resource
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._pytree import tree_leaves, tree_map

from fxstudio.core.capture import eval_mode
from fxstudio.core.document import GraphDocument
from fxstudio.core.errors import UserError
from fxstudio.core.export import largest_difference
from fxstudio.core.guard import allocation_failure, format_bytes, out_of_memory
from fxstudio.core.runtime.devices import resolve
from fxstudio.core.runtime.environment import environment
from fxstudio.core.runtime.timer import Timing, time_calls

DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float64": torch.float64,
}


class RunError(UserError):
    """The model could not run as asked.  Nothing was changed."""


@dataclass(frozen=True)
class OutputCheck:
    ok: bool
    nonfinite: int  # NaN or Inf values in the outputs
    max_abs_diff: float | None = None  # against CPU float32, when the device or dtype differs
    max_rel_diff: float | None = None
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "nonfinite": self.nonfinite,
            "max_abs_diff": self.max_abs_diff,
            "max_rel_diff": self.max_rel_diff,
            "text": self.text,
        }


@dataclass
class WholeModel:
    timing: Timing
    check: OutputCheck
    env: dict[str, Any]
    items: int  # the batch: items per call, for throughput
    peak_bytes: int | None = None  # CUDA: max allocated; CPU: peak RSS growth
    notes: list[str] = field(default_factory=list)

    @property
    def throughput(self) -> float:
        return self.items / self.timing.median_s if self.timing.median_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "whole": {**self.timing.to_json(), "throughput": self.throughput, "items": self.items},
            "check": self.check.to_json(),
            "peak_bytes": self.peak_bytes,
            "notes": list(self.notes),
        }

    def describe(self) -> str:
        t = self.timing
        line = (
            f"median {_ms(t.median_s)} (IQR {_ms(t.iqr_s)}, min {_ms(t.min_s)}; {t.runs} runs in "
            f"{len(t.times_s)} blocks of {t.block}) · {self.throughput:,.1f} items/s · "
            f"{self.env['device']} ({self.env.get('gpu') or self.env['cpu']}) · "
            f"{t.threads} thread{'s' if t.threads != 1 else ''} · {self.env['dtype']} · "
            f"torch {self.env['torch']}"
        )
        extra = [f"first call {_ms(t.first_call_s)} (not in the median)"]
        if self.peak_bytes:
            extra.append(f"peak memory {format_bytes(self.peak_bytes)}")
        if t.noisy:
            extra.append(f"NOISY: IQR is {t.spread:.0%} of the median -- the machine was busy")
        return "\n".join(
            [
                line,
                "  " + "; ".join(extra),
                *(f"  {n}" for n in self.notes),
                f"  outputs: {self.check.text}",
            ]
        )


def _ms(s: float) -> str:
    return f"{s * 1e3:.3f} ms" if s < 1 else f"{s:.3f} s"


def _to(value: Any, device: torch.device, dtype: torch.dtype | None) -> Any:
    def move(x: Any) -> Any:
        if not isinstance(x, torch.Tensor):
            return x
        if dtype is not None and x.is_floating_point():
            x = x.to(dtype)
        return x.to(device)

    return tree_map(move, value)


def _outputs(module: Any, inputs: tuple[Any, ...]) -> list[torch.Tensor]:
    with torch.no_grad():
        return [t for t in tree_leaves(module(*inputs)) if isinstance(t, torch.Tensor)]


def _check(got: list[torch.Tensor], reference: list[torch.Tensor] | None) -> OutputCheck:
    nonfinite = sum(int((~torch.isfinite(t)).sum()) for t in got if t.is_floating_point())
    if reference is None:
        ok = nonfinite == 0
        text = "finite" if ok else f"{nonfinite} NaN/Inf values"
        return OutputCheck(ok, nonfinite, text=text)
    worst_abs = worst_rel = 0.0
    for a, b in zip(got, reference, strict=False):
        if not b.is_floating_point():
            continue
        diff, relative = largest_difference(a, b)
        worst_abs = max(worst_abs, diff)
        worst_rel = max(worst_rel, relative)
    ok = nonfinite == 0
    text = (
        f"{'finite' if ok else f'{nonfinite} NaN/Inf values'}; against CPU float32: max abs "
        f"diff {worst_abs:.3g}, max rel diff {worst_rel:.3g}"
    )
    return OutputCheck(ok, nonfinite, worst_abs, worst_rel, text)


def profile_whole(
    doc: GraphDocument,
    device: str = "cpu",
    threads: int | None = None,
    dtype: str | None = None,
    min_time: float = 1.0,
) -> WholeModel:
    """Check the outputs, then time the whole forward pass (no profiler attached)."""
    target = resolve(device)
    if not doc.example_inputs:
        raise RunError("The model has no example inputs to run: open it with --input SHAPE.")
    cast = None
    if dtype is not None:
        if dtype not in DTYPES:
            raise RunError(f"'{dtype}' is not a dtype fxstudio runs: {', '.join(DTYPES)}.")
        cast = DTYPES[dtype]
    doc.ensure_compiled()
    gm = doc.graph_module
    notes = []
    same = target.type == "cpu" and cast in (None, torch.float32)
    try:
        with eval_mode(gm):
            reference = None if same else _outputs(gm, tuple(doc.example_inputs))
            module = gm if same else copy.deepcopy(gm).to(target)
            if cast is not None and not same:
                module = module.to(cast)
                notes.append(f"weights and float inputs cast to {dtype} (not autocast)")
            inputs = tuple(_to(tuple(doc.example_inputs), target, cast))
            if target.type == "cuda":
                torch.cuda.reset_peak_memory_stats(target)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            check = _check(_outputs(module, inputs), reference)

            with torch.no_grad():  # around the whole timing: not a context per call
                timing = time_calls(lambda: module(*inputs), target, min_time, threads)
            if target.type == "cuda":
                peak: int | None = torch.cuda.max_memory_allocated(target)
            else:
                peak = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) * 1024
    except UserError:
        raise
    except Exception as exc:
        oom, requested = allocation_failure(exc)
        if oom:
            raise out_of_memory(f"running the model on {target}", requested, None) from exc
        raise RunError(
            f"Running the model on {target} failed: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        if target.type == "cuda":
            torch.cuda.empty_cache()
    first = next((x for x in doc.example_inputs if isinstance(x, torch.Tensor)), None)
    items = int(first.shape[0]) if first is not None and first.dim() > 0 else 1
    env = environment(target, cast or torch.float32, timing.threads)
    return WholeModel(timing, check, env, items, peak, notes)
