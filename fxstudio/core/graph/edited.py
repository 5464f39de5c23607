"""What working out shapes after an edit keeps track of: the nodes and paths edits touched
since a deferred document's shapes were last right (:func:`note_touched`,
:func:`touched_since`), and what a call's result shape depends on (:func:`call_key`), so
that :func:`~fxstudio.core.graph.propagation.downstream` runs a thousand alike calls once.

Example:
    >>> import torch
    >>> gm = torch.fx.symbolic_trace(lambda x: x * 0.1)
    >>> node = next(n for n in gm.graph.nodes if n.op == "call_function")
    >>> x = next(iter(gm.graph.nodes))
    >>> call_key(node, {x: torch.empty(2, 8)}) == call_key(node, {x: torch.ones(2, 8)})
    True
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import torch
import torch.fx as fx
from torch import nn
from torch.fx.node import map_arg

#: What edits touched since a deferred document's shapes were last right, by its module:
#: ``(version, nodes, paths)`` -- so that its shapes are caught up from those nodes
#: (:func:`~fxstudio.core.graph.propagation.downstream`), not by a run of the whole graph.
#: Written on the editing thread, read by a worker's catch-up on a snapshot
#: (:func:`touched_since`).
_TOUCHED: weakref.WeakKeyDictionary[nn.Module, tuple[int, frozenset[str], frozenset[str]]] = (
    weakref.WeakKeyDictionary()
)


def note_touched(
    module: nn.Module,
    version: tuple[int, int],
    names: Iterable[str],
    paths: Iterable[str],
    fresh: bool,
) -> None:
    """An edit took ``module``'s graph from ``version[0]`` to ``version[1]``, touching the
    nodes ``names`` and the submodules and attributes at ``paths``, and left its shapes to be
    caught up later; ``fresh``: they were right before it.  Edits in a row add up; one made
    on shapes already stale for a reason not noted here leaves nothing known."""
    names, paths = frozenset(names), frozenset(paths)
    if not fresh:
        prior = _TOUCHED.get(module)
        if prior is None or prior[0] != version[0]:
            _TOUCHED.pop(module, None)
            return
        names, paths = names | prior[1], paths | prior[2]
    _TOUCHED[module] = (version[1], names, paths)


def touched_since(module: nn.Module, version: int) -> tuple[set[str], set[str]] | None:
    """The nodes and paths edits touched since ``module``'s shapes were last right, if they
    are known at ``version`` (see :func:`note_touched`); None: the whole graph."""
    entry = _TOUCHED.get(module)
    if entry is None or entry[0] != version:
        return None
    return set(entry[1]), set(entry[2])


def in_place(node: fx.Node, interp: fx.Interpreter) -> bool:
    """Whether the node's call may change its input (``add_``, ``inplace=True``)."""
    if node.op == "call_module":
        return bool(getattr(interp.fetch_attr(str(node.target)), "inplace", False))
    name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    return str(name).endswith("_") or bool(node.kwargs.get("inplace"))


def call_key(node: fx.Node, env: dict[fx.Node, Any], signed: Signed | None = None) -> Any:
    """What a call's result shape depends on: its op and target, and its arguments with each
    fake tensor as its shape, strides, dtype and device; None when an argument is not plainly
    comparable (then the call is run).  ``signed``: as :func:`signature`'s."""
    if node.op not in ("call_function", "call_method"):
        return None
    try:
        args = signature(map_arg(node.args, env.__getitem__), signed)
        kwargs = signature(map_arg(dict(node.kwargs), env.__getitem__), signed)
        key = (node.op, node.target, args, kwargs)
        hash(key)
    except _NotPlain:
        return None
    except TypeError:  # an unhashable target
        return None
    return key


class _NotPlain(Exception):
    pass


_PLAIN = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.memory_format)


#: Tensors already signed (:func:`signature`): by ``id``, with the tensor itself (kept alive,
#: so that no other tensor takes its ``id`` meanwhile)
Signed = dict[int, tuple[torch.Tensor, Any]]


def signature(v: Any, signed: Signed | None = None) -> Any:
    """``v`` as a hashable key: each tensor as its shape, strides, dtype, device and whether
    it requires grad.  ``signed``: tensors signed before, whose keys are taken again instead of
    read (a fake tensor's shape and strides each cross into C++: the 20,000-node graph's shapes
    after a rewrite read the same few fakes tens of thousands of times)."""
    if isinstance(v, torch.Tensor):
        if signed is not None:
            hit = signed.get(id(v))
            if hit is not None:
                return hit[1]
        if not all(isinstance(d, int) for d in (*v.shape, *v.stride())):
            raise _NotPlain
        key = ("T", tuple(v.shape), tuple(v.stride()), v.dtype, str(v.device), v.requires_grad)
        if signed is not None:
            signed[id(v)] = (v, key)
        return key
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, *(signature(x, signed) for x in v))
    if isinstance(v, dict):
        return ("D", *((k, signature(x, signed)) for k, x in v.items()))
    if isinstance(v, slice):
        return ("S", *(signature(x, signed) for x in (v.start, v.stop, v.step)))
    if isinstance(v, _PLAIN) or v is Ellipsis:
        return (type(v).__name__, v)
    raise _NotPlain
