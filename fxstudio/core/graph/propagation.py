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

from collections.abc import Iterable
from typing import Any, Literal

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.errors import CaptureError, short_location, stack_trace_location, user_frame
from fxstudio.core.fxcompat import fake_tensor_mode, graph_interpreter, reparametrized, tree_map
from fxstudio.core.graph.edited import Signed, call_key, in_place, signature
from fxstudio.core.graph.execution import Current, Plan, bookkeeping_count, run_nodes, threads
from fxstudio.core.graph.modes import eval_mode
from fxstudio.core.graph.shapes import describe_value, node_dtype, node_shape
from fxstudio.core.graph.weights import SHAPE_DEVICE, fake_of, fake_state, faked
from fxstudio.core.process import budget, progress
from fxstudio.core.process.guard import special_failure
from fxstudio.core.process.noise import quiet_torch_logs


class _ShapeInterpreter(fx.Interpreter):
    """Runs a graph on fake tensors and stores each node's result as ``meta["val"]``."""

    def __init__(self, module: nn.Module, graph: fx.Graph) -> None:
        super().__init__(module, garbage_collect_values=True, graph=graph)
        self.current: fx.Node | None = None
        self.counter = progress.Counter("Shapes", len(graph.nodes))

    def run_node(self, n: fx.Node) -> Any:
        self.current = n
        self.counter.step()
        if n.op == "output":
            self.counter.close()
        result = super().run_node(n)
        if n.op != "output":
            n.meta["val"] = result
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
    elements, weights = _state(gm)
    if not weights:
        with eval_mode(gm):
            _run_structure_only(gm, graph, example_inputs, source_file)
        return
    if method == "auto":
        method = "real" if _cheap(elements, example_inputs, weights) else "fake"
    with eval_mode(gm):
        if method == "fake":
            try:
                with quiet_torch_logs():
                    _run_fake(gm, graph, example_inputs)
                return
            except Exception:  # noqa: S110 - ops that need data, or a real error: a real run tells
                pass  # (sys.exit, Ctrl+C and Cancel are not Exceptions: they go on up)
        _run_real(gm, graph, example_inputs, source_file)


#: A graph of this many nodes whose shapes come from a real run makes its first fake tensor
#: mode then (its first use imports ``torch._dynamo``: 0.7 s): every edit's calls are checked
#: on fake tensors, and the first edit of a big graph must be shown as fast as the next.
WARM_NODES = 2_000


def _run_real(
    gm: fx.GraphModule, graph: fx.Graph, example_inputs: tuple[Any, ...], source_file: str | None
) -> None:
    """One real run, node by node (:func:`run_nodes`), each node's result kept as meta tensors
    of its shape; on as few threads as its ops need (the values are thrown away:
    :func:`~fxstudio.core.graph.execution.bookkeeping_threads`)."""
    counter = progress.Counter("Shapes", len(graph.nodes))

    def record(node: fx.Node, value: Any) -> None:
        counter.step()
        node.meta["val"] = tree_map(_as_meta, value)

    if len(graph.nodes) >= WARM_NODES:
        fake_tensor_mode()  # (see WARM_NODES)
    at = Current()
    # Copies: an in-place op (ReLU(inplace=True)) reading an input must not change the
    # document's example inputs.
    copies = tree_map(lambda v: v.clone() if isinstance(v, torch.Tensor) else v, example_inputs)
    try:
        plan = Plan(gm, graph)
        with torch.no_grad(), threads(bookkeeping_count(plan, example_inputs)):
            with budget.bounded():  # a run: held to the memory available (an open is not)
                run_nodes(gm, graph, copies, record, at, plan)
        counter.step()  # the output node (run_nodes returns its value: no record)
        counter.close()
    except BaseException as exc:
        raise _failed(exc, "Running the model", at.node, example_inputs, source_file) from exc


def _state(module: nn.Module) -> tuple[int, bool]:
    """The elements of ``module``'s parameters and buffers, and whether it holds its weights
    (none of them is a meta tensor: :func:`~fxstudio.core.graph.weights.has_weights`), in
    one walk of its modules."""
    elements, weights = 0, True
    for t in (*module.parameters(), *module.buffers()):
        elements += t.numel()
        weights = weights and not t.is_meta
    return elements, weights


def _cheap(elements: int, example_inputs: tuple[Any, ...], weights: bool) -> bool:
    inputs = sum(t.numel() for t in example_inputs if isinstance(t, torch.Tensor))
    on_cpu = all(t.device.type == "cpu" for t in example_inputs if isinstance(t, torch.Tensor))
    small = elements <= CHEAP_STATE_ELEMENTS and inputs <= CHEAP_INPUT_ELEMENTS
    return on_cpu and small and weights


def cheap_to_run(gm: nn.Module, example_inputs: tuple[Any, ...]) -> bool:
    """Whether one real run is the cheaper way to shapes (``CHEAP_STATE_ELEMENTS``); never
    for a structure-only model (it has no values to run on)."""
    elements, weights = _state(gm)
    return _cheap(elements, example_inputs, weights)


def _run_fake(gm: fx.GraphModule, graph: fx.Graph, example_inputs: tuple[Any, ...]) -> None:
    """Run ``gm`` with its parameters, buffers and inputs swapped for fake tensors."""
    with faked(gm, example_inputs) as fake_inputs:
        _ShapeInterpreter(gm, graph).run(*fake_inputs)


def _run_structure_only(
    gm: fx.GraphModule, graph: fx.Graph, example_inputs: tuple[Any, ...], source_file: str | None
) -> None:
    """Shapes of a model without weights: fake tensors only (there are no values to fall
    back on); a failure names the node and says that it needs the model's values."""
    interp = _ShapeInterpreter(gm, graph)
    try:
        with quiet_torch_logs(), faked(gm, example_inputs) as fake_inputs:
            interp.run(*fake_inputs)
    except BaseException as exc:
        err = _failed(exc, "Working out shapes", interp.current, example_inputs, source_file)
        if not isinstance(err, CaptureError) or not isinstance(exc, Exception):
            raise err from exc
        err.message = err.message.replace(
            "Running the model on the example inputs failed",
            "Working out shapes without weights failed",
        ) + (
            " Without weights only shapes are known: an op that needs values (data-dependent "
            "control flow, .item()) cannot be followed -- open the model with its weights."
        )
        raise err from exc


def _failed(
    exc: BaseException,
    what: str,
    node: fx.Node | None,
    example_inputs: tuple[Any, ...],
    source_file: str | None,
) -> BaseException:
    """What a run for shapes that raised ``exc`` at ``node`` says: ``what`` ("Running the
    model") at the node -- out of memory, Ctrl+C and the like as they are worded everywhere,
    else the node, the user's line and the inputs (:func:`_run_error`)."""
    at = f" at node '{node.name}'" if node is not None else ""
    special = special_failure(f"{what}{at}", exc, source_file)
    if special is not None:
        return special
    return _run_error(exc, example_inputs, source_file, node)


def _run_error(
    exc: BaseException,
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
    changed: Iterable[str] | None = None,
    paths: Iterable[str] = (),
) -> tuple[tuple[str, str] | None, set[str]]:
    """Propagate shapes through ``graph`` again.  Returns the node that no longer fits, as
    ``(name, error)`` (the shapes from it on are cleared, not left stale), and the nodes whose
    shape or dtype is no longer the same (their labels must be drawn again).

    ``changed``: the nodes an edit made or changed, and ``paths`` the submodules and
    attributes it replaced -- then only they are run again, on fake tensors made from the
    shapes their inputs already have, and their users only while a shape or dtype differs
    (:func:`downstream`); the whole graph runs again when that cannot be done."""
    touched = None if changed is None else set(changed)
    if touched is not None and example_inputs:
        try:
            return None, downstream(module, graph, touched, tuple(paths), example_inputs)
        except Exception:  # noqa: BLE001, S110 - a node that no longer fits, a symbolic size,
            pass  # more than a real run costs: the whole graph runs (sys.exit, Ctrl+C go on up)
    before = {n.name: _shape_and_dtype(n) for n in graph.nodes}
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
    return problem, {n.name for n in graph.nodes if before.get(n.name) != _shape_and_dtype(n)}


def _shape_and_dtype(node: fx.Node) -> tuple[Any, str | None]:
    """What a node's label shows of its value, to compare: its shape as a tuple (written out as
    the label writes it, only to be compared, it cost more than the compare) and its dtype."""
    return node_shape(node), node_dtype(node)


#: A node run alone on fake tensors costs about this many nodes of one real run of a small
#: model (fake dispatch, ~0.3 ms a node, against ~0.1 ms).
FAKE_NODE_COST = 4


class _WholeGraph(Exception):
    """The shapes an edit changed cannot be worked out alone: propagate the whole graph."""


def downstream(
    module: fx.GraphModule,
    graph: fx.Graph,
    changed: set[str],
    paths: tuple[str, ...] = (),
    inputs: tuple[Any, ...] | None = None,
) -> set[str]:
    """Work out the shapes of the ``changed`` nodes (and the nodes that use the submodules or
    attributes at ``paths``) on fake tensors made from the shapes their inputs already have;
    go on to a node's users only while its shape or dtype is not what it was.  An edit costs
    the nodes it touches, not a run of the model; a call already run here on inputs of the
    same shapes, dtypes and other arguments (a rewrite's thousand replacements alike) is not
    run again (:func:`~fxstudio.core.graph.edited.call_key`).  Returns the nodes whose shape
    or dtype changed; raises, leaving every shape as it was, when a node cannot be run alone
    (no shape recorded for an input, a new placeholder, a symbolic size), does not fit, or
    -- given the model's example ``inputs`` -- when more nodes must run than one real run of
    the model costs (a quarter of its nodes, :data:`FAKE_NODE_COST`, when it is run for real
    to shapes at all, :func:`cheap_to_run`): :func:`repropagate` then runs it all."""
    dirty = set(changed) | {
        n.name
        for n in graph.nodes
        if n.op in ("call_module", "get_attr")
        and any(n.target == p or str(n.target).startswith(p + ".") for p in paths)
    }
    mode = fake_tensor_mode()
    fakes: dict[fx.Node, Any] = {}
    memo: dict[Any, Any] = {}
    old: dict[fx.Node, Any] = {}  # the shapes before, put back if this gives up
    limit, runs = len(graph.nodes) // FAKE_NODE_COST, 0

    made: dict[Any, Any] = {}  # one fake tensor per shape, strides, dtype and device read
    signed: Signed = {}  # (each tensor's key read once)

    def refake(v: Any) -> Any:
        if not isinstance(v, torch.Tensor):
            return _refake(mode, v)
        key = signature(v, signed)  # (raises for a symbolic size: _NotPlain: the whole graph)
        if key not in made:
            made[key] = _refake(mode, v)
        return made[key]

    def value(node: fx.Node) -> Any:
        if node not in fakes:
            if "val" not in node.meta:
                raise _WholeGraph(node.name)
            fakes[node] = tree_map(refake, node.meta["val"])
        return fakes[node]

    interp = graph_interpreter(module, graph)
    reshaped = set()
    try:
        with quiet_torch_logs():  # (a submodule runs in eval mode: _run_alone)
            for node in graph.nodes:
                if node.name not in dirty or node.op == "output":
                    continue
                if node.op == "placeholder":
                    raise _WholeGraph(node.name)
                inplace = in_place(node, interp)
                for arg in node.all_input_nodes:
                    # (an op that changes its input in place gets a copy: a value may be shared)
                    interp.env[arg] = value(arg) if not inplace else _copy(mode, value(arg))
                before = _shape_and_dtype(node)
                key = None if inplace else call_key(node, interp.env, signed)
                result = memo.get(key, _NONE) if key is not None else _NONE
                if result is _NONE:
                    runs += 1
                    if runs == limit and inputs is not None and cheap_to_run(module, inputs):
                        raise _WholeGraph("more nodes than a run of the model")
                    with mode:
                        result = _run_alone(interp, node, mode)
                    if key is not None:
                        memo[key] = result
                old.setdefault(node, node.meta.get("val", _NONE))
                node.meta["val"] = fakes[node] = result
                if _shape_and_dtype(node) != before:
                    reshaped.add(node.name)
                    dirty |= {u.name for u in node.users}
    except BaseException:
        for node, val in old.items():
            if val is _NONE:
                node.meta.pop("val", None)
            else:
                node.meta["val"] = val
        raise
    return reshaped


_NONE = object()


def _copy(mode: Any, value: Any) -> Any:
    return tree_map(lambda v: _refake(mode, v), value)


def _run_alone(interp: fx.Interpreter, node: fx.Node, mode: Any) -> Any:
    """One node on fake tensors: a submodule with its weights made fake (meta ones too), an
    attribute made fake, anything else as the interpreter runs it."""
    if node.op == "get_attr":
        attr = interp.fetch_attr(str(node.target))
        return tree_map(lambda v: fake_of(mode, v) if isinstance(v, torch.Tensor) else v, attr)
    if node.op != "call_module":
        return interp.run_node(node)
    sub = interp.fetch_attr(str(node.target))
    with reparametrized(sub, fake_state(sub, mode)), eval_mode(sub):
        return interp.run_node(node)


def _refake(mode: Any, v: Any) -> Any:
    """A recorded value (a fake tensor of another run, a meta tensor) as a fake tensor of
    ``mode`` with its shape, strides, dtype and device (the CPU for a meta tensor)."""
    if not isinstance(v, torch.Tensor):
        if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise _WholeGraph("a symbolic value")
        return v
    if not all(isinstance(d, int) for d in (*v.shape, *v.stride())):
        raise _WholeGraph("a symbolic size")
    device = SHAPE_DEVICE if v.is_meta else v.device
    with mode:
        return torch.empty_strided(tuple(v.shape), tuple(v.stride()), dtype=v.dtype, device=device)
