"""A graph run whole on fake tensors, each kind of call run once: a thousand alike layers on
inputs of the same shapes, strides and dtypes cost one run of each of their calls.

:func:`run_fake` computes what running the graph on fake tensors computes -- each node's
value, of the same shapes, strides and dtypes, and the same storages: a new one where the
call allocates, its input's where it makes a view or works in place -- but a call met
before on inputs alike (:func:`~fxstudio.core.graph.edited.call_key`; for a submodule its
class, how it was made and its weights' shapes) is not run again: its value is made from
what the first one made (a new tensor of its layout, a view of the input it viewed), which
on fake tensors costs a small share of the call (a linear layer is three ops).  Calls that
change their input's shape in place (``unsqueeze_``), and values other than a tensor or a
flat tuple or list of them, are always run.

Example:
    >>> import torch
    >>> from fxstudio.core.fxcompat import fake_tensor_mode
    >>> gm = torch.fx.symbolic_trace(lambda x: (x + 1).relu() + (x + 1).relu())
    >>> mode = fake_tensor_mode()
    >>> with mode:
    ...     values, _ = run_fake(gm, gm.graph, (torch.empty(2, 8),), mode)
    >>> [tuple(v.shape) for v in values.values()][-1], len(values)
    ((2, 8), 6)
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx
from torch.fx.node import map_arg

from fxstudio.core.fxcompat import reparametrized
from fxstudio.core.graph.edited import call_key, signature
from fxstudio.core.graph.execution import Current, Plan, placeholder_value
from fxstudio.core.graph.weights import fake_of

#: How a value is made again: for each of its items, ("in", i, size, stride, offset) -- a
#: view of the call's i-th input tensor --, ("same", j, ...) -- of its own j-th tensor --,
#: ("new", size, stride, dtype, device) or ("value", v): not a tensor.
Recipe = tuple[str, tuple[tuple[Any, ...], ...]]


def run_fake(
    module: torch.nn.Module,
    graph: fx.Graph,
    inputs: tuple[Any, ...],
    mode: Any,
    at: Current | None = None,
) -> tuple[dict[fx.Node, Any], list[Any]]:
    """Every node's value (the output node left out), ``graph`` run with ``module``'s
    submodules and attributes on ``inputs`` (fake tensors of ``mode``), inside ``mode``; and
    the storages of the weights it made fake.  A weight is made fake only when a call that
    is run reads it (a thousand alike layers: one layer's weights).  ``at.node``: the node
    being run (the one that raised, if one did)."""
    plan = Plan(module, graph)
    state: list[Any] = []
    faked: dict[int, torch.Tensor] = {}

    def fake(t: Any) -> Any:
        if not isinstance(t, torch.Tensor):
            return t
        if id(t) not in faked:
            faked[id(t)] = fake_of(mode, t)
            state.append(faked[id(t)].untyped_storage())
        return faked[id(t)]

    at = at if at is not None else Current()
    interp = fx.Interpreter(module, garbage_collect_values=False, graph=graph)
    env = interp.env
    given = iter(graph.process_inputs(*inputs))
    memo: dict[Any, Recipe] = {}
    for node in plan.nodes:
        at.node = node
        if node.op == "output":
            break
        if node.op == "placeholder":
            value = placeholder_value(node, given)
        elif node.op == "get_attr":
            value = fake(interp.fetch_attr(str(node.target)))
        else:
            key = _key(node, env, plan)
            recipe = memo.get(key) if key is not None else None
            tensors = [t for a in arg_nodes(node) for t in _tensors(env[a])]
            if recipe is not None:
                value = _made(recipe, tensors)
            elif node.op == "call_module":
                sub = plan.modules[str(node.target)]
                weights = dict(sub.named_parameters(remove_duplicate=False))
                weights.update(sub.named_buffers(remove_duplicate=False))
                with reparametrized(sub, {n: fake(t) for n, t in weights.items()}):
                    value = interp.run_node(node)
            else:
                value = interp.run_node(node)
            if recipe is None and key is not None:
                made = _recipe(value, tensors)
                if made is not None:
                    memo[key] = made
        env[node] = value
    return dict(env), state


def arg_nodes(node: fx.Node) -> list[fx.Node]:
    """The nodes ``node`` reads, in the order of its arguments (one read twice: twice)."""
    found: list[fx.Node] = []

    def note(n: fx.Node) -> fx.Node:
        found.append(n)
        return n

    map_arg((node.args, node.kwargs), note)
    return found


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def _key(node: fx.Node, env: dict[fx.Node, Any], plan: Plan) -> Any:
    """What a call's value depends on (None: run it): its op and target and its inputs'
    layouts; a submodule's class, how it was made (a module not of torch's own: that one)
    and its weights' layouts."""
    name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    if str(name).endswith("_"):  # may change its input's shape in place
        return None
    if node.op != "call_module":
        return call_key(node, env)
    sub = plan.modules.get(str(node.target))
    if sub is None:
        return None
    own = type(sub).__module__.startswith("torch.nn.")
    try:
        key = (
            "M",
            type(sub),
            sub.extra_repr() if own else id(sub),
            tuple((n, signature(t)) for n, t in sub.named_parameters()),
            tuple((n, signature(t)) for n, t in sub.named_buffers()),
            signature(map_arg(node.args, env.__getitem__)),
            signature(map_arg(dict(node.kwargs), env.__getitem__)),
        )
        hash(key)
    except Exception:  # noqa: BLE001 - not plainly comparable: run it
        return None
    return key


def _layout(t: torch.Tensor) -> tuple[Any, ...] | None:
    try:
        return (
            tuple(int(d) for d in t.shape),
            tuple(int(d) for d in t.stride()),
            int(t.storage_offset()),
        )
    except (TypeError, ValueError, RuntimeError):  # a symbolic size
        return None


def _recipe(value: Any, inputs: list[torch.Tensor]) -> Recipe | None:
    """How to make ``value`` again from other inputs alike; None when it cannot be."""
    if isinstance(value, torch.Tensor):
        kind, items = "tensor", [value]
    elif type(value) in (tuple, list):
        kind, items = type(value).__name__, list(value)
    else:
        return None
    storages = [t.untyped_storage() for t in inputs]  # held: their ids stay theirs
    where: dict[int, int] = {}
    for i, storage in enumerate(storages):
        where.setdefault(id(storage), i)
    made: list[tuple[Any, ...]] = []
    first: dict[int, int] = {}
    for j, v in enumerate(items):
        if not isinstance(v, torch.Tensor):
            if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool, torch.Tensor)):
                return None
            made.append(("value", v))
            continue
        layout = _layout(v)
        if layout is None:
            return None
        storage = v.untyped_storage()
        storages.append(storage)
        k = id(storage)
        if k in where:
            made.append(("in", where[k], *layout))
        elif k in first:
            made.append(("same", first[k], *layout))
        else:
            if layout[2] != 0 or int(storage.nbytes()) != _dense_bytes(v):
                return None  # a view into a larger new storage: not made alike by empty_strided
            first[k] = j
            made.append(("new", layout[0], layout[1], v.dtype, v.device))
    return kind, tuple(made)


def _dense_bytes(t: torch.Tensor) -> int:
    if t.numel() == 0:
        return 0
    span = 1 + sum((int(s) - 1) * int(st) for s, st in zip(t.shape, t.stride(), strict=True))
    return span * t.element_size()


def _made(recipe: Recipe, inputs: list[torch.Tensor]) -> Any:
    kind, items = recipe
    out: list[Any] = []
    for item in items:
        tag = item[0]
        if tag == "value":
            out.append(item[1])
        elif tag == "new":
            out.append(torch.empty_strided(item[1], item[2], dtype=item[3], device=item[4]))
        else:
            base = inputs[item[1]] if tag == "in" else out[item[1]]
            out.append(base.as_strided(item[2], item[3], item[4]))
    if kind == "tensor":
        return out[0]
    return tuple(out) if kind == "tuple" else out
