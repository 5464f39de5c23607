"""Propagate shapes: run a graph on fake tensors (or once for real) and record every node's
result as ``node.meta["val"]``, the key ``torch.export`` uses, which
:mod:`fxstudio.core.graph.shapes` reads back; and propagate again after an edit.

Example:
    >>> from fxstudio.core.model.capture import trace_fx
    >>> from fxstudio.core.model.loading import load_model
    >>> from fxstudio.core.graph.shapes import node_shape
    >>> loaded = load_model("examples:simple")
    >>> gm = trace_fx(loaded.module)
    >>> propagate_shapes(gm, loaded.example_inputs)
    >>> [node_shape(n) for n in gm.graph.nodes][:3]
    [(2, 16), (2, 32), (2, 32)]
"""

from __future__ import annotations

from typing import Any, Literal

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.errors import CaptureError, stack_trace_location, user_frame
from fxstudio.core.fxcompat import tree_map
from fxstudio.core.graph.modes import eval_mode
from fxstudio.core.graph.shapes import format_shape, node_dtype, node_shape
from fxstudio.core.graph.weights import has_weights
from fxstudio.core.model.failures import describe_value, faked, short_location
from fxstudio.core.process import progress
from fxstudio.core.process.guard import special_failure
from fxstudio.core.process.noise import quiet_torch_logs


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
    if not has_weights(gm):
        with eval_mode(gm):
            _run_structure_only(gm, graph, example_inputs, source_file)
        return
    if method == "auto":
        method = "real" if cheap_to_run(gm, example_inputs) else "fake"
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


def cheap_to_run(gm: nn.Module, example_inputs: tuple[Any, ...]) -> bool:
    """Whether one real run is the cheaper way to shapes (``CHEAP_STATE_ELEMENTS``); never
    for a structure-only model (it has no values to run on)."""
    state = sum(t.numel() for t in gm.parameters()) + sum(t.numel() for t in gm.buffers())
    inputs = sum(t.numel() for t in example_inputs if isinstance(t, torch.Tensor))
    on_cpu = all(t.device.type == "cpu" for t in example_inputs if isinstance(t, torch.Tensor))
    small = state <= CHEAP_STATE_ELEMENTS and inputs <= CHEAP_INPUT_ELEMENTS
    return on_cpu and small and has_weights(gm)


def _run_fake(gm: fx.GraphModule, graph: fx.Graph, example_inputs: tuple[Any, ...]) -> None:
    """Run ``gm`` with its parameters, buffers and inputs swapped for fake tensors."""
    with faked(gm, example_inputs) as fake_inputs:
        _ShapeInterpreter(gm, graph, keep_real=False).run(*fake_inputs)


def _run_structure_only(
    gm: fx.GraphModule, graph: fx.Graph, example_inputs: tuple[Any, ...], source_file: str | None
) -> None:
    """Shapes of a model without weights: fake tensors only (there are no values to fall
    back on); a failure names the node and says that it needs the model's values."""
    interp = _ShapeInterpreter(gm, graph, keep_real=False)
    try:
        with quiet_torch_logs(), faked(gm, example_inputs) as fake_inputs:
            interp.run(*fake_inputs)
    except BaseException as exc:
        at = f" at node '{interp.current.name}'" if interp.current is not None else ""
        special = special_failure(f"Working out shapes{at}", exc, source_file)
        if special is not None:
            raise special from exc
        if not isinstance(exc, Exception):
            raise
        err = _run_error(exc, gm, example_inputs, source_file, interp.current)
        err.message = err.message.replace(
            "Running the model on the example inputs failed",
            "Working out shapes without weights failed",
        ) + (
            " Without weights only shapes are known: an op that needs values (data-dependent "
            "control flow, .item()) cannot be followed -- open the model with its weights."
        )
        raise err from exc


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
