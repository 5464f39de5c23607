"""Recorded edits: replaying them (sessions) and writing them as JSON."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

import torch

from fxstudio.core.document import GraphDocument
from fxstudio.core.edits.steps import EditError, Ref
from fxstudio.core.edits.user import (
    add_input,
    delete,
    insert,
    insert_module,
    move_input,
    paste,
    rename,
    rewire,
    set_inputs,
    set_outputs,
    set_target,
    splice,
)

# --- replay (sessions) ---------------------------------------------------------------------------


def replay(doc: GraphDocument, records: Iterable[dict[str, Any]]) -> None:
    """Apply recorded edits again (opening a session)."""
    for rec in records:
        kind = rec.get("edit")
        fn = _REPLAY.get(str(kind))
        if fn is None:
            raise EditError(f"Unknown edit '{kind}' in the session.")
        fn(doc, rec)


_REPLAY: dict[str, Callable[[GraphDocument, dict[str, Any]], Any]] = {
    "rename": lambda d, r: rename(d, r["name"], r["new"]),
    "set_target": lambda d, r: set_target(d, r["name"], r["target"]),
    "set_inputs": lambda d, r: set_inputs(d, r["name"], r["args"], r["kwargs"]),
    "insert": lambda d, r: insert(
        d, r["op"], r["target"], r["args"], r["kwargs"], r["after"], r["name"]
    ),
    "insert_module": lambda d, r: insert_module(
        d, r["constructor"], r["args"], r["after"], r["name"], r["seed"]
    ),
    "splice": lambda d, r: splice(d, r["producer"], r["user"], r["op"], r["target"], r["extra"]),
    "delete": lambda d, r: delete(d, r["names"]),
    "move_input": lambda d, r: move_input(d, r["name"], r["position"]),
    "rewire": lambda d, r: rewire(d, r["user"], r["label"], r["source"]),
    "paste": lambda d, r: paste(d, r["names"]),
    "add_input": lambda d, r: add_input(
        d, r["name"], r.get("type"), r.get("default", inspect.Signature.empty)
    ),
    "set_outputs": lambda d, r: set_outputs(d, r["names"]),
    "rewrite": lambda d, r: _replay_rewrite(d, r),
    "console": lambda d, r: _replay_console(d, r),
}


def _replay_console(doc: GraphDocument, record: dict[str, Any]) -> None:
    from fxstudio.core.console import replay_console  # the console uses edits

    replay_console(doc, record)


def _replay_rewrite(doc: GraphDocument, record: dict[str, Any]) -> None:
    from fxstudio.core.patterns.apply import replay as replay_rewrite  # patterns use edits

    replay_rewrite(doc, record)


def encode_record(record: dict[str, Any]) -> dict[str, Any]:
    return {k: encode(v) for k, v in record.items()}


def decode_record(record: dict[str, Any]) -> dict[str, Any]:
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
