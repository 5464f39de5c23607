"""What a value in a graph always is, whatever the inputs' values: a literal, a tensor
attribute, a dtype or shape read off a node's recorded meta (shapes are fixed once captured, as
torch.export fixes them), or a call on such values (``torch.full([], v.size(-1) ** 0.5)``) --
what a rewrite may bake in as a number.  A value computed from the inputs' values (``.item()``)
is never one.

Example:
    >>> import torch
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:negrelu")
    >>> [constant(n, doc.graph_module) for n in doc.graph.nodes][:4]  # inputs vary
    [None, None, None, None]
    >>> constant(8.0, doc.graph_module)
    8.0
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx
from torch import nn
from torch.fx.node import map_aggregate

from fxstudio.core.graph.attributes import attribute
from fxstudio.core.graph.shapes import node_shape

_METADATA = frozenset({"dtype", "device", "shape", "ndim"})


def reads_metadata(node: fx.Node) -> bool:
    """``x.dtype``, ``x.shape``, ``x.size()``...: a read of what a tensor is, not of its values."""
    if node.op == "call_function" and node.target is getattr:
        return len(node.args) > 1 and node.args[1] in _METADATA
    return node.op == "call_method" and node.target in ("size", "dim")


UNKNOWN = object()


def value_of(value: Any, gm: nn.Module, depth: int = 0) -> Any:
    """What a value always is, or ``UNKNOWN`` (see the module's description)."""
    if not isinstance(value, fx.Node):
        return value
    if depth > 4:
        return UNKNOWN
    if value.op == "get_attr":
        return attribute(gm, str(value.target))
    if reads_metadata(value):
        return _metadata(value)
    if value.op != "call_function" or value.is_impure():
        return UNKNOWN
    known = {a: value_of(a, gm, depth + 1) for a in value.all_input_nodes}
    if any(v is UNKNOWN for v in known.values()):
        return UNKNOWN
    try:
        with torch.no_grad():
            return value.target(  # type: ignore[operator]
                *map_aggregate(value.args, lambda a: known.get(a, a)),  # type: ignore[arg-type]
                **map_aggregate(dict(value.kwargs), lambda a: known.get(a, a)),  # type: ignore[arg-type]
            )
    except Exception:
        return UNKNOWN


def _metadata(node: fx.Node) -> Any:
    """``x.dtype``, ``x.shape``... of a node, from what was recorded about ``x``."""
    x = node.args[0]
    val = x.meta.get("val", x.meta.get("tensor_meta")) if isinstance(x, fx.Node) else None
    what = str(node.args[1]) if node.target is getattr else str(node.target)
    if what == "dtype" and getattr(val, "dtype", None) is not None:
        return val.dtype  # type: ignore[union-attr]
    if what == "device" and isinstance(val, torch.Tensor):
        return val.device
    shape = node_shape(x) if isinstance(x, fx.Node) else None
    if not isinstance(shape, tuple):
        return UNKNOWN
    if what in ("ndim", "dim"):
        return len(shape)
    if what == "size" and len(node.args) > 1:
        return shape[node.args[1]] if isinstance(node.args[1], int) else UNKNOWN
    return torch.Size(shape)


def constant(value: Any, gm: nn.Module) -> float | None:
    """The number a value always is (a one-element tensor's), else ``None``."""
    got = value_of(value, gm)
    if isinstance(got, torch.Tensor) and got.numel() == 1:
        got = got.item()
    ok = isinstance(got, (int, float)) and not isinstance(got, bool)
    return float(got) if ok else None
