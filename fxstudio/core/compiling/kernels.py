"""The document's graph compiled with ``torch.compile``, and each kernel the compiler made
timed and attributed to the FX nodes it was generated from.

Inductor records, for every kernel it generates (fused C++/Triton kernels and the calls of
library kernels it keeps, such as ``extern_kernels.convolution``), the post-grad nodes it
computes, and for those the pre-grad nodes -- which, when the graph handed to
``torch.compile`` is the document's ``GraphModule``, are the document's own nodes.  The
compiled model is then run under ``torch.profiler``: each kernel's events inside the compiled
graph's call are matched, in call order, to the kernels inductor recorded.

What a call costs falls into the kernels' times plus the part outside every kernel
(``unattributed_s``: Python wrapper, guards, buffer allocation) -- adding up to the profiled
call exactly, as the eager profile's nodes + gap do.  A kernel's time is its mean over the
middle half of the profiled calls (:func:`~fxstudio.core.runtime.breakdown.middle_calls`).

The speed-up of the compiled model over the eager graph comes from the clean timer, eager
and compiled interleaved (:func:`~fxstudio.core.runtime.timer.time_interleaved`), with the
bootstrap CI and test of :func:`~fxstudio.core.runtime.compare.speedup`.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import torch

from fxstudio.core import turns
from fxstudio.core.compiling.provenance import (
    Recorded,
    attribute,
    cache_said,
    copying_kernels,
    records,
    unnamed_calls,
)
from fxstudio.core.document import GraphDocument
from fxstudio.core.errors import UserError
from fxstudio.core.fxcompat import inductor_provenance, reset_dynamo
from fxstudio.core.runtime.breakdown import NodeProfile, middle_calls
from fxstudio.core.runtime.compare import ALPHA, Speedup, speedup, summed_calls
from fxstudio.core.runtime.run import default_calls, prepared, profile_nodes
from fxstudio.core.runtime.timer import Timing, sync_for, threads, time_interleaved

BACKENDS = ("inductor", "aot_eager", "eager")
MODES = ("default", "reduce-overhead", "max-autotune")
CALL = "fxstudio: compiled call"
REGION = "## Call CompiledFxGraph"  # inductor's profiler event around one compiled graph


class CompileError(UserError):
    """The compiler could not compile or run the graph (no C++ compiler, an unsupported op)."""


@dataclass(frozen=True)
class Kernel:
    name: str  # inductor's, with its call's number: "cpp_fused_relu_1:3"
    time_s: float  # mean over the middle calls, per call
    share: float  # of the profiled call
    nodes: tuple[str, ...]  # the document's nodes it was generated from, in graph order
    library: bool  # a library kernel inductor calls (convolution, addmm), not generated
    times_s: tuple[float, ...] = field(repr=False, default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "time_s": self.time_s,
            "share": self.share,
            "nodes": list(self.nodes),
            "library": self.library,
        }


@dataclass(frozen=True)
class ModuleSpeed:
    """One module, eager (its nodes' profiled times) vs compiled (the kernels made of its
    nodes alone), call by call; ``spanning``: kernels fusing its nodes with others' (their
    time is in no single module)."""

    path: str
    type_name: str
    eager_s: float
    compiled_s: float
    speed: Speedup | None  # None: no kernel of its own (all its nodes fused beyond it)
    kernels: int
    spanning: int

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "type": self.type_name,
            "eager_s": self.eager_s,
            "compiled_s": self.compiled_s,
            "speedup": self.speed.to_json() if self.speed else None,
            "kernels": self.kernels,
            "spanning": self.spanning,
        }


@dataclass
class Compiled:
    backend: str
    mode: str
    device: str
    compile_s: float  # the first call, compiling (with the caches as they were)
    cache: str  # what the FX graph cache said then: hit / miss / bypass / unknown
    warm_compile_s: float  # compiling again, Dynamo reset (inductor's caches warm)
    eager: Timing
    compiled: Timing
    speed: Speedup
    kernels: list[Kernel]
    profiled_s: float  # one profiled call (the kernels' and unattributed times add up to it)
    unattributed_s: float
    no_kernel: list[str]  # computing nodes no kernel came from (views, folded, dropped)
    graphs: int  # graphs Dynamo compiled
    modules: list[ModuleSpeed] = field(default_factory=list)  # the tree, parents first
    env: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    freezing: bool = False  # inductor folded the weights as constants

    @property
    def attributed(self) -> float:
        """The share of kernels attributed to at least one of the document's nodes."""
        return sum(1 for k in self.kernels if k.nodes) / len(self.kernels) if self.kernels else 0

    @property
    def kernel_share(self) -> float:
        """The share of the profiled call spent inside kernels."""
        return sum(k.share for k in self.kernels)

    def kernels_of(self, node: str) -> list[Kernel]:
        return [k for k in self.kernels if node in k.nodes]

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "mode": self.mode,
            "freezing": self.freezing,
            "device": self.device,
            "compiled_graphs": self.graphs,
            "compile_s": self.compile_s,
            "cache": self.cache,
            "warm_compile_s": self.warm_compile_s,
            "eager": self.eager.to_json(),
            "compiled": self.compiled.to_json(),
            "speedup": self.speed.to_json(),
            "profiled_s": self.profiled_s,
            "kernels": [k.to_json() for k in self.kernels],
            "kernel_share": self.kernel_share,
            "attributed": self.attributed,
            "unattributed_s": self.unattributed_s,
            "no_kernel": self.no_kernel,
            "modules": [m.to_json() for m in self.modules],
            "environment": self.env,
            "notes": self.notes,
        }

    def describe(self, top: int = 10) -> str:
        s = self.speed
        lines = [
            f"torch.compile(backend={self.backend!r}, mode={self.mode!r}"
            f"{', freezing' if self.freezing else ''}) on {self.device}: "
            f"{self.graphs} graph{'s' if self.graphs != 1 else ''}, compiled in "
            f"{self.compile_s:.2f} s (FX graph cache: {self.cache}; again with warm caches: "
            f"{self.warm_compile_s:.2f} s)",
            f"eager {s.before_s * 1e3:.3f} ms, compiled {s.after_s * 1e3:.3f} ms: {s.describe()}",
        ]
        if self.kernels:
            lines.append(
                f"{len(self.kernels)} kernels, {self.kernel_share:.0%} of a profiled call "
                f"({self.profiled_s * 1e3:.3f} ms); {self.attributed:.0%} attributed to FX "
                f"nodes; outside kernels {self.unattributed_s * 1e3:.3f} ms"
            )
            for k in sorted(self.kernels, key=lambda k: -k.time_s)[:top]:
                nodes = ", ".join(k.nodes[:6]) + (" …" if len(k.nodes) > 6 else "")
                lines.append(
                    f"  {k.time_s * 1e3:9.3f} ms {k.share:6.1%}  {k.name}  <- {nodes or '?'}"
                )
            tops = [m for m in self.modules if "." not in m.path and m.speed is not None]
            if tops:
                lines.append(
                    "per module (profiled on both sides; kernels fusing across "
                    "modules are in none):"
                )
                for m in tops[:top]:
                    span = f", {m.spanning} kernels spanning" if m.spanning else ""
                    lines.append(
                        f"  {m.path} ({m.type_name}): {m.eager_s * 1e3:.3f} → "
                        f"{m.compiled_s * 1e3:.3f} ms, {m.speed.verdict}{span}"  # type: ignore[union-attr]
                    )
            if self.no_kernel:
                lines.append(
                    f"no kernel of their own ({len(self.no_kernel)}): "
                    + ", ".join(self.no_kernel[:12])
                    + (" …" if len(self.no_kernel) > 12 else "")
                )
        lines += self.notes
        return "\n".join(lines)


def _event_s(event: Any, cuda: bool) -> float:
    us = event.device_time_total if cuda and event.device_time_total > 0 else event.cpu_time_total
    return float(us) * 1e-6


def _profile(
    run: Any, inputs: tuple[Any, ...], device: torch.device, calls: int
) -> tuple[list[float], list[list[list[tuple[str, float]]]]]:
    """``calls`` profiled calls: each one's whole and, per compiled graph it ran, the events
    directly inside that graph's call (name, seconds)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    cuda = device.type == "cuda"
    sync = sync_for(device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        for _ in range(calls):
            with record_function(CALL):
                run(*inputs)
                sync()
    wholes, regions = [], []
    for call in (e for e in prof.events() if e.name == CALL):
        wholes.append(float(call.cpu_time_total) * 1e-6)
        graphs: list[list[tuple[str, float]]] = []
        stack = list(reversed(call.cpu_children))
        while stack:  # depth first, in call order
            e = stack.pop()
            if e.name.startswith(REGION):
                graphs.append([(c.name, _event_s(c, cuda)) for c in e.cpu_children])
            else:
                stack.extend(reversed(e.cpu_children))
        regions.append(graphs)
    return wholes, regions


def _check(node: torch.fx.Node) -> bool:
    """A node that checks and computes nothing (export's guards and metadata assertions):
    compiled away, it is not listed as a node without a kernel.

    >>> def f(x):
    ...     torch._assert(x.dim() == 2, "a matrix")
    ...     return x + 1
    >>> [n.name for n in torch.fx.symbolic_trace(f).graph.nodes if _check(n)]
    ['_assert']
    """
    name = str(getattr(node.target, "__name__", node.target))
    return name == "_guards_fn" or name.startswith("_assert")  # torch._assert, aten._assert_*


def compile_graph(
    doc: GraphDocument,
    device: str = "cpu",
    backend: str = "inductor",
    mode: str = "default",
    n_threads: int | None = None,
    min_time: float = 1.0,
    calls: int | None = None,
    dtype: str | None = None,
    per_module: bool = True,
    freezing: bool = False,
) -> Compiled:
    """Compile the document's graph, time it against the eager graph and attribute the
    compiled run's kernels to the document's nodes (module doc); with ``per_module``, the
    eager graph is profiled node by node too and each module compared (both sides under the
    profiler, so the ratio is fair, not the absolute times).  ``freezing``: inductor folds
    the weights as constants (:func:`~fxstudio.core.fxcompat.inductor_provenance`).  Raises
    :class:`CompileError` when the compiler fails, with what to do."""
    if backend not in BACKENDS:
        raise CompileError(f"Unknown backend '{backend}': use one of {', '.join(BACKENDS)}.")
    if mode not in MODES:
        raise CompileError(f"Unknown mode '{mode}': use one of {', '.join(MODES)}.")
    if mode != "default" and backend != "inductor":
        raise CompileError(f"--mode {mode} is inductor's; backend {backend} has none.")
    if freezing and backend != "inductor":
        raise CompileError(f"Freezing is inductor's; backend {backend} has none.")
    # The turn is held to the end, not for the compiles alone: a compiled model may compile
    # again on a later call, and compiling traces (make_fx patches nn.Module.__call__ for
    # the whole process) -- never beside another thread's capture.
    with (
        turns.one_turn(),
        prepared(doc, device, dtype) as p,
        torch.no_grad(),
        threads(n_threads) as used,
    ):
        sync = sync_for(p.target)
        with inductor_provenance(freezing) as payloads:
            run, compile_s = _compile(p.module, p.inputs, backend, mode, sync)
            cache = cache_said(payloads)
            payloads.clear()  # the run profiled is the warm compile's
            run, warm_s = _compile(p.module, p.inputs, backend, mode, sync)
        recorded = records(payloads)
        eager, compiled = time_interleaved(
            (lambda: p.module(*p.inputs), lambda: run(*p.inputs)), p.target, min_time, used
        )
        n = calls or default_calls(compiled.median_s)
        wholes, regions = _profile(run, p.inputs, p.target, n)
        eager_nodes = (
            profile_nodes([p], used, [eager.median_s], n)[0] if per_module and recorded else None
        )
        env = p.stamp(used)
        notes = list(p.notes)
        reset_dynamo()
    if eager.noisy or compiled.noisy:
        notes.append("The machine was busy while timing (spread over 10 %): run again.")
    kernels, profiled_s = _kernels(doc, recorded, wholes, regions)
    modules = _modules(eager_nodes, kernels) if eager_nodes is not None else []
    computing = [n.name for n in doc.graph.nodes if n.op.startswith("call_") and not _check(n)]
    covered = {name for k in kernels for name in k.nodes}
    if backend != "inductor":
        notes.append(f"Backend {backend} generates no kernels: only inductor's are attributed.")
    elif not freezing and (copies := copying_kernels(recorded)):
        notes.append(
            f"{copies} generated kernel{'s also compute' if copies != 1 else ' also computes'}"
            " part of a library convolution's or matmul's node (listed with it): its weight "
            "or input copied to the layout the library takes, on every call. Freezing the "
            "weights (--freezing; Freeze weights in the window) copies them once, at compile "
            "time."
        )
    if freezing and unnamed_calls(recorded):
        notes.append(
            "With frozen weights inductor's fusion passes (on the CPU: a convolution with "
            "its relu or add, one library call) record one FX node per fused call, at times "
            "another layer's: the nodes of a kernel are partial here. Compile without "
            "freezing to see where each kernel came from."
        )
    if mode == "reduce-overhead" and p.target.type == "cuda":
        notes.append(
            "reduce-overhead replays CUDA graphs: their kernels are not seen one by one, so "
            "most of a call is outside any kernel here; mode default shows them."
        )
    return Compiled(
        backend,
        mode,
        str(p.target),
        compile_s,
        cache,
        warm_s,
        eager,
        compiled,
        speedup(list(eager.times_s), list(compiled.times_s)),
        kernels,
        profiled_s,
        profiled_s - sum(k.time_s for k in kernels),
        [name for name in computing if name not in covered] if kernels else [],
        len(regions[0]) if regions else 0,
        modules,
        env,
        notes,
        freezing,
    )


def _compile(
    module: Any, inputs: tuple[Any, ...], backend: str, mode: str, sync: Any
) -> tuple[Any, float]:
    reset_dynamo()
    t0 = time.perf_counter()
    try:
        run = torch.compile(module, backend=backend, mode=None if mode == "default" else mode)
        run(*inputs)
        sync()
    except Exception as exc:
        raise CompileError(_failure(exc, backend)) from exc
    return run, time.perf_counter() - t0


def _failure(exc: Exception, backend: str) -> str:
    text = str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    if any(w in text for w in ("CppCompileError", "InvalidCxxCompiler", "g++", "gcc", "c++")):
        return (
            f"torch.compile({backend}) could not build its C++ kernels: {first[:300]}. Inductor "
            "needs a C++ compiler on CPU: install one (Debian: apt install build-essential, "
            "which `make setup` does), or pick the aot_eager backend."
        )
    return (
        f"torch.compile({backend}) failed: {type(exc).__name__}: {first[:300]}. Try the "
        "aot_eager backend to see whether the graph or the compiler is at fault."
    )


def _kernels(
    doc: GraphDocument,
    recorded: list[Recorded],
    wholes: list[float],
    regions: list[list[list[tuple[str, float]]]],
) -> tuple[list[Kernel], float]:
    order = {n.name: i for i, n in enumerate(doc.graph.nodes)}
    keep = middle_calls(wholes)
    per: dict[str, list[float]] = defaultdict(list)
    info: dict[str, tuple[tuple[str, ...], bool]] = {}
    for i in keep:
        for key, pre, seconds, library in attribute(recorded, regions[i]):
            per[key].append(seconds)
            if key not in info:
                nodes = tuple(sorted((n for n in pre if n in order), key=order.__getitem__))
                info[key] = (nodes, library)
    profiled = statistics.fmean(wholes[i] for i in keep) if keep else 0.0
    out = []
    for key, times in per.items():
        mean = sum(times) / len(keep)  # a kernel missing from a call took nothing there
        nodes, library = info[key]
        share = mean / profiled if profiled > 0 else 0.0
        out.append(Kernel(key, mean, share, nodes, library, tuple(times)))
    return out, profiled


def _modules(eager: NodeProfile, kernels: list[Kernel]) -> list[ModuleSpeed]:
    rows = [m for m in eager.modules if m.path and m.names]
    out = []
    for m in rows:
        inside = set(m.names)
        own = [k for k in kernels if k.nodes and set(k.nodes) <= inside]
        spanning = sum(1 for k in kernels if inside & set(k.nodes) and not set(k.nodes) <= inside)
        before = summed_calls(eager, m.names)
        calls = len(own[0].times_s) if own else 0
        after = [sum(k.times_s[i] for k in own if i < len(k.times_s)) for i in range(calls)]
        speed = speedup(before, after, alpha=ALPHA / len(rows)) if before and after else None
        compiled_s = statistics.fmean(after) if after else 0.0
        out.append(
            ModuleSpeed(m.path, m.type_name, m.time_s, compiled_s, speed, len(own), spanning)
        )
    return out
