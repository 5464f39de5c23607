"""The document's model on a device: its outputs checked first, then timed clean.

The document is never changed: on another device or dtype the model is a copy (the weights
copied there), and a failure -- a missing device, a wrong input, out of memory -- is a message
saying what to do.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> result = profile_whole(open_document("examples:simple"), min_time=0.05)
    >>> result.check.ok, result.timing.median_s > 0, result.items
    (True, True, 2)

With ``per_node=True`` a second, profiled run follows the clean one (never mixed into the
headline): see :mod:`fxstudio.core.runtime.nodes` and :mod:`fxstudio.core.runtime.breakdown`.
"""

from __future__ import annotations

import contextlib
import copy
import resource
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from fxstudio.core.errors import UserError
from fxstudio.core.fxcompat import tree_leaves, tree_map
from fxstudio.core.fxcompat.compiler import compiled_graph_count, reset_dynamo
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.modes import eval_mode
from fxstudio.core.process import modelcode
from fxstudio.core.process.guard import allocation_failure, format_bytes, out_of_memory
from fxstudio.core.results import Json
from fxstudio.core.runtime.breakdown import NodeProfile, breakdown
from fxstudio.core.runtime.devices import resolve
from fxstudio.core.runtime.environment import environment
from fxstudio.core.runtime.flops import node_work
from fxstudio.core.runtime.nodes import profile_interleaved
from fxstudio.core.runtime.roofline import peaks_for
from fxstudio.core.runtime.timer import Timing, sync_for, time_calls, time_cold_calls
from fxstudio.core.runtime.timer import threads as using_threads
from fxstudio.core.saving.verify import largest_difference

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

    def to_json(self) -> Json:
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
    nodes: NodeProfile | None = None  # the separate profiled run, when asked for
    l2: str = "warm"  # CUDA: "cold" when the L2 was flushed before every call
    compiled: str | None = None  # the torch.compile backend, when compiled
    compile_s: float | None = None  # the first (compiling) call, apart
    recompiles: int = 0  # compilations inside the timed loop: the run is then invalid

    @property
    def valid(self) -> bool:
        return self.recompiles == 0

    @property
    def throughput(self) -> float:
        return self.items / self.timing.median_s if self.timing.median_s > 0 else 0.0

    def to_json(self) -> Json:
        return {
            "env": self.env,
            "whole": {
                **self.timing.to_json(),
                "times_s": list(self.timing.times_s),
                "throughput": self.throughput,
                "items": self.items,
                "l2": self.l2,
                "compiled": self.compiled,
                "compile_s": self.compile_s,
                "recompiles": self.recompiles,
                "valid": self.valid,
            },
            "check": self.check.to_json(),
            "peak_bytes": self.peak_bytes,
            "notes": list(self.notes),
            **(self.nodes.to_json() if self.nodes is not None else {}),
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
        if self.compiled:
            extra.append(
                f"torch.compile({self.compiled}): compile + first call {_ms(self.compile_s or 0)}"
            )
        if self.l2 == "cold":
            extra.append("cold L2 (flushed before every call, outside the timed span)")
        if not self.valid:
            extra.append(f"INVALID: {self.recompiles} recompile(s) inside the timed loop")
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
                *([self.nodes.describe()] if self.nodes is not None else []),
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


def outputs_of(module: Any, inputs: tuple[Any, ...]) -> list[torch.Tensor]:
    with torch.no_grad():
        return [t for t in tree_leaves(module(*inputs)) if isinstance(t, torch.Tensor)]


def check_outputs(
    got: list[torch.Tensor],
    reference: list[torch.Tensor] | None,
    against: str = "CPU float32",
) -> OutputCheck:
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
        f"{'finite' if ok else f'{nonfinite} NaN/Inf values'}; against {against}: max abs "
        f"diff {worst_abs:.3g}, max rel diff {worst_rel:.3g}"
    )
    return OutputCheck(ok, nonfinite, worst_abs, worst_rel, text)


@dataclass
class Prepared:
    """A document's model ready to run as asked: on the device, in the dtype, in eval mode."""

    module: Any
    inputs: tuple[Any, ...]
    target: torch.device
    cast: torch.dtype | None
    reference: list[torch.Tensor] | None  # CPU float32 outputs, when device or dtype differ
    notes: list[str]
    tree: Any  # the document's module tree, for roll-ups
    items: int
    autocast: torch.dtype | None = None  # ops under torch.autocast to this dtype

    @property
    def dtype(self) -> torch.dtype:
        """What the math runs in (for peaks and the stamp)."""
        return self.autocast or self.cast or torch.float32

    def stamp(self, threads: int) -> dict[str, Any]:
        env = environment(self.target, self.dtype, threads)
        if self.autocast is not None:
            env["dtype"] = f"autocast {env['dtype']} (weights float32)"
        return env


AUTOCAST = "autocast:"  # a dtype spelled "autocast:bfloat16": weights stay, ops autocast


def _dtype(name: str | None) -> torch.dtype | None:
    if name is None:
        return None
    if name.removeprefix(AUTOCAST) not in DTYPES:
        raise RunError(
            f"'{name}' is not a dtype fxstudio runs: {', '.join(DTYPES)} (cast), or "
            f"autocast:float16 / autocast:bfloat16."
        )
    return DTYPES[name.removeprefix(AUTOCAST)]


def batched(inputs: tuple[Any, ...], batch: int) -> tuple[Any, ...]:
    """The example inputs with ``batch`` items: every tensor's first dimension, its rows
    repeated in turn (the same values, so checks stay meaningful)."""
    if batch < 1:
        raise RunError(f"A batch of {batch} cannot run: give 1 or more.")

    def grow(x: Any) -> Any:
        if not isinstance(x, torch.Tensor) or x.dim() == 0 or x.shape[0] == 0:
            return x
        reps = -(-batch // x.shape[0])
        return torch.cat([x] * reps)[:batch].clone()

    return tuple(tree_map(grow, tuple(inputs)))


@contextlib.contextmanager
def prepared(
    doc: GraphDocument, device: str, dtype: str | None, batch: int | None = None
) -> Iterator[Prepared]:
    """The model prepared for a run, the model-code turn held
    (:mod:`fxstudio.core.process.modelcode`);
    a failure inside becomes a :class:`RunError` (or the out-of-memory message) and device
    memory is given back at the end.

    ``dtype``: ``None`` (as captured), a name of :data:`DTYPES` (weights and float inputs
    cast), or ``autocast:NAME`` (weights kept, ops under ``torch.autocast`` -- the calls made
    inside this context).  ``batch``: the example inputs grown or cut to that many items."""
    target = resolve(device)
    if not doc.example_inputs:
        raise RunError("The model has no example inputs to run: open it with --input SHAPE.")
    autocast = _dtype(dtype) if dtype and dtype.startswith(AUTOCAST) else None
    cast = None if autocast is not None else _dtype(dtype)
    doc.ensure_compiled()
    gm = doc.graph_module
    example = tuple(doc.example_inputs)
    if batch is not None:
        example = batched(example, batch)
    same = target.type == "cpu" and cast in (None, torch.float32) and autocast is None
    first = next((x for x in example if isinstance(x, torch.Tensor)), None)
    items = int(first.shape[0]) if first is not None and first.dim() > 0 else 1
    try:
        # the model's code runs in one thread at a time: a trace elsewhere (a pattern's
        # preview, an open) patches nn.Module.__call__ for the whole process (modelcode)
        with modelcode.one_turn(), eval_mode(gm):
            with torch.autocast("cpu", enabled=False):  # the reference: plain float32
                reference = None if same else outputs_of(gm, example)
            module = gm if same else copy.deepcopy(gm).to(target)
            notes = []
            if batch is not None:
                notes.append(f"batch {items} (the example inputs' rows repeated)")
            if cast is not None and not same:
                module = module.to(cast)
                notes.append(f"weights and float inputs cast to {dtype} (not autocast)")
            if autocast is not None:
                notes.append(
                    f"torch.autocast to {str(autocast).removeprefix('torch.')} (weights stay "
                    "float32)"
                )
            inputs = tuple(_to(example, target, cast))
            region = (
                torch.autocast(target.type, dtype=autocast)
                if autocast is not None
                else contextlib.nullcontext()
            )
            with region:
                yield Prepared(
                    module,
                    inputs,
                    target,
                    cast,
                    reference,
                    notes,
                    doc.module_tree(),
                    items,
                    autocast,
                )
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


def default_calls(clean_s: float) -> int:
    """Profiled calls: about half a second of them, 9 to 50."""
    return max(9, min(50, int(0.5 / max(clean_s, 1e-6))))


def profile_nodes(
    ps: list[Prepared], threads: int | None, clean_s: list[float], calls: int
) -> list[NodeProfile]:
    """The separate profiled run of prepared models (see :mod:`.nodes`): several are profiled
    interleaved, call by call, on the first one's inputs."""
    first = ps[0]
    with using_threads(threads) as used:
        work = [node_work(p.module, first.inputs) for p in ps]
        labels = ["before:", ""] if len(ps) == 2 else None  # a comparison's trace
        raws = profile_interleaved(
            [p.module for p in ps], first.inputs, first.target, calls, labels
        )
        peaks = peaks_for(first.target, first.dtype, used)
    return [
        breakdown(p.module.graph, raw, w, p.tree, peaks, clean)
        for p, raw, w, clean in zip(ps, raws, work, clean_s, strict=True)
    ]


def profile_whole(
    doc: GraphDocument,
    device: str = "cpu",
    threads: int | None = None,
    dtype: str | None = None,
    min_time: float = 1.0,
    per_node: bool = False,
    repeats: int | None = None,
    compile: str | None = None,
    cold_l2: bool = False,
    batch: int | None = None,
    stage: Callable[[str], None] | None = None,
) -> WholeModel:
    """Check the outputs, time the whole forward pass (no profiler attached), then -- with
    ``per_node`` -- profile ``repeats`` more calls node by node (default: :func:`default_calls`).

    ``compile``: a ``torch.compile`` backend; the compiling first call is timed apart and a
    recompilation inside the timed loop marks the run invalid.  ``cold_l2`` (CUDA): flush the
    L2 before every call, outside the timed span.  ``stage(text)`` is told what runs now
    (for a progress line)."""
    if compile and per_node:
        raise RunError(
            "Per-node times are of the graph as it is; torch.compile fuses its nodes into "
            "kernels that belong to no single node. Profile per node without --compile."
        )
    if cold_l2 and resolve(device).type != "cuda":
        raise RunError("A cold L2 is a CUDA mode (the CPU's caches cannot be flushed apart).")
    # The model-code turn (modelcode) for the whole run: a capture or a pattern traced in
    # another thread meanwhile patches nn.Module.__call__ for the whole process, and the
    # model's calls would go through that tracer ("module is not installed as a submodule":
    # the Run dock's compare beside the Patterns dock's previews); a compiled model also
    # traces, on its first call and on a recompile
    with modelcode.one_turn(), prepared(doc, device, dtype, batch) as p:
        target = p.target
        if target.type == "cuda":
            torch.cuda.reset_peak_memory_stats(target)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        say = stage or (lambda _text: None)
        say("checking the outputs…")
        check = check_outputs(outputs_of(p.module, p.inputs), p.reference)
        run = p.module
        compile_s = None
        recompiles = 0
        with torch.no_grad():  # around the whole timing: not a context per call
            if compile:
                say(f"compiling with torch.compile({compile})…")
                eager = outputs_of(p.module, p.inputs)
                run, compile_s = _compiled(p, compile, threads)
                got = check_outputs(outputs_of(run, p.inputs), eager, "eager")
                p.notes.append(f"compiled: {got.text}")
                if not got.ok:
                    check = got
            before = compiled_graph_count()
            say(f"timing for at least {min_time:g} s…")
            if cold_l2:
                with using_threads(threads):
                    timing = time_cold_calls(lambda: run(*p.inputs), target, min_time)
            else:
                timing = time_calls(lambda: run(*p.inputs), target, min_time, threads)
            recompiles = compiled_graph_count() - before
        if target.type == "cuda":
            peak: int | None = torch.cuda.max_memory_allocated(target)
        else:
            peak = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss) * 1024
        profile = None
        if per_node:
            calls = repeats or default_calls(timing.median_s)
            say(f"profiling node by node ({calls} calls)…")
            profile = profile_nodes([p], threads, [timing.median_s], calls)[0]
        env = p.stamp(timing.threads)
        return WholeModel(
            timing,
            check,
            env,
            p.items,
            peak,
            p.notes,
            profile,
            "cold" if cold_l2 else "warm",
            compile,
            compile_s,
            recompiles,
        )


def _compiled(p: Prepared, backend: str, threads: int | None) -> tuple[Any, float]:
    """``torch.compile`` the prepared model; the compiling first call, timed."""
    import time

    sync = sync_for(p.target)
    reset_dynamo()
    try:
        run = torch.compile(p.module, backend=backend)
    except Exception as exc:  # an unknown backend is refused here
        raise RunError(f"torch.compile(backend={backend!r}) is not available: {exc}") from exc
    with using_threads(threads):
        t0 = time.perf_counter()
        run(*p.inputs)
        sync()
    return run, time.perf_counter() - t0
