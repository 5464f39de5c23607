"""Capture a module as a ``torch.fx.GraphModule`` and record every node's shape and dtype.

Two frontends:

* ``fx`` -- ``torch.fx.symbolic_trace`` (with leaf modules and ``concrete_args``): the graph
  keeps ``call_module`` nodes and reads like the user's ``forward``.
* ``export`` -- ``torch.export.export`` (non-strict), unlifted to a runnable GraphModule of
  ATen ops; it follows code that symbolic tracing cannot (``x.shape`` arithmetic, most
  Python control flow on sizes).

Shapes come from running the graph on fake tensors (no real compute, so large models are
cheap; :mod:`fxstudio.core.graph.propagation`); a graph whose ops need real data falls back to one
real run.  Every node gets ``node.meta["val"]`` (a fake or meta tensor, or a structure of
them), the same key ``torch.export`` uses, so all views read shapes one way
(:mod:`fxstudio.core.graph.shapes`).

Example:
    >>> from fxstudio.core.model.loading import load_model
    >>> from fxstudio.core.graph.shapes import node_shape
    >>> cap = capture(load_model("examples:simple"))
    >>> [n.name for n in cap.graph_module.graph.nodes]
    ['x', 'fc1', 'act', 'fc2', 'output']
    >>> node_shape(list(cap.graph_module.graph.nodes)[1])
    (2, 32)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.errors import CaptureError
from fxstudio.core.fxcompat.programs import unlifted
from fxstudio.core.graph.propagation import cheap_to_run, propagate_shapes
from fxstudio.core.graph.weights import faked, has_weights, with_buffers_of
from fxstudio.core.model.failures import export_error, trace_error
from fxstudio.core.model.modelspec import LoadedModel
from fxstudio.core.model.sizing import check_capture, watching
from fxstudio.core.model.tracer import Tracer
from fxstudio.core.process import modelcode, progress
from fxstudio.core.process.guard import SMALLER_MODEL, special_failure
from fxstudio.core.process.noise import quiet_torch_logs

Frontend = Literal["fx", "export"]
EXPORTING = "Exporting (torch.export)"  # the progress's stage: k of n modules
FRONTENDS: tuple[Frontend, ...] = ("fx", "export")


@dataclass(frozen=True)
class CaptureOptions:
    frontend: Frontend = "fx"
    leaf_modules: tuple[str, ...] = ()  # qualified names ("layer1.0") or class names ("Block")
    concrete_args: dict[str, Any] | None = None
    propagate_shapes: bool = True
    train: bool = False  # capture the training-mode graph (dropout, batch statistics) instead


@dataclass
class Captured:
    graph_module: fx.GraphModule
    frontend: Frontend
    example_inputs: tuple[Any, ...]
    notes: list[str] = field(default_factory=list)  # things the user should know (no shapes, ...)


def capture(loaded: LoadedModel, options: CaptureOptions | None = None) -> Captured:
    """Capture ``loaded.module`` with the chosen frontend and propagate shapes (captures
    take turns: :mod:`fxstudio.core.process.modelcode`).  The module is put in eval mode
    first (unless ``options.train``): tracing bakes the mode into the graph
    (``self.training`` read by a traced function is a constant), and an inference graph is
    what is edited and timed."""
    opts = options or CaptureOptions()
    with modelcode.one_capture_at_a_time(opts.frontend, _first_capture):
        return _capture(loaded, opts)


def _capture(loaded: LoadedModel, opts: CaptureOptions) -> Captured:
    if loaded.exported is not None:  # a .pt2 file is already an export capture
        gm = loaded.module
        assert isinstance(gm, fx.GraphModule)
        return Captured(gm, "export", loaded.example_inputs)
    loaded.module.train(opts.train)
    what = str(loaded.spec)
    check_capture(loaded.module, opts.frontend, what, SMALLER_MODEL)
    told = EXPORTING if opts.frontend == "export" else None  # (the tracer tells its nodes)
    with watching(loaded.module, told, opts.frontend, what, SMALLER_MODEL):
        return _captured(loaded, opts)


def _captured(loaded: LoadedModel, opts: CaptureOptions) -> Captured:
    if opts.frontend == "fx":
        gm = trace_fx(loaded.module, opts.leaf_modules, opts.concrete_args, loaded.source_file)
        cap = Captured(gm, "fx", loaded.example_inputs)
        if opts.propagate_shapes:
            if loaded.example_inputs:
                propagate_shapes(gm, loaded.example_inputs, loaded.source_file)
            else:
                cap.notes.append(
                    "No example inputs, so shapes are unknown. Pass --input SHAPE (one per "
                    "forward argument) or define example_inputs() beside the model."
                )
        return cap
    if opts.frontend == "export":
        progress.tell(EXPORTING)
        gm = export_module(loaded.module, loaded.example_inputs, loaded.source_file)
        return Captured(gm, "export", loaded.example_inputs)
    raise CaptureError(f"Unknown frontend '{opts.frontend}'. Use one of: {', '.join(FRONTENDS)}.")


def _first_capture(frontend: str) -> None:
    """A capture of a tiny model (:func:`fxstudio.core.process.modelcode.one_capture_at_a_time`)."""
    x, tiny = torch.randn(2, 3), modelcode.Tiny()
    with quiet_torch_logs(), progress.quiet():
        propagate_shapes(trace_fx(tiny), (x,), None)
        if frontend == "export":
            export_module(tiny, (x,), None)


def trace_fx(
    module: nn.Module,
    leaf_modules: Iterable[str] = (),
    concrete_args: dict[str, Any] | None = None,
    source_file: str | None = None,
) -> fx.GraphModule:
    """``torch.fx.symbolic_trace`` with leaf modules; failures become :class:`CaptureError`."""
    tracer = Tracer(leaf_modules)
    try:
        with quiet_torch_logs():
            graph = tracer.trace(module, concrete_args)
    except BaseException as exc:  # sys.exit, Ctrl+C, out of memory in forward too
        special = special_failure("Tracing forward", exc, source_file)
        if special is not None:
            raise special from exc
        if not isinstance(exc, Exception):  # GeneratorExit and the like: not the user's
            raise
        error = trace_error(exc, source_file)
        error.tracing = True
        raise error from exc
    name = module.__class__.__name__
    return fx.GraphModule(tracer.root, graph, name)


def export_module(
    module: nn.Module, example_inputs: tuple[Any, ...], source_file: str | None = None
) -> fx.GraphModule:
    """``torch.export.export`` (non-strict), unlifted to a runnable GraphModule."""
    if not example_inputs:
        raise CaptureError(
            "The export frontend runs the model, so it needs example inputs. Pass --input SHAPE "
            "(one per forward argument) or define example_inputs() beside the model."
        )
    try:
        with quiet_torch_logs():
            if not has_weights(module):  # structure only: exported on fake tensors
                with faked(module, tuple(example_inputs)) as fakes:
                    ep = torch.export.export(module, fakes, strict=False)
                return with_buffers_of(unlifted(ep), module)  # type: ignore[return-value]
            ep = torch.export.export(module, tuple(example_inputs), strict=False)
            return unlifted(ep)
    except BaseException as exc:
        special = special_failure("Exporting the model (torch.export)", exc, source_file)
        if special is not None:
            raise special from exc
        real = not module.training and cheap_to_run(module, example_inputs)
        raise export_error(exc, module, example_inputs, source_file, real) from exc
