"""Recorded edits written as JSON and read back (:mod:`fxstudio.core.sessions.replay` makes them
again)."""

from __future__ import annotations

from typing import Any

import torch

from fxstudio.core.edits.steps import Ref
from fxstudio.core.errors import EditError
from fxstudio.core.results import Json


def encode_record(record: Json) -> dict[str, Any]:
    return {k: encode(v) for k, v in record.items()}


def decode_record(record: Json) -> dict[str, Any]:
    return {k: decode(v) for k, v in record.items()}


def encode(value: Any) -> Any:
    """A recorded edit as JSON (tuples, refs and dtypes kept apart from lists and strings)."""
    if isinstance(value, Ref):
        return {"ref": value.name}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {k: encode(v) for k, v in value.items()}}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, (torch.memory_format, torch.layout)):
        return {"torch": str(value).removeprefix("torch.")}
    if isinstance(value, slice):
        return {"slice": [encode(value.start), encode(value.stop), encode(value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise EditError(f"A value of type {type(value).__name__} cannot be saved in a session.")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "ref" in value:
            return Ref(value["ref"])
        if "tuple" in value:
            return tuple(decode(v) for v in value["tuple"])
        if "dict" in value:
            return {k: decode(v) for k, v in value["dict"].items()}
        if "dtype" in value:
            return getattr(torch, value["dtype"])
        if "torch" in value:
            return getattr(torch, value["torch"])
        if "slice" in value:
            return slice(*(decode(v) for v in value["slice"]))
        if "ellipsis" in value:
            return Ellipsis
    return value
