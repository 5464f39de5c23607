"""A callable's signature, read once: Python's where there is one, else what torch lists for
its builtins (their schemas, one per overload, or the one signature torch's tests use).

Example:
    >>> import torch
    >>> signature(torch.nn.functional.relu)
    <Signature (input: torch.Tensor, inplace: bool = False) -> torch.Tensor>
    >>> builtin_signature(torch.sigmoid)
    <Signature (input, out=None)>
    >>> len(schemas(torch.max)) > 1
    True
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

import torch
from torch.fx.operator_schemas import get_signature_for_torch_op


@functools.cache
def _schemas(fn: Any) -> tuple[inspect.Signature, ...]:
    try:
        return tuple(get_signature_for_torch_op(fn) or ())
    except Exception:  # noqa: BLE001 - not a torch op: no schema to hold it to
        return ()


def schemas(fn: Any) -> tuple[inspect.Signature, ...]:
    """torch's schemas of a builtin as signatures, one per overload (none for others)."""
    try:
        return _schemas(fn)
    except TypeError:  # unhashable
        return ()


_SIGNATURES: dict[Any, inspect.Signature | None] = {}


def signature(fn: Any) -> inspect.Signature | None:
    """``inspect.signature``, once per function (a rewrite checks thousands of calls); a
    bound method (a submodule's forward) is read each time."""
    if inspect.ismethod(fn):
        try:
            return inspect.signature(fn)
        except (TypeError, ValueError):
            return None
    try:
        if fn in _SIGNATURES:
            return _SIGNATURES[fn]
    except TypeError:  # unhashable
        pass
    try:
        sig: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    try:
        _SIGNATURES[fn] = sig
    except TypeError:
        pass
    return sig


@functools.cache
def _testing_overrides() -> dict[Any, Any]:
    """torch's list of its builtins' signatures (building it costs a millisecond: once)."""
    return torch.overrides.get_testing_overrides()


def builtin_signature(fn: Any) -> inspect.Signature | None:
    """The one signature torch lists for a builtin without one (``torch.sigmoid``), if any;
    its overloads (``torch.max(x)``, ``torch.max(x, 1)``) are not in it."""
    try:
        override = _testing_overrides().get(fn)
    except TypeError:  # unhashable
        return None
    return signature(override) if override is not None else None
