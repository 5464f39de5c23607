"""Read back the shape and dtype recorded on a node (the views write a shape with
:func:`~fxstudio.core.graph.notation.format_shape`).

Shape propagation (:mod:`fxstudio.core.graph.propagation`) leaves ``node.meta["val"]`` on every
node -- a fake or meta tensor, or a structure of them, the key ``torch.export`` uses too --
so every view reads shapes one way, through these functions, with no capture pipeline below.

Example:
    >>> import torch, torch.fx as fx
    >>> from fxstudio.core.graph.notation import format_shape
    >>> gm = fx.symbolic_trace(torch.nn.Linear(3, 4))
    >>> x = next(iter(gm.graph.nodes))
    >>> x.meta["val"] = torch.empty(2, 3, device="meta")
    >>> node_shape(x), node_dtype(x), format_shape(node_shape(x))
    ((2, 3), 'float32', '2x3')
    >>> format_shape([(2, 8), None]), format_shape(()), format_shape(None)
    ('(2x8, None)', 'scalar', '')
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx as fx


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


def describe_value(v: Any) -> str:
    """``2x16:float32`` for a tensor, ``repr`` for anything else."""
    if isinstance(v, torch.Tensor):
        dims = "x".join(str(d) for d in v.shape) or "scalar"
        return f"{dims}:{str(v.dtype).removeprefix('torch.')}"
    return repr(v)
