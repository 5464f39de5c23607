"""The family of a called function or method, whatever its spelling: ``torch.relu``,
``F.relu_`` and ``x.relu()`` are one op, ``operator.add`` and ``torch.add`` another
(:mod:`fxstudio.core.patterns.ops` adds modules and whole nodes).

Example:
    >>> import torch, torch.nn.functional as F
    >>> function_family(torch.relu), function_family(F.relu_), method_family("relu_")
    ('relu', 'relu', 'relu')
    >>> function_family(torch.ops.aten.relu.default)  # another dialect: not the same op
    'aten.relu'
"""

from __future__ import annotations

import operator
from typing import Any

from fxstudio.core.fxcompat import is_op_overload, op_name

# operator.<name> -> the family of the op it spells
_OPERATORS = {
    "add": "add",
    "iadd": "add",
    "sub": "sub",
    "isub": "sub",
    "mul": "mul",
    "imul": "mul",
    "truediv": "div",
    "itruediv": "div",
    "floordiv": "floor_divide",
    "matmul": "matmul",
    "imatmul": "matmul",
    "neg": "neg",
    "pow": "pow",
    "getitem": "getitem",
}
_ALIASES = {"true_divide": "div", "divide": "div", "multiply": "mul", "subtract": "sub"}


def function_family(target: Any) -> str:
    """The family of a ``call_function`` target (its name when no alias is known)."""
    if is_op_overload(target):
        return op_name(target)
    name = getattr(target, "__name__", str(target))
    module = getattr(target, "__module__", "") or ""
    if module in ("_operator", "operator") or getattr(operator, name, None) is target:
        return _OPERATORS.get(name, name)
    if not module.startswith("torch"):  # the user's own function: its own op
        return f"{module}.{getattr(target, '__qualname__', name)}"
    bare = name.rstrip("_") or name
    return _ALIASES.get(bare, bare)


def method_family(name: str) -> str:
    """The family of a ``call_method`` target: ``relu_`` and ``relu`` are one op."""
    if name.startswith("__") and name.endswith("__"):  # x.__add__(y)
        bare = name[2:-2]
        return _OPERATORS.get(bare, bare)
    bare = name.rstrip("_")
    return _ALIASES.get(bare, bare)
