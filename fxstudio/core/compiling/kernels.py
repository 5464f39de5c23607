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
bootstrap CI and test of :func:`~fxstudio.core.runtime.speedup.speedup`.
"""

from __future__ import annotations

import statistics

import torch

from fxstudio.core.compiling.located import node_lines
from fxstudio.core.compiling.result import Compiled, Kernel, Lines, ModuleSpeed
from fxstudio.core.compiling.running import (
    BACKENDS,
    MODES,
    CompileError,
    check_choices,
    compiled_of,
    measure,
    notes_on,
    timed_kernels,
)
from fxstudio.core.fxcompat.compiler import reset_dynamo
from fxstudio.core.fxcompat.programs import GUARD_TARGET
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.process import modelcode
from fxstudio.core.runtime.breakdown import NodeProfile
from fxstudio.core.runtime.ondevice import prepared, profile_nodes
from fxstudio.core.runtime.speedup import ALPHA, speedup, summed_calls
from fxstudio.core.runtime.timer import threads

__all__ = [
    "BACKENDS",
    "MODES",
    "CompileError",
    "Compiled",
    "Kernel",
    "ModuleSpeed",
    "compile_graph",
]


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
    return name == GUARD_TARGET or name.startswith("_assert")  # torch._assert, aten._assert_*


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
    the weights as constants
    (:func:`~fxstudio.core.fxcompat.compiler.inductor_provenance`).  Raises
    :class:`CompileError` when the compiler fails, with what to do."""
    check_choices(backend, mode, freezing)
    # The turn is held to the end, not for the compiles alone: a compiled model may compile
    # again on a later call, and compiling traces (make_fx patches nn.Module.__call__ for
    # the whole process) -- never beside another thread's capture.
    with (
        modelcode.one_turn(),
        prepared(doc, device, dtype) as p,
        torch.no_grad(),
        threads(n_threads) as used,
    ):
        m = measure(p.module, p.inputs, p.target, backend, mode, freezing, used, min_time, calls)
        n = len(m.wholes)
        eager_nodes = (
            profile_nodes([p], used, [m.eager.median_s], n)[0]
            if per_module and m.recorded
            else None
        )
        env = p.stamp(used)
        notes = list(p.notes) + notes_on(m, backend, mode, freezing, p.target)
        reset_dynamo()
    order = {n.name: i for i, n in enumerate(doc.graph.nodes)}

    def place(graph: int, pre: set[str]) -> tuple[tuple[str, ...], Lines, tuple[str, ...]]:
        nodes = tuple(sorted((n for n in pre if n in order), key=order.__getitem__))
        return nodes, node_lines(doc, nodes), ()

    kernels, profiled_s = timed_kernels(m, place)
    modules = _modules(eager_nodes, kernels) if eager_nodes is not None else []
    computing = [n.name for n in doc.graph.nodes if n.op.startswith("call_") and not _check(n)]
    covered = {name for k in kernels for name in k.nodes}
    return compiled_of(
        m,
        kernels,
        profiled_s,
        backend,
        mode,
        str(p.target),
        [name for name in computing if name not in covered],
        modules=modules,
        env=env,
        notes=notes,
        freezing=freezing,
    )


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
