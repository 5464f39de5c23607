"""Whether the calls an edit makes can work, before the edit is kept.

Two checks, each refusing with :class:`EditError` (what was wrong, what to do):

* :func:`check_call` -- the target exists and the arguments fit its signature: Python's
  where there is one, else torch's schemas of the builtin (``torch.relu`` takes one tensor,
  so ``torch.relu(x, y)`` is refused however the shapes are);
* :func:`check_shapes` -- each changed call is run on fake tensors shaped like its inputs'
  recorded values (``meta["val"]``): nothing real is computed, and only the changed nodes
  run, not the graph (a few milliseconds on a 32-layer LLaMA).  A call torch refuses
  (``torch.mm`` of 4x8 and 4x8) is refused; a node further down that no longer fits is not
  -- the shape propagation after the edit marks it.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.edits import set_target
    >>> doc = open_document("examples:negrelu")
    >>> set_target(doc, "add", "torch.relu")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fxstudio.core.errors.EditError: 'add' cannot call torch.relu with 2 arguments: ...
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

import torch
import torch.fx as fx

from fxstudio.core.errors import EditError
from fxstudio.core.fxcompat import fake_tensor_mode, tree_leaves, tree_map
from fxstudio.core.fxcompat.modules import submodule_at
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import format_target
from fxstudio.core.graph.modes import eval_mode
from fxstudio.core.graph.notation import format_shape
from fxstudio.core.graph.signatures import schemas, signature
from fxstudio.core.process.noise import quiet_torch_logs

#: An edit that changes more calls than this (a rewrite of every match, a console statement
#: that made the graph again) is not run call by call: the propagation after it tells.
MOST_CALLS_RUN = 400
#: A call fake tensors refuse is run for real on zeros, for torch's plainer message, when its
#: inputs hold at most this many elements (on the CPU).
REAL_RUN_ELEMENTS = 1_000_000

# --- arguments against the signature --------------------------------------------------------------


def check_call(doc: GraphDocument, node: fx.Node) -> None:
    """Refuse a non-callable target or arguments its signature (or schema) cannot take."""
    if node.op == "call_function":
        if not callable(node.target):
            raise EditError(f"'{node.target}' is not a function: '{node.name}' cannot call it.")
        fn = node.target
    elif node.op == "call_method":
        if not isinstance(node.target, str) or not hasattr(torch.Tensor, node.target):
            raise EditError(f"Tensors have no method '{node.target}'.")
        if not node.args:
            raise EditError(
                f"'{node.name}' calls .{node.target}() on nothing: select the node whose value "
                "it is called on (or give it as the first argument)."
            )
        return
    elif node.op == "call_module":
        module = submodule_at(doc.graph_module, str(node.target))
        if module is None:
            raise EditError(f"The model has no submodule '{node.target}'.")
        fn = module.forward
    else:
        return
    sig = signature(fn)
    if sig is None:
        _check_schemas(node, fn)
        return
    try:
        sig.bind(*node.args, **node.kwargs)
    except TypeError as exc:
        if not node.args and not node.kwargs:
            raise EditError(
                f"'{node.name}' calls {format_target(node)} without arguments ({exc}): select "
                "the node it should take, or give its arguments."
            ) from None
        raise EditError(
            f"'{node.name}' cannot call {format_target(node)} that way: {exc}."
        ) from None


def _check_schemas(node: fx.Node, fn: Any) -> None:
    """A builtin (``torch.relu``) has no Python signature but one schema per overload
    (``torch.max(x)``, ``torch.max(x, 1)``): the call must fit one of them."""
    overloads = schemas(fn)
    if not overloads or any(_fits(sig, node.args, node.kwargs) for sig in overloads):
        return
    target = format_target(node)
    if not node.args and not node.kwargs:
        raise EditError(
            f"'{node.name}' calls {target} without arguments: select the node it should "
            "take, or give its arguments."
        )
    takes = sorted({_positional(sig) for sig in overloads})
    counts = " or ".join(str(n) for n in takes)
    named = ", ".join(
        p.name for p in overloads[0].parameters.values() if p.kind is not p.KEYWORD_ONLY
    )
    given = len(node.args)
    if given not in takes:
        raise EditError(
            f"'{node.name}' cannot call {target} with {given} argument{'s' * (given != 1)}: "
            f"it takes {counts} ({named}). Choose a function that takes {given}, or change "
            f"the arguments of '{node.name}' first."
        )
    keywords = ", ".join(node.kwargs) or "none"
    raise EditError(
        f"'{node.name}' cannot call {target} with these arguments (keywords: {keywords}): "
        f"none of its forms takes them (it takes {named}). Change the arguments of "
        f"'{node.name}' first, or choose another function."
    )


def _positional(sig: inspect.Signature) -> int:
    return sum(p.kind is not p.KEYWORD_ONLY for p in sig.parameters.values())


def _fits(sig: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    try:
        sig.bind(*args, **kwargs)
        return True
    except TypeError:
        pass
    # torch.zeros(2, 3): a lone list-of-ints argument may be given as its items
    params = [p for p in sig.parameters.values() if p.kind is not p.KEYWORD_ONLY]
    return len(params) == 1 and "List[int]" in str(params[0].annotation)


# --- running the changed calls on fake tensors ---------------------------------------------------

_UNKNOWN = object()  # a value whose shape is not known: the calls using it are not run
_CALLS = ("call_function", "call_method", "call_module")


def check_shapes(doc: GraphDocument, names: Iterable[str]) -> None:
    """Run the calls of the nodes ``names`` on fake tensors shaped like their inputs, the
    changed nodes' new values feeding each other; refuse the first one torch refuses.

    Nothing is run when the shapes are not known: no example inputs, or shapes a worker has
    yet to propagate again (a big graph's last edit)."""
    if doc.shapes_stale or not doc.example_inputs:
        return
    index = doc.node_index()
    changed = {index[n] for n in names if n in index}
    calls = [n for n in changed if n.op in _CALLS]
    if not calls or len(calls) > MOST_CALLS_RUN:
        return
    mode = fake_tensor_mode()
    values: dict[fx.Node, Any] = {}

    def value(node: fx.Node) -> Any:
        if node in values:
            return values[node]
        if node in changed:
            return _UNKNOWN  # a new input or weight: not worth running for
        found = _faked(mode, node.meta["val"]) if "val" in node.meta else _UNKNOWN
        values[node] = found
        return found

    with quiet_torch_logs():
        for node in _in_order(changed):
            if node.op not in _CALLS:
                continue
            inputs = [value(n) for n in node.all_input_nodes]
            if any(v is _UNKNOWN for v in inputs):
                values[node] = _UNKNOWN
                continue
            values[node] = _run(doc, node, mode, value)


def _run(doc: GraphDocument, node: fx.Node, mode: Any, value: Any) -> Any:
    args = fx.node.map_arg(node.args, value)
    kwargs = fx.node.map_arg(dict(node.kwargs), value)
    try:
        with mode:
            return _call(doc, node, args, kwargs)
    except (TypeError, RuntimeError, ValueError, IndexError) as exc:
        if _fake_limit(exc):
            return _UNKNOWN  # fake tensors cannot tell (an op that needs data): let it be
        error = _real_error(doc, node, args, kwargs, exc)
        if error is None:
            return _UNKNOWN  # it runs for real: fake tensors were wrong about it
        shapes = ", ".join(f"{n.name}: {_describe(value(n))}" for n in node.all_input_nodes)
        text = str(error).strip()
        reason = text.splitlines()[0].rstrip(".") if text else type(error).__name__
        raise EditError(
            f"'{node.name}' cannot run {format_target(node)} on its inputs ({shapes}): "
            f"{reason}. Give it inputs whose shapes fit, or choose another function."
        ) from None
    except Exception:  # noqa: BLE001 - anything else is not the call's fault: let it be
        return _UNKNOWN


def _call(doc: GraphDocument, node: fx.Node, args: Any, kwargs: Any) -> Any:
    if node.op == "call_function":
        return node.target(*args, **kwargs)  # type: ignore[operator]
    if node.op == "call_method":
        return getattr(args[0], str(node.target))(*args[1:], **kwargs)
    module = doc.graph_module.get_submodule(str(node.target))
    with eval_mode(module), torch.no_grad():
        return module(*args, **kwargs)


def _real_error(
    doc: GraphDocument, node: fx.Node, args: Any, kwargs: Any, fake: BaseException
) -> BaseException | None:
    """torch's own message for a call fake tensors refused (``mat1 and mat2 shapes cannot be
    multiplied`` where fake tensors say ``a and b must have same reduction dim``): the call
    run on zeros, when its inputs are small and on the CPU; ``None`` if it runs after all."""
    tensors = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
    if sum(t.numel() for t in tensors) > REAL_RUN_ELEMENTS or any(
        t.device.type != "cpu" for t in tensors
    ):
        return fake
    zeros = tree_map(
        lambda t: torch.zeros(t.shape, dtype=t.dtype) if isinstance(t, torch.Tensor) else t,
        (args, kwargs),
    )
    try:
        with torch.no_grad():
            _call(doc, node, *zeros)
    except Exception as exc:  # noqa: BLE001 - the call's own error, to show
        return exc
    return None


def _in_order(nodes: set[fx.Node]) -> list[fx.Node]:
    """``nodes`` with each after the ones among them it uses (no walk of the whole graph)."""
    order: list[fx.Node] = []
    seen: set[fx.Node] = set()
    for start in nodes:
        stack = [(start, False)]
        while stack:
            node, ready = stack.pop()
            if ready:
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            stack.extend((n, False) for n in node.all_input_nodes if n in nodes)
    return order


def _faked(mode: Any, val: Any) -> Any:
    """A fresh fake tensor for each tensor in a recorded value (meta tensors from a real run
    stand for CPU ones); a symbolic size makes it unknown."""
    unknown = False

    def fake(t: Any) -> Any:
        nonlocal unknown
        if not isinstance(t, torch.Tensor):
            if isinstance(t, (torch.SymInt, torch.SymFloat, torch.SymBool)):
                unknown = True
            return t
        if not all(isinstance(d, int) for d in t.shape):
            unknown = True
            return t
        device = "cpu" if t.device.type == "meta" else t.device
        with mode:
            return torch.empty_strided(
                tuple(t.shape), tuple(t.stride()), dtype=t.dtype, device=device
            )

    made = tree_map(fake, val)
    return _UNKNOWN if unknown else made


def _describe(val: Any) -> str:
    if isinstance(val, torch.Tensor):
        return f"{format_shape(tuple(val.shape))} {str(val.dtype).removeprefix('torch.')}"
    return repr(val) if not isinstance(val, (list, tuple)) else type(val).__name__


def _fake_limit(exc: BaseException) -> bool:
    """Whether ``exc`` says fake tensors cannot run the op (it needs real data, or has no
    fake implementation), rather than that the call is wrong."""
    kind = type(exc)
    text = str(exc)
    return kind.__module__.startswith(
        ("torch._subclasses", "torch.fx.experimental.symbolic_shapes")
    ) or ("data-dependent" in text or "data dependent" in text)
