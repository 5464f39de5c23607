"""The constructor call that rebuilds a ``torch.nn`` module: ``nn.Linear(16, 32)``,
``nn.Conv2d(3, 8, 3, padding=1, bias=False)``.  A standalone module builds its submodules
with these (:mod:`fxstudio.core.saving.codegen`), and the inspector shows them.

The expression is checked, not guessed: built (on the meta device) it must give the same
``repr`` and the same tensor names, shapes and dtypes as the module.

Example:
    >>> from torch import nn
    >>> constructor_expr(nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False))
    'nn.Conv2d(3, 8, 3, padding=1, bias=False)'
    >>> constructor_expr(nn.Sequential()) is None
    True
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

__all__ = ["constructor_expr"]

_SKIP_PARAMS = {"self", "device", "dtype"}

#: Constructor arguments a module does not keep under their own name.
_DERIVED: dict[str, dict[str, Callable[[nn.Module], Any]]] = {
    "MultiheadAttention": {
        "bias": lambda m: m.in_proj_bias is not None,
        "add_bias_kv": lambda m: m.bias_k is not None,
    },
}


def constructor_expr(m: nn.Module) -> str | None:
    """``nn.Linear(16, 32)`` for a ``torch.nn`` module we can rebuild exactly, else ``None``.

    The expression is checked: building it must give the same ``repr`` and the same tensor
    names, shapes and dtypes as ``m``.
    """
    cls = type(m)
    if (
        not cls.__module__.startswith("torch.nn.modules")
        or getattr(nn, cls.__name__, None) is not cls
    ):
        return None
    if isinstance(m, (nn.Sequential, nn.ModuleList, nn.ModuleDict)):
        return None
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return None
    for compact in (True, False):
        expr = _constructor_call(m, sig, compact)
        if expr is not None and _rebuilds(expr, m):
            return expr
    return None


def _constructor_call(m: nn.Module, sig: inspect.Signature, compact: bool) -> str | None:
    """The call with the module's current settings; ``compact`` writes ``(3, 3)`` as ``3``."""
    cls = type(m)
    positional: list[str] = []
    keywords: list[str] = []
    derived = _DERIVED.get(cls.__name__, {})
    for p in sig.parameters.values():
        if p.name in _SKIP_PARAMS or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in derived:
            value: Any = derived[p.name](m)
        elif p.name == "bias" and isinstance(p.default, bool):
            value = getattr(m, "bias", None) is not None
        elif hasattr(m, p.name) and not p.name.startswith("_"):
            value = getattr(m, p.name)
        elif p.default is not p.empty:
            continue
        else:
            return None
        if not _is_literal(value):
            return None
        if compact and isinstance(value, tuple) and value and len(set(value)) == 1:
            if isinstance(value[0], int) and not isinstance(value[0], bool):
                value = value[0]
        if p.default is p.empty:
            positional.append(_literal(value))
        elif not _same(value, p.default):
            keywords.append(f"{p.name}={_literal(value)}")
    expr = f"nn.{cls.__name__}({', '.join(positional + keywords)})"
    dtypes = {t.dtype for t in _all_tensors(m)}
    if len(dtypes) == 1 and "dtype" in sig.parameters:
        (dtype,) = dtypes
        if dtype != torch.get_default_dtype() and dtype.is_floating_point:
            expr = expr[:-1] + (", " if positional or keywords else "") + f"dtype={dtype})"
    return expr


def _rebuilds(expr: str, m: nn.Module) -> bool:
    try:
        with torch.device("meta"):
            built = eval(expr, {"nn": nn, "torch": torch, "inf": math.inf, "nan": math.nan})
    except Exception:
        return False
    if repr(built) != repr(m):
        return False

    def layout(mod: nn.Module) -> list[tuple[str, tuple[int, ...], torch.dtype, bool]]:
        items = [
            (n, tuple(t.shape), t.dtype, isinstance(t, nn.Parameter))
            for n, t in [
                *mod.named_parameters(remove_duplicate=False),
                *mod.named_buffers(remove_duplicate=False),
            ]
        ]
        return sorted(items, key=lambda x: x[0])

    return layout(built) == layout(m)


def _all_tensors(m: nn.Module) -> list[torch.Tensor]:
    return [*m.parameters(), *m.buffers()]


def _is_literal(v: Any) -> bool:
    if v is None or isinstance(v, (bool, int, str, torch.dtype)):
        return True
    if isinstance(v, float):
        return True
    if isinstance(v, (tuple, list)):
        return all(_is_literal(x) for x in v)
    return False


def _literal(v: Any) -> str:
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if math.isnan(v):
            return "nan"
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, tuple):
        inner = ", ".join(_literal(x) for x in v)
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    if isinstance(v, list):
        return "[" + ", ".join(_literal(x) for x in v) + "]"
    return repr(v)


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False
