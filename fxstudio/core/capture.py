"""Capture a module as a ``torch.fx.GraphModule`` and record every node's shape and dtype.

Two frontends:

* ``fx`` -- ``torch.fx.symbolic_trace`` (with leaf modules and ``concrete_args``): the graph
  keeps ``call_module`` nodes and reads like the user's ``forward``.
* ``export`` -- ``torch.export.export`` (non-strict), unlifted to a runnable GraphModule of
  ATen ops; it follows code that symbolic tracing cannot (``x.shape`` arithmetic, most
  Python control flow on sizes).

Shapes come from running the graph on fake tensors (no real compute, so large models are
cheap); a graph whose ops need real data falls back to one real run.  Every node gets
``node.meta["val"]`` (a fake or meta tensor, or a structure of them), the same key
``torch.export`` uses, so all views read shapes one way (:func:`node_shape`).

Example:
    >>> from fxstudio.core.loading import load_model
    >>> cap = capture(load_model("examples:simple"))
    >>> [n.name for n in cap.graph_module.graph.nodes]
    ['x', 'fc1', 'act', 'fc2', 'output']
    >>> node_shape(list(cap.graph_module.graph.nodes)[1])
    (2, 32)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core import progress, turns
from fxstudio.core.errors import CaptureError, stack_trace_location, user_frame
from fxstudio.core.failures import (
    describe_value,
    export_error,
    faked,
    short_location,
    trace_error,
)
from fxstudio.core.fxcompat import tree_map
from fxstudio.core.guard import special_failure
from fxstudio.core.modelspec import LoadedModel
from fxstudio.core.noise import quiet_torch_logs
from fxstudio.core.tracer import Tracer

Frontend = Literal["fx", "export"]
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
    take turns: :mod:`fxstudio.core.turns`).  The module is put in eval mode first (unless
    ``options.train``): tracing bakes the mode into the graph (``self.training`` read by a
    traced function is a constant), and an inference graph is what is edited and timed."""
    opts = options or CaptureOptions()
    with turns.one_capture_at_a_time(opts.frontend, _first_capture):
        return _capture(loaded, opts)


def _capture(loaded: LoadedModel, opts: CaptureOptions) -> Captured:
    if loaded.exported is not None:  # a .pt2 file is already an export capture
        gm = loaded.module
        assert isinstance(gm, fx.GraphModule)
        return Captured(gm, "export", loaded.example_inputs)
    loaded.module.train(opts.train)
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
        progress.tell("Exporting (torch.export)")
        gm = export_module(loaded.module, loaded.example_inputs, loaded.source_file)
        return Captured(gm, "export", loaded.example_inputs)
    raise CaptureError(f"Unknown frontend '{opts.frontend}'. Use one of: {', '.join(FRONTENDS)}.")


def _first_capture(frontend: str) -> None:
    """A capture of a tiny model (:func:`fxstudio.core.turns.one_capture_at_a_time`)."""
    x, tiny = torch.randn(2, 3), turns.Tiny()
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
            ep = torch.export.export(module, tuple(example_inputs), strict=False)
            return ep.module()
    except BaseException as exc:
        special = special_failure("Exporting the model (torch.export)", exc, source_file)
        if special is not None:
            raise special from exc
        real = not module.training and _cheap_to_run(module, example_inputs)
        raise export_error(exc, module, example_inputs, source_file, real) from exc


# --- shapes --------------------------------------------------------------------------------


class _ShapeInterpreter(fx.Interpreter):
    """Runs a graph and stores each node's result as ``meta["val"]`` (fake or meta tensors)."""

    def __init__(self, module: nn.Module, graph: fx.Graph, keep_real: bool) -> None:
        super().__init__(module, garbage_collect_values=True, graph=graph)
        self.keep_real = keep_real
        self.current: fx.Node | None = None
        self.counter = progress.Counter("Shapes", len(graph.nodes))

    def run_node(self, n: fx.Node) -> Any:
        self.current = n
        self.counter.step()
        if n.op == "output":
            self.counter.close()
        result = super().run_node(n)
        if n.op != "output":
            n.meta["val"] = tree_map(_as_meta, result) if self.keep_real else result
        return result


def _as_meta(x: Any) -> Any:
    if isinstance(x, torch.Tensor) and not isinstance(x, torch.nn.Parameter):
        return torch.empty_like(x, device="meta")
    if isinstance(x, torch.nn.Parameter):
        return torch.empty_like(x.data, device="meta")
    return x


def required_inputs(graph: fx.Graph) -> list[fx.Node]:
    """Placeholders without a default value."""
    return [n for n in graph.nodes if n.op == "placeholder" and not n.args]


#: Models with at most this many parameter and buffer elements, run on inputs of at most
#: ``CHEAP_INPUT_ELEMENTS`` elements, get their shapes from one real run: on a CPU that is
#: faster than fake tensors, whose dispatch costs about 0.2 ms per node.
CHEAP_STATE_ELEMENTS = 20_000_000
CHEAP_INPUT_ELEMENTS = 2_000_000


def propagate_shapes(
    gm: fx.GraphModule,
    example_inputs: tuple[Any, ...],
    source_file: str | None = None,
    method: Literal["auto", "fake", "real"] = "auto",
    graph: fx.Graph | None = None,
) -> None:
    """Record ``meta["val"]`` on every node (fake or meta tensors: no real data is kept).

    ``graph`` (default ``gm.graph``) is the graph run, with ``gm``'s submodules and weights.

    ``auto`` runs small models for real (under ``no_grad``) and large ones on fake tensors,
    which need no real compute or memory.  When the fake run fails (an op that needs real
    data, or a real error whose message is clearer from real tensors) one real run follows.
    A failure (usually a wrong input shape) raises :class:`CaptureError` naming the node
    and the user's source line.
    """
    graph = gm.graph if graph is None else graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    required = required_inputs(graph)
    if not (len(required) <= len(example_inputs) <= len(placeholders)):
        names = ", ".join(n.name for n in placeholders)
        raise CaptureError(
            f"The model's forward takes {len(required)} input(s) ({names}), but "
            f"{len(example_inputs)} example input(s) were given. Pass one --input per argument."
        )
    if method == "auto":
        method = "real" if _cheap_to_run(gm, example_inputs) else "fake"
    with eval_mode(gm):
        if method == "fake":
            try:
                with quiet_torch_logs():
                    _run_fake(gm, graph, example_inputs)
                return
            except Exception:  # noqa: S110 - ops that need data, or a real error: a real run tells
                pass  # (sys.exit, Ctrl+C and Cancel are not Exceptions: they go on up)
        interp = _ShapeInterpreter(gm, graph, keep_real=True)
        # Copies: an in-place op (ReLU(inplace=True)) reading an input must not change the
        # document's example inputs.
        copies = tree_map(lambda v: v.clone() if isinstance(v, torch.Tensor) else v, example_inputs)
        try:
            with torch.no_grad():
                interp.run(*copies)
        except BaseException as exc:
            at = f" at node '{interp.current.name}'" if interp.current is not None else ""
            special = special_failure(f"Running the model{at}", exc, source_file)
            if special is not None:
                raise special from exc
            raise _run_error(exc, gm, example_inputs, source_file, interp.current) from exc


@contextlib.contextmanager
def eval_mode(module: nn.Module) -> Iterator[None]:
    """Run in eval mode, then restore each submodule's flag.

    Shape propagation must not change the model: in train mode a real run would update
    batch-norm statistics and draw dropout masks (and batch norm refuses a batch of one).
    The flags are set directly: an unlifted ``torch.export`` module refuses ``.eval()``.
    """
    flags = [(m, m.training) for m in module.modules()]
    for m, _ in flags:
        m.training = False
    try:
        yield
    finally:
        for m, training in flags:
            m.training = training


def _cheap_to_run(gm: nn.Module, example_inputs: tuple[Any, ...]) -> bool:
    state = sum(t.numel() for t in gm.parameters()) + sum(t.numel() for t in gm.buffers())
    inputs = sum(t.numel() for t in example_inputs if isinstance(t, torch.Tensor))
    on_cpu = all(t.device.type == "cpu" for t in example_inputs if isinstance(t, torch.Tensor))
    return on_cpu and state <= CHEAP_STATE_ELEMENTS and inputs <= CHEAP_INPUT_ELEMENTS


def _run_fake(gm: fx.GraphModule, graph: fx.Graph, example_inputs: tuple[Any, ...]) -> None:
    """Run ``gm`` with its parameters, buffers and inputs swapped for fake tensors."""
    with faked(gm, example_inputs) as fake_inputs:
        _ShapeInterpreter(gm, graph, keep_real=False).run(*fake_inputs)


def _run_error(
    exc: BaseException,
    gm: fx.GraphModule,
    example_inputs: tuple[Any, ...],
    source_file: str | None,
    node: fx.Node | None,
) -> CaptureError:
    loc = stack_trace_location(node.stack_trace, source_file) if node is not None else None
    if loc is None:
        loc = user_frame(exc.__traceback__, prefer_file=source_file)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    given = ", ".join(describe_value(v) for v in example_inputs)
    at = f" at node '{node.name}'" if node is not None else ""
    src = f", {short_location(loc)}" if loc else ".\n"
    err = CaptureError(
        f"Running the model on the example inputs failed{at}{src}{type(exc).__name__}: {text}\n"
        f"The inputs were: {given}. Check the --input shapes and dtypes.",
        loc,
    )
    err.node = node.name if node is not None else None  # type: ignore[attr-defined]
    err.detail = text  # type: ignore[attr-defined]
    return err


# --- reading shapes back -------------------------------------------------------------------


def node_shape(node: fx.Node) -> tuple[int, ...] | list[tuple[int, ...] | None] | None:
    """The node's output shape (a list for a tuple of values, None for non-tensors in it)."""
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return tuple(_size(d) for d in val.shape)
    if isinstance(val, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in val):
        return [
            tuple(_size(d) for d in v.shape) if isinstance(v, torch.Tensor) else None for v in val
        ]
    tm = node.meta.get("tensor_meta")
    if tm is not None and hasattr(tm, "shape"):
        return tuple(_size(d) for d in tm.shape)
    return None


def node_dtype(node: fx.Node) -> str | None:
    """The node's output dtype (``float32``), the Python type for non-tensors, or ``None``."""
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return str(val.dtype).removeprefix("torch.")
    if isinstance(val, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in val):
        dtypes = {str(v.dtype).removeprefix("torch.") for v in val if isinstance(v, torch.Tensor)}
        return dtypes.pop() if len(dtypes) == 1 else ",".join(sorted(dtypes))
    tm = node.meta.get("tensor_meta")
    if tm is not None and hasattr(tm, "dtype"):
        return str(tm.dtype).removeprefix("torch.")
    if "val" in node.meta and val is not None:
        return type(val).__name__
    return None


def _size(d: Any) -> int:
    try:
        return int(d)
    except (TypeError, ValueError):  # a symbolic size
        return -1


def format_shape(shape: tuple[int, ...] | list[tuple[int, ...] | None] | None) -> str:
    """``2x16``; ``(2x8, 2x8)`` for several; ``scalar`` for 0-d; ``""`` when unknown."""
    if shape is None:
        return ""
    if isinstance(shape, list):
        return "(" + ", ".join("None" if s is None else format_shape(s) for s in shape) + ")"
    return "x".join("?" if d < 0 else str(d) for d in shape) or "scalar"


def repropagate(
    module: fx.GraphModule,
    graph: fx.Graph,
    example_inputs: tuple[Any, ...],
    source_file: str | None = None,
) -> tuple[tuple[str, str] | None, set[str]]:
    """Propagate shapes through ``graph`` again.  Returns the node that no longer fits, as
    ``(name, error)`` (the shapes from it on are cleared, not left stale), and the nodes whose
    shape or dtype is no longer the same (their labels must be drawn again)."""
    before = {n.name: _shape_text(n) for n in graph.nodes}
    problem = None
    if example_inputs:
        try:
            propagate_shapes(module, example_inputs, source_file, graph=graph)
        except CaptureError as exc:
            bad = getattr(exc, "node", None) or ""
            stale = False
            for node in graph.nodes:
                stale = stale or node.name == bad
                if stale:
                    node.meta.pop("val", None)
            problem = (bad, getattr(exc, "detail", str(exc)))
    return problem, {n.name for n in graph.nodes if before.get(n.name) != _shape_text(n)}


def _shape_text(node: fx.Node) -> tuple[str, str | None]:
    return format_shape(node_shape(node)), node_dtype(node)
