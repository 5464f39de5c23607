"""Compile a module with ``torch.compile``, time it against eager and profile its kernels --
the part shared by a document's graph (:mod:`.kernels`) and an eager model with graph breaks
(:mod:`.model`).

The module is compiled twice, Dynamo reset in between: the first compile is timed with the
caches as they were, the second (warm caches) is the one run and profiled.  Inductor's
provenance records (:mod:`.provenance`) are the first compile's -- the same code -- unless a
cache answered it: a cached graph's records may name another graph's nodes, so then the
module is compiled once more without inductor's caches, and that compile is run and
profiled.  Eager and compiled are timed interleaved
by the clean timer (:func:`~fxstudio.core.runtime.timer.time_interleaved`), then ``calls``
compiled calls run under ``torch.profiler``: each one's whole, and per compiled graph it ran
the events directly inside that graph's call.  What the model prints meanwhile is dropped
(:mod:`.quiet`).
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from fxstudio.core.compiling.origins import (
    Recorded,
    attribute,
    cache_said,
    compiled_fresh,
    copying_kernels,
    records,
    unnamed_calls,
)
from fxstudio.core.compiling.quiet import muted_stdout, printed_note
from fxstudio.core.compiling.result import Compiled, Kernel, Lines
from fxstudio.core.errors import UserError
from fxstudio.core.fxcompat.compiler import inductor_provenance, reset_dynamo
from fxstudio.core.runtime.breakdown import middle_calls
from fxstudio.core.runtime.ondevice import default_calls
from fxstudio.core.runtime.speedup import speedup
from fxstudio.core.runtime.timer import Timing, sync_for, time_interleaved

BACKENDS = ("inductor", "aot_eager", "eager")
MODES = ("default", "reduce-overhead", "max-autotune")
CALL = "fxstudio: compiled call"
REGION = "## Call CompiledFxGraph"  # inductor's profiler event around one compiled graph

#: A profiled call: per compiled graph it ran, the events directly inside it (name, seconds).
Regions = list[list[tuple[str, float]]]


class CompileError(UserError):
    """The compiler could not compile or run the graph (no C++ compiler, an unsupported op)."""


def check_choices(backend: str, mode: str, freezing: bool) -> None:
    """Refuse what torch.compile would not do, before anything runs."""
    if backend not in BACKENDS:
        raise CompileError(f"Unknown backend '{backend}': use one of {', '.join(BACKENDS)}.")
    if mode not in MODES:
        raise CompileError(f"Unknown mode '{mode}': use one of {', '.join(MODES)}.")
    if mode != "default" and backend != "inductor":
        raise CompileError(f"--mode {mode} is inductor's; backend {backend} has none.")
    if freezing and backend != "inductor":
        raise CompileError(f"Freezing is inductor's; backend {backend} has none.")


@dataclass
class Measured:
    """A module compiled, timed against eager and profiled (see the module doc)."""

    compile_s: float
    cache: str
    warm_s: float
    recorded: list[Recorded]
    eager: Timing
    compiled: Timing
    wholes: list[float]  # each profiled call, whole
    regions: list[Regions]  # each profiled call's compiled graphs
    printed: int  # lines the model printed (dropped)


def measure(
    module: Any,
    inputs: tuple[Any, ...],
    target: torch.device,
    backend: str,
    mode: str,
    freezing: bool,
    used: int,
    min_time: float,
    calls: int | None,
) -> Measured:
    """Compile ``module`` (cold, then warm), time it against eager, profile it.  The caller
    holds the model-code turn, ``torch.no_grad`` and the threads (``used``)."""
    sync = sync_for(target)
    with muted_stdout() as sink:
        with inductor_provenance(freezing) as payloads:
            run, compile_s = _compile(module, inputs, backend, mode, sync)
            cache = cache_said(payloads)
            recorded = records(payloads)
            fresh = compiled_fresh(payloads, len(recorded))
            payloads.clear()
            # the run profiled: the same code, answered by the cache the first compile filled
            run, warm_s = _compile(module, inputs, backend, mode, sync)
        if not fresh:  # the first compile's records were a cache's: maybe of other names
            with inductor_provenance(freezing, cached=False) as payloads:
                run, _ = _compile(module, inputs, backend, mode, sync)
            recorded = records(payloads)
        eager, compiled = time_interleaved(
            (lambda: module(*inputs), lambda: run(*inputs)), target, min_time, used
        )
        wholes, regions = _profile(run, inputs, target, calls or default_calls(compiled.median_s))
    return Measured(
        compile_s, cache, warm_s, recorded, eager, compiled, wholes, regions, sink.lines
    )


def notes_on(
    m: Measured, backend: str, mode: str, freezing: bool, target: torch.device
) -> list[str]:
    """What the user should know about a measured compile (busy machine, no kernels,
    weights copied every call, partial node lists, CUDA graphs, a printing forward)."""
    notes = []
    if m.eager.noisy or m.compiled.noisy:
        notes.append("The machine was busy while timing (spread over 10 %): run again.")
    if backend != "inductor":
        notes.append(f"Backend {backend} generates no kernels: only inductor's are attributed.")
    elif not freezing and (copies := copying_kernels(m.recorded)):
        notes.append(
            f"{copies} generated kernel{'s also compute' if copies != 1 else ' also computes'}"
            " part of a library convolution's or matmul's node (listed with it): its weight "
            "or input copied to the layout the library takes, on every call. Freezing the "
            "weights (--freezing; Freeze weights in the window) copies them once, at compile "
            "time."
        )
    if freezing and unnamed_calls(m.recorded):
        notes.append(
            "With frozen weights inductor's fusion passes (on the CPU: a convolution with "
            "its relu or add, one library call) record one FX node per fused call, at times "
            "another layer's: the nodes of a kernel are partial here. Compile without "
            "freezing to see where each kernel came from."
        )
    if mode == "reduce-overhead" and target.type == "cuda":
        notes.append(
            "reduce-overhead replays CUDA graphs: their kernels are not seen one by one, so "
            "most of a call is outside any kernel here; mode default shows them."
        )
    return notes + printed_note(m.printed)


#: Where a kernel came from, given its graph's index and its pre-grad node names:
#: (the document's nodes, the user's lines, Dynamo's ops).
Place = Callable[[int, set[str]], tuple[tuple[str, ...], Lines, tuple[str, ...]]]


def timed_kernels(m: Measured, place: Place) -> tuple[list[Kernel], float]:
    """The kernels of the profiled calls, each with its mean time over the middle calls and
    where it came from (``place``); and the mean profiled call."""
    keep = middle_calls(m.wholes)
    per: dict[str, list[float]] = defaultdict(list)
    info: dict[str, tuple[tuple[str, ...], Lines, tuple[str, ...], bool, int]] = {}
    for i in keep:
        for key, pre, seconds, library, graph in attribute(m.recorded, m.regions[i]):
            per[key].append(seconds)
            if key not in info:
                info[key] = (*place(graph, pre), library, graph)
    profiled = statistics.fmean(m.wholes[i] for i in keep) if keep else 0.0
    out = []
    for key, times in per.items():
        mean = sum(times) / len(keep)  # a kernel missing from a call took nothing there
        nodes, lines, ops, library, graph = info[key]
        share = mean / profiled if profiled > 0 else 0.0
        out.append(Kernel(key, mean, share, nodes, library, tuple(times), graph, lines, ops))
    return out, profiled


def compiled_of(
    m: Measured,
    kernels: list[Kernel],
    profiled_s: float,
    backend: str,
    mode: str,
    device: str,
    no_kernel: list[str],
    **rest: Any,
) -> Compiled:
    """The result of measurement ``m`` and its timed kernels: the fields every compile
    shares (times, speed-up, what the kernels leave unattributed); ``rest``: the fields of
    the one source (modules, env, notes, freezing, source, explained)."""
    return Compiled(
        backend,
        mode,
        device,
        m.compile_s,
        m.cache,
        m.warm_s,
        m.eager,
        m.compiled,
        speedup(list(m.eager.times_s), list(m.compiled.times_s)),
        kernels,
        profiled_s,
        profiled_s - sum(k.time_s for k in kernels),
        no_kernel if kernels else [],
        compiled_graphs(m),
        **rest,
    )


def compiled_graphs(m: Measured) -> int:
    """How many graphs a compiled call ran."""
    return len(m.regions[0]) if m.regions else 0


def _event_s(event: Any, cuda: bool) -> float:
    us = event.device_time_total if cuda and event.device_time_total > 0 else event.cpu_time_total
    return float(us) * 1e-6


def _profile(
    run: Any, inputs: tuple[Any, ...], device: torch.device, calls: int
) -> tuple[list[float], list[Regions]]:
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
        graphs: Regions = []
        stack = list(reversed(call.cpu_children))
        while stack:  # depth first, in call order
            e = stack.pop()
            if e.name.startswith(REGION):
                graphs.append([(c.name, _event_s(c, cuda)) for c in e.cpu_children])
            else:
                stack.extend(reversed(e.cpu_children))
        regions.append(graphs)
    return wholes, regions


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
