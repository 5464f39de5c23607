"""What an op *is*, whatever its spelling: ``torch.relu``, ``F.relu``, ``x.relu()``, ``nn.ReLU``
and the in-place ``relu_`` are one op; ``operator.add``, ``torch.add`` and ``x.add(y)`` another.

:func:`family` names a node's op in that sense (``"relu"``, ``"add"``) -- or ``None`` where
no spelling-free name is known -- and :func:`strict_key` in torch.fx's sense (op and target,
a submodule by its attribute name or its type).  The matcher indexes graph nodes by these
keys, so it only ever tries nodes that can be the pattern's anchor.

Example:
    >>> import torch, torch.nn.functional as F
    >>> gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.ReLU()))
    >>> [family(n, gm) for n in gm.graph.nodes]
    [None, 'relu', None]
"""

from __future__ import annotations

from typing import Any

import torch.fx as fx
from torch import nn

from fxstudio.core.fxcompat import DropoutBase, is_op_overload, op_schema_arguments
from fxstudio.core.fxcompat.modules import submodule_at
from fxstudio.core.graph.families import function_family, method_family

# Modules that are one elementwise function of their input, whatever their settings (the
# settings listed must have these values for the module to be that function).
_MODULES: dict[type[nn.Module], tuple[str, dict[str, Any]]] = {
    nn.ReLU: ("relu", {}),
    nn.ReLU6: ("relu6", {}),
    nn.GELU: ("gelu", {"approximate": "none"}),
    nn.Sigmoid: ("sigmoid", {}),
    nn.Tanh: ("tanh", {}),
    nn.SiLU: ("silu", {}),
    nn.Hardswish: ("hardswish", {}),
    nn.Hardsigmoid: ("hardsigmoid", {}),
    nn.Mish: ("mish", {}),
    nn.Identity: ("identity", {}),
}

#: ops whose two tensor arguments may be swapped
COMMUTATIVE = frozenset({"add", "mul"})

#: keyword arguments that only say how an op is computed, never what it computes
IN_PLACE_FLAGS = frozenset({"inplace"})


def module_family(module: nn.Module | None) -> str | None:
    """The family of a module that computes one elementwise function, else ``None``."""
    if module is None:
        return None
    entry = _MODULES.get(type(module))
    if entry is None:
        return None
    name, settings = entry
    if any(getattr(module, k, v) != v for k, v in settings.items()):
        return None
    return name


def submodule(gm: nn.Module | None, target: Any) -> nn.Module | None:
    """The submodule a ``call_module`` target names (``None`` when there is none)."""
    if gm is None or not isinstance(target, str):
        return None
    return submodule_at(gm, target)


def family(node: fx.Node, gm: nn.Module | None) -> str | None:
    """The op a node computes, spelling aside (``None`` for inputs, outputs, attributes and
    submodules that are not one elementwise function)."""
    if node.op == "call_function":
        return function_family(node.target)
    if node.op == "call_method":
        return method_family(str(node.target))
    if node.op == "call_module":
        return module_family(submodule(gm, node.target))
    return None


def argument(node: fx.Node, index: int, name: str = "", default: Any = None) -> Any:
    """An argument of a call, positional (``self`` of a method is 0) or by keyword."""
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(name, default) if name else default


def is_dropout(node: fx.Node, gm: nn.Module | None) -> bool:
    """A dropout: a ``Dropout`` module or a dropout call, whatever its mode."""
    if node.op == "call_module":
        return isinstance(submodule(gm, node.target), DropoutBase)
    return node.op == "call_function" and family(node, gm) in ("dropout", "aten.dropout")


def passes_through(node: fx.Node, gm: nn.Module | None) -> bool:
    """A dropout that hands its input on unchanged: a module in eval mode, or a call with
    ``training=False`` (``F.dropout``, ``torch.dropout``, ATen's) or ``p=0``.  (``F.dropout``
    without ``training=False`` drops in eval mode too.)"""
    if not is_dropout(node, gm):
        return False
    if node.op == "call_module":
        mod = submodule(gm, node.target)
        return not mod.training or getattr(mod, "p", None) == 0  # type: ignore[union-attr]
    training = argument(node, 2, "training", argument(node, 2, "train"))
    return training is False or argument(node, 1, "p") == 0


def strict_key(node: fx.Node, gm: nn.Module | None, module_by_type: bool) -> tuple[Any, ...]:
    """torch.fx's identity of a node's op: op and target, a submodule by its attribute name
    (``module_by_type``: by its class)."""
    if node.op == "call_module" and module_by_type:
        return ("call_module", type(submodule(gm, node.target)))
    if node.op in ("placeholder", "output", "get_attr"):
        return (node.op,)
    return (node.op, node.target)


def is_aten(target: Any) -> bool:
    return is_op_overload(target)


def dialect_of(graph: fx.Graph) -> str:
    """``export`` when the graph calls ATen ops (what ``torch.export`` gives), else ``fx``."""
    calls = [n.target for n in graph.nodes if n.op == "call_function"]
    aten = sum(1 for t in calls if is_aten(t))
    return "export" if calls and aten * 2 > len(calls) else "fx"


def spelled(node: fx.Node) -> str:
    """How a node spells its op, as a user writes it (``torch.relu``, ``x.relu()``,
    ``self.act``)."""
    if node.op == "call_function":
        t = node.target
        if is_aten(t):
            return f"torch.ops.{function_family(t)}"
        module = getattr(t, "__module__", "") or ""
        name = getattr(t, "__name__", str(t))
        if module in ("_operator", "operator"):
            return f"operator.{name}"
        if module.startswith("torch.nn.functional"):
            return f"F.{name}"
        if module.startswith("torch") or module == "":
            return f"torch.{name}"
        return f"{module}.{name}"
    if node.op == "call_method":
        return f"x.{node.target}()"
    if node.op == "call_module":
        return f"self.{node.target}"
    return node.op


def schema_arguments(op: Any, args: Any, kwargs: dict[str, Any]) -> list[tuple[str, Any]] | None:
    """Every argument of an ATen call, by its schema, in order: those passed by position or
    by keyword, the others at their defaults; ``None`` when the call does not fit the schema.
    Values are written one way: a tuple is a list, and a number given for a fixed-size list
    (``int[2] padding``) is that list -- the dispatcher reads ``2`` as ``[2, 2]``.  Two calls
    of one op compute the same exactly when these are the same.

    >>> import torch
    >>> mp = torch.ops.aten.max_pool2d_with_indices.default
    >>> schema_arguments(mp, ("x", [2, 2]), {"stride": (2, 2)})[1:]
    [('kernel_size', [2, 2]), ('stride', [2, 2]), ('padding', [0, 0]), ('dilation', [1, 1]), \
('ceil_mode', False)]
    """
    schema = _schema(op)
    if len(args) > len(schema) or any(k not in _names(op) for k in kwargs):
        return None
    out = []
    for i, (name, kwarg_only, has_default, default, size) in enumerate(schema):
        if name in kwargs:
            value = kwargs[name]
        elif not kwarg_only and i < len(args):
            value = args[i]
        elif has_default:
            value = default
        else:
            return None  # a required argument missing
        out.append((name, _one_way(value, size)))
    return out


def _one_way(value: Any, size: int | None) -> Any:
    if isinstance(value, (list, tuple)):  # (fx's immutable_list too)
        return [_one_way(v, None) for v in value]
    if size and type(value) in (int, float, bool):
        return [value] * size
    return value


_SCHEMAS: dict[Any, list[tuple[str, bool, bool, Any, int | None]]] = {}
_NAMES: dict[Any, frozenset[str]] = {}


def _schema(op: Any) -> list[tuple[str, bool, bool, Any, int | None]]:
    """An overload's arguments as (name, keyword only, has a default, default, fixed list
    size), read once per overload."""
    known = _SCHEMAS.get(op)
    if known is None:
        known = []
        for a in op_schema_arguments(op):
            size = getattr(a, "N", None)
            has = a.has_default_value()
            default = _one_way(a.default_value, size) if has else None
            known.append((a.name, a.kwarg_only, has, default, size))
        _SCHEMAS[op] = known
        _NAMES[op] = frozenset(name for name, *_ in known)
    return known


def _names(op: Any) -> frozenset[str]:
    _schema(op)
    return _NAMES[op]


def schema_defaults(op: Any) -> dict[str, Any]:
    """An overload's arguments that have defaults, with them (written as
    :func:`schema_arguments` writes values)."""
    return {name: default for name, _, has, default, _ in _schema(op) if has}
