"""Which storages each node's output holds -- the facts a memory estimate stands on.

A node's output allocates a *new* storage, or holds one that already exists: a view
(``view``, ``transpose``, ``x[0]``), an in-place op (``add_``, ``ReLU(inplace=True)``), an
alias (``getitem`` of a tuple, ``x.to(x.dtype)``), a parameter read by ``get_attr``.  Storage
identity (``untyped_storage()``, the same object on real, fake and meta tensors) tells them
apart; :func:`held` says it for every node in one of two ways, the cheapest that holds:

- ``recorded+calls`` -- the document's recorded values (``node.meta["val"]``) give every
  shape and stride on the same inputs, and each *kind* of call -- its op or submodule and its
  inputs' shapes, strides and dtypes -- is run once alone on fake tensors to see which of
  its outputs are new and which alias an input: a thousand alike layers cost one run.  What
  it makes must be what the record says (shapes, strides, dtypes), else the record is not
  the graph's own (``torch.export`` records its trace's layouts: a ``reshape`` it copied
  may be a view when the graph runs) and the graph runs whole;
- ``fake run`` -- other input sizes (or no usable record): the whole graph on fake tensors
  (shapes and dtypes, no data, no memory), any size, structure-only models included -- each
  kind of call run once there too (:mod:`fxstudio.core.memory.fakerun`).

Example:
    >>> import torch
    >>> gm = torch.fx.symbolic_trace(lambda x: (x + 1).view(-1).relu_())
    >>> h = held(gm, gm.graph, (torch.empty(2, 8, device="meta"),), recorded=False)
    >>> x, add, view, relu_ = list(gm.graph.nodes)[:4]
    >>> [h.nbytes[t] for t in h.tokens[add]], h.tokens[view] == h.tokens[relu_] == h.tokens[add]
    ([64], True)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch.fx.node import map_arg

from fxstudio.core.errors import CaptureError
from fxstudio.core.fxcompat import fake_tensor_mode, reparametrized, tree_leaves
from fxstudio.core.fxcompat.programs import GUARD_TARGET
from fxstudio.core.graph.edited import call_key, signature
from fxstudio.core.graph.execution import Current, Plan
from fxstudio.core.graph.modes import eval_mode
from fxstudio.core.graph.shapes import describe_value
from fxstudio.core.graph.weights import SHAPE_DEVICE, fake_of, fake_state
from fxstudio.core.memory.fakerun import arg_nodes, run_fake
from fxstudio.core.process.noise import quiet_torch_logs

Token = int


@dataclass
class Held:
    """Each node's output as the storages it holds (tokens, in the order of its tensors,
    each once), each storage's bytes, and the storages that are the model's parameters and
    buffers (never counted as activations).  ``how``: which way it was worked out."""

    tokens: dict[fx.Node, tuple[Token, ...]] = field(default_factory=dict)
    nbytes: dict[Token, int] = field(default_factory=dict)
    state: set[Token] = field(default_factory=set)
    how: str = "recorded+calls"
    keep: list[Any] = field(default_factory=list, repr=False)  # storages whose ids are tokens


def held(
    gm: fx.GraphModule, graph: fx.Graph, inputs: tuple[Any, ...], recorded: bool = True
) -> Held:
    """The storages every node of ``graph`` (``gm``'s submodules and weights) holds when run
    on ``inputs`` (real, fake or meta tensors: only their shapes and dtypes are read).
    ``recorded``: the document's recorded values are for these inputs and may be used."""
    with eval_mode(gm):
        if recorded and _recorded_fits(graph, inputs):
            with contextlib.suppress(_Unusable):
                return _by_calls(gm, graph)
        return _fake_run(gm, graph, inputs)


class _Unusable(Exception):
    """The record cannot be read this way: run the graph on fake tensors."""


def _tensors(value: Any) -> list[torch.Tensor]:
    return [v for v in tree_leaves(value) if isinstance(v, torch.Tensor)]


def _recorded_fits(graph: fx.Graph, inputs: tuple[Any, ...]) -> bool:
    """Whether every node has a recorded value and the placeholders' are ``inputs``' shapes."""
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    for node, given in zip(placeholders, inputs, strict=False):
        val = node.meta.get("val")
        if isinstance(given, torch.Tensor) and (
            not isinstance(val, torch.Tensor)
            or tuple(val.shape) != tuple(given.shape)
            or val.dtype != given.dtype
        ):
            return False
    # (a node nothing reads may have none: torch.export's guards call returns None)
    return all(
        "val" in n.meta or not n.users for n in graph.nodes if n.op not in ("output", "get_attr")
    )


def _from_values(graph: fx.Graph, values: dict[fx.Node, Any], state: set[int], how: str) -> Held:
    """Tokens from the storages of values of one run (``state``: the ids of the parameters'
    and buffers' storages in it)."""
    out = Held(how=how)
    for node in graph.nodes:
        if node.op == "output":
            continue
        tokens: list[Token] = []
        for t in _tensors(values.get(node)):
            storage = t.untyped_storage()
            token = id(storage)
            if token not in out.nbytes:
                out.keep.append(storage)
                out.nbytes[token] = _int_bytes(storage.nbytes(), node)
            if node.op == "get_attr" or token in state:
                out.state.add(token)
            if token not in tokens:
                tokens.append(token)
        out.tokens[node] = tuple(tokens)
    return out


def _int_bytes(n: Any, node: fx.Node) -> int:
    try:
        return int(n)
    except (TypeError, ValueError) as exc:  # a symbolic size
        raise CaptureError(
            f"Node '{node.name}' has an output of a symbolic size: its bytes are not known. "
            "Give the inputs' sizes (--input) to estimate its memory at those sizes."
        ) from exc


# --- the record's shapes, each kind of call run once alone ---------------------------------

#: What a kind of call does with storages: for each tensor of its output, ("in", i) -- the
#: storage of its inputs' i-th tensor --, ("state",) -- a parameter's or buffer's --,
#: ("same", j) -- that of its own j-th tensor --, or ("new", b): a new storage of b bytes.
Pattern = tuple[tuple[Any, ...], ...]


def _by_calls(gm: fx.GraphModule, graph: fx.Graph) -> Held:
    out = Held(how="recorded+calls")
    plan = Plan(gm, graph)
    mode = fake_tensor_mode()
    interp = fx.Interpreter(gm, garbage_collect_values=False, graph=graph)
    memo: dict[Any, tuple[Pattern, Any]] = {}
    leaves: dict[fx.Node, list[Token]] = {}  # the storage of each tensor of a node's value
    count = iter(range(1, 1 << 62))
    with quiet_torch_logs():
        for node in plan.nodes:
            if node.op == "output":
                continue
            tensors = _tensors(node.meta.get("val"))
            if node.op in ("placeholder", "get_attr"):
                leaves[node] = _own(out, tensors, count, state=node.op == "get_attr")
            else:
                args = arg_nodes(node)
                given = [tok for a in args for tok in leaves[a]]
                key = _key(node, plan)
                found = memo.get(key) if key is not None else None
                if found is None:
                    found = _run_alone(interp, node, args, plan, mode)
                    if key is not None:
                        memo[key] = found
                pattern, layout = found
                if layout != _layout(tensors):  # the record is not what the graph makes
                    raise _Unusable(node.name)
                mine: list[Token] = []
                for kind in pattern:
                    if kind[0] == "in":
                        mine.append(given[kind[1]])
                    elif kind[0] == "same":
                        mine.append(mine[kind[1]])
                    else:
                        token = next(count)
                        out.nbytes[token] = kind[1] if kind[0] == "new" else 0
                        if kind[0] == "state":
                            out.state.add(token)
                        mine.append(token)
                leaves[node] = mine
            out.tokens[node] = tuple(dict.fromkeys(leaves[node]))
    return out


def _own(out: Held, tensors: list[torch.Tensor], count: Iterator[int], state: bool) -> list[Token]:
    """Tokens for an input's or an attribute's tensors (one per storage)."""
    by_storage: dict[int, Token] = {}
    mine = []
    for t in tensors:
        storage = t.untyped_storage()
        out.keep.append(storage)  # (its id stays its own while it is held)
        k = id(storage)
        if k not in by_storage:
            by_storage[k] = next(count)
            out.nbytes[by_storage[k]] = int(t.untyped_storage().nbytes())
            if state:
                out.state.add(by_storage[k])
        mine.append(by_storage[k])
    return mine


def _key(node: fx.Node, plan: Plan) -> Any:
    """What a call's storages depend on: :func:`call_key`, or for a submodule its class, how
    it was made, its weights' and inputs' shapes (a module not of torch's own: that one)."""
    env = {n: n.meta.get("val") for n in node.all_input_nodes}
    if node.op != "call_module":
        return call_key(node, env)
    sub = plan.modules.get(str(node.target))
    if sub is None:
        return None
    own = type(sub).__module__.startswith("torch.nn.")
    try:
        weights = tuple((n, signature(t)) for n, t in sub.named_parameters())
        key = (
            "M",
            type(sub),
            sub.extra_repr() if own else id(sub),
            weights,
            signature(map_arg(node.args, env.__getitem__)),
            signature(map_arg(dict(node.kwargs), env.__getitem__)),
        )
        hash(key)
    except Exception:  # noqa: BLE001 - not plainly comparable: run it
        return None
    return key


def _refake(mode: Any, v: Any) -> Any:
    if not isinstance(v, torch.Tensor):
        if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
            raise _Unusable("a symbolic value")
        return v
    if not all(isinstance(d, int) for d in (*v.shape, *v.stride())):
        raise _Unusable("a symbolic size")
    device = SHAPE_DEVICE if v.is_meta else v.device
    with mode:
        return torch.empty_strided(tuple(v.shape), tuple(v.stride()), dtype=v.dtype, device=device)


def _layout(tensors: list[torch.Tensor]) -> tuple[Any, ...]:
    """Each tensor's shape, strides and dtype (whether a copy or a view is made hangs on
    them); raises :class:`_Unusable` for a symbolic size."""
    try:
        return tuple(
            (tuple(int(d) for d in t.shape), tuple(int(d) for d in t.stride()), t.dtype)
            for t in tensors
        )
    except (TypeError, ValueError, RuntimeError) as exc:
        raise _Unusable("a symbolic size") from exc


def _run_alone(
    interp: fx.Interpreter, node: fx.Node, args: list[fx.Node], plan: Plan, mode: Any
) -> tuple[Pattern, Any]:
    """Run ``node`` alone on fake tensors of its inputs' recorded shapes and strides: what
    its output's storages are, and its tensors' layout (:func:`_layout`)."""
    from fxstudio.core.fxcompat import tree_map

    held_here: list[Any] = []  # the storages whose ids are compared, held meanwhile

    def ids(tensors: list[torch.Tensor]) -> list[int]:
        storages = [t.untyped_storage() for t in tensors]
        held_here.extend(storages)
        return [id(s) for s in storages]

    inputs: list[int] = []
    for a in args:
        if a not in interp.env:
            interp.env[a] = tree_map(lambda v: _refake(mode, v), a.meta.get("val"))
        inputs.extend(ids(_tensors(interp.env[a])))
    try:
        with mode:
            if node.op == "call_module":
                sub = plan.modules[str(node.target)]
                with reparametrized(sub, fake_state(sub, mode)):
                    state = set(ids([*sub.parameters(), *sub.buffers()]))
                    result = interp.run_node(node)
            else:
                state = set()
                result = interp.run_node(node)
    except Exception as exc:  # noqa: BLE001 - the record does not fit: the whole graph runs
        raise _Unusable(node.name) from exc
    finally:
        for a in args:
            interp.env.pop(a, None)
    pattern: list[tuple[Any, ...]] = []
    first: dict[int, int] = {}  # a new storage -> the first of the output's tensors holding it
    for i, t in enumerate(_tensors(result)):
        storage = t.untyped_storage()
        held_here.append(storage)
        k = id(storage)
        if k in inputs:
            pattern.append(("in", inputs.index(k)))
        elif k in state:
            pattern.append(("state",))
        elif k in first:
            pattern.append(("same", first[k]))
        else:
            first[k] = i
            pattern.append(("new", int(storage.nbytes())))
    return tuple(pattern), _layout(_tensors(result))


# --- a run on fake tensors -------------------------------------------------------------------


def _fake_run(gm: fx.GraphModule, graph: fx.Graph, inputs: tuple[Any, ...]) -> Held:
    mode = fake_tensor_mode()
    fakes = tuple(fake_of(mode, t) if isinstance(t, torch.Tensor) else t for t in inputs)
    at = Current()
    try:
        with quiet_torch_logs(), mode, torch.no_grad():
            values, state = run_fake(gm, graph, fakes, mode, at)
    except Exception as exc:
        raise _failed(exc, at.node, inputs) from exc
    found = _from_values(graph, values, {id(s) for s in state}, "fake run")
    found.keep.extend(state)  # (held: their ids stay theirs)
    return found


def _failed(exc: Exception, node: fx.Node | None, inputs: tuple[Any, ...]) -> CaptureError:
    from fxstudio.core.errors import stack_trace_location

    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    given = ", ".join(describe_value(v) for v in inputs)
    if "Guard failed" in text or (node is not None and node.target == GUARD_TARGET):
        return CaptureError(
            f"This graph was captured by torch.export for inputs of fixed sizes, and the "
            f"inputs {given} are not those ({text.removeprefix('Guard failed: ')}): its "
            "shapes are written into the graph. Open the model at the sizes you want "
            "(--input) and work its memory out there.",
        )
    at = f" at node '{node.name}'" if node is not None else ""
    loc = stack_trace_location(node.stack_trace, None) if node is not None else None
    where = f" ({loc.describe()})" if loc is not None else ""
    return CaptureError(
        f"Working out memory on the inputs {given} failed{at}{where}: "
        f"{type(exc).__name__}: {text}\nCheck the input shapes and dtypes: one per forward "
        "argument, in order (e.g. 1x3x224x224, 1x16:int64).",
        loc,
    )
