"""Compile a model as ``torch.compile`` does, whether Dynamo captures it whole or not: the one
flow behind ``fxstudio compile`` and the Compile dock's *Compile and time*.

Dynamo runs over the eager model first (:func:`~fxstudio.core.compiling.breaks.
explain_breaks`).  Then:

* **No graph break** and a document open: the document's graph is compiled
  (:func:`~fxstudio.core.compiling.kernels.compile_graph`) -- its edits with it -- and each
  kernel is traced to the document's nodes by inductor's records.
* **Graph breaks** (a branch on a tensor's value, a ``print``...), or no document (a model
  neither symbolic tracing nor export capture whole): the *eager model* is compiled, as
  ``torch.compile(model)`` compiles it -- Dynamo's graphs compiled, the code between them run
  by Python.  Each kernel is traced, by inductor's records, to the ops of the Dynamo graph it
  came from; those ops to the user's lines (their stack traces, as explain saw them); and
  those lines, when a document is open (a model opened in part: the module that breaks kept
  as a leaf; or symbolic tracing, which does not see a print), to the document's nodes made
  there (:mod:`.located`).  The document's graph itself is not what runs: its edits are not
  in the compiled model, and the result says so.

Either way the speed-up over eager comes from the clean timer with its bootstrap CI, and
the kernels' times plus the time outside them add up to the profiled call.

Example (a model with a data-dependent branch and a print in forward)::

    loaded = load_model("model.py:Breaks")
    result = compile_model(lambda: loaded, min_time=0.2)
    result.source, result.graphs, [k.graph for k in result.kernels]
    # ('model', 3, [0, 0, 1, 2, 2])
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch

from fxstudio.core.compiling.breaks import Explained, Frame, explain_breaks
from fxstudio.core.compiling.kernels import compile_graph
from fxstudio.core.compiling.located import made_at_any
from fxstudio.core.compiling.result import Compiled, Lines
from fxstudio.core.compiling.running import (
    CompileError,
    check_choices,
    compiled_graphs,
    compiled_of,
    measure,
    notes_on,
    timed_kernels,
)
from fxstudio.core.errors import UserError
from fxstudio.core.fxcompat import tree_map
from fxstudio.core.fxcompat.compiler import reset_dynamo
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.model.modelspec import LoadedModel
from fxstudio.core.process import modelcode, progress
from fxstudio.core.runtime.devices import resolve
from fxstudio.core.runtime.environment import environment
from fxstudio.core.runtime.timer import threads


def compile_model(
    load: Callable[[], LoadedModel],
    doc: GraphDocument | None = None,
    explained: Explained | None = None,
    device: str = "cpu",
    backend: str = "inductor",
    mode: str = "default",
    n_threads: int | None = None,
    min_time: float = 1.0,
    calls: int | None = None,
    freezing: bool = False,
    train: bool = False,
) -> Compiled:
    """Compile the model (module doc) and say where its time goes.  ``load()`` gives the
    eager model (called only when it is needed: a document captured whole, already
    explained, compiles without it); ``doc``: the document, if one is open; ``explained``:
    Dynamo's breaks of the eager model, when already found.  Raises :class:`CompileError`
    when the compiler fails (a :class:`~fxstudio.core.errors.UserError` when the model
    cannot run)."""
    check_choices(backend, mode, freezing)
    resolve(device)  # a missing device is said before anything runs
    loaded: LoadedModel | None = None
    if explained is None:
        try:
            loaded = load()
            progress.tell("Running Dynamo over the model")
            explained = explain_breaks(loaded, train=train)
        except UserError as exc:  # the model cannot be built again or Dynamo cannot run it
            if doc is None:
                raise
            result = compile_graph(
                doc, device, backend, mode, n_threads, min_time, calls, freezing=freezing
            )
            first = str(exc).strip().splitlines()
            result.notes.append(
                f"Dynamo was not run over the eager model ({first[0] if first else exc!r}): "
                "the document's graph was compiled; the model's graph breaks are unknown."
            )
            return result
    if doc is not None and explained.graphs <= 1 and not explained.breaks:
        progress.tell("Compiling the document's graph")
        result = compile_graph(
            doc, device, backend, mode, n_threads, min_time, calls, freezing=freezing
        )
    else:
        progress.tell("Compiling the eager model (Dynamo's graphs)")
        model = loaded if loaded is not None else load()
        result = compile_eager(
            model,
            explained,
            doc,
            device,
            backend,
            mode,
            n_threads,
            min_time,
            calls,
            freezing,
            train,
        )
    result.explained = explained
    return result


def compile_eager(
    loaded: LoadedModel,
    explained: Explained,
    doc: GraphDocument | None = None,
    device: str = "cpu",
    backend: str = "inductor",
    mode: str = "default",
    n_threads: int | None = None,
    min_time: float = 1.0,
    calls: int | None = None,
    freezing: bool = False,
    train: bool = False,
) -> Compiled:
    """The eager model compiled as torch.compile does, its kernels traced to Dynamo's ops,
    the user's lines and the document's nodes made there (module doc)."""
    check_choices(backend, mode, freezing)
    target = resolve(device)
    if not loaded.example_inputs:
        raise CompileError(
            "The model has no example inputs to run: pass --input SHAPE (one per forward "
            "argument) or define example_inputs() beside the model."
        )
    module = loaded.module.train(train)
    if target.type != "cpu":  # the loaded model (and a document sharing its weights) stays
        module = copy.deepcopy(module).to(target)
    inputs = tuple(tree_map(lambda x: _on(x, target), loaded.example_inputs))
    # the turn to the end: a compiled model may compile again on a later call (kernels.py)
    with modelcode.one_turn(), torch.no_grad(), threads(n_threads) as used:
        m = measure(module, inputs, target, backend, mode, freezing, used, min_time, calls)
        dtype = next((p.dtype for p in module.parameters()), torch.float32)
        env = environment(target, dtype, used)
        notes = notes_on(m, backend, mode, freezing, target)
        reset_dynamo()

    def place(graph: int, pre: set[str]) -> tuple[tuple[str, ...], Lines, tuple[str, ...]]:
        found = [(name, explained.frames(graph, name)) for name in pre]
        known = [(name, frames) for name, frames in found if frames is not None]
        names = explained.graph_names[graph] if graph < len(explained.graph_names) else []
        ops = tuple(sorted((name for name, _ in known), key=names.index))
        stacks: list[tuple[Frame, ...]] = [frames for _, frames in known if frames]
        lines = tuple(sorted({(s[-1].file, s[-1].line) for s in stacks}))
        nodes = tuple(made_at_any(doc, stacks)) if doc is not None else ()
        return nodes, lines, ops

    kernels, profiled_s = timed_kernels(m, place)
    graphs = compiled_graphs(m)
    covered = {(k.graph, op) for k in kernels for op in k.ops}
    no_kernel = [
        f"graph {g + 1}: {name}"
        for g, names in enumerate(explained.graph_names)
        for name in names
        if (g, name) not in covered
    ]
    notes[:0] = _said(explained, doc, graphs, len(m.recorded), backend)
    return compiled_of(
        m,
        kernels,
        profiled_s,
        backend,
        mode,
        str(target),
        no_kernel,
        env=env,
        notes=notes,
        freezing=freezing,
        source="model",
        explained=explained,
    )


def _on(value: object, target: torch.device) -> object:
    return value.to(target) if isinstance(value, torch.Tensor) else value


def _said(
    explained: Explained, doc: GraphDocument | None, graphs: int, recorded: int, backend: str
) -> list[str]:
    """What was compiled, in words, and what cannot be traced."""
    if explained.breaks:
        what = (
            f"Dynamo breaks this model into {explained.graphs} graphs: compiled as "
            "torch.compile(model) compiles it -- Dynamo's graphs compiled, the code at each "
            "break run by Python"
        )
    else:
        what = "Compiled as torch.compile(model) compiles it (Dynamo captures it whole)"
    if doc is None:
        what += "; no document: each kernel is placed at your lines and Dynamo's ops."
    else:
        what += (
            "; the document's nodes of a kernel are those made at its lines (the document's "
            "graph itself is not what ran: edits to it are not in this result)."
        )
    notes = [what]
    if backend == "inductor" and recorded != explained.graphs:
        notes.append(
            f"Inductor compiled {recorded} graphs where explain saw {explained.graphs}: "
            "kernels whose ops explain did not see have no lines."
        )
    if graphs and graphs != explained.graphs:
        notes.append(f"A compiled call ran {graphs} graphs, explain saw {explained.graphs}.")
    return notes
