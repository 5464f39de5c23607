"""Making recorded work again: the edits, console statements and rewrites a session holds,
replayed on the freshly captured model, and the view the user saw put back.

A session (:mod:`fxstudio.core.sessionfile`) stores what the user did as records, not the
graph itself; opening it (:func:`fxstudio.core.opening.open_document`) captures the model
again and calls :func:`restore`.  A record that no longer applies (the model file changed)
stops the replay there, and the document's notes say so.  The edits made again are real
:class:`~fxstudio.core.edits.engine.Edit` objects (``doc.replayed``): the window puts them
on its undo stack, so the restored work can be undone as it was made.

Example:
    >>> from fxstudio.core.sessions import open_document
    >>> from fxstudio.core.edits import set_target
    >>> doc = open_document("examples:negrelu")
    >>> _ = set_target(doc, "relu", "torch.tanh")
    >>> again = open_document("examples:negrelu")
    >>> [edit.label for edit in replay(again, doc.history)]
    ['Change relu to torch.tanh']
    >>> again.code() == doc.code()
    True
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from fxstudio.core.console import replay_console
from fxstudio.core.document import GraphDocument
from fxstudio.core.edits.engine import Edit
from fxstudio.core.edits.steps import EditError
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
from fxstudio.core.patterns.apply import replay_rewrite

__all__ = ["replay"]


def replay(doc: GraphDocument, records: Iterable[dict[str, Any]]) -> list[Edit]:
    """Apply recorded edits again, in order; returns the edits made (raises
    :class:`EditError` at one that fails)."""
    made: list[Edit] = []
    for rec in records:
        kind = rec.get("edit")
        fn = REPLAYS.get(str(kind))
        if fn is None:
            raise EditError(f"Unknown edit '{kind}' in the session.")
        done = fn(doc, rec)  # an Edit, a list of them (a console statement) or None
        made.extend(e for e in (done if isinstance(done, list) else [done]) if isinstance(e, Edit))
    return made


#: How each kind of record is made again.
REPLAYS: dict[str, Callable[[GraphDocument, dict[str, Any]], Any]] = {
    "rename": lambda d, r: rename(d, r["name"], r["new"]),
    "set_target": lambda d, r: set_target(d, r["name"], r["target"]),
    "set_inputs": lambda d, r: set_inputs(d, r["name"], r["args"], r["kwargs"]),
    "insert": lambda d, r: insert(
        d, r["op"], r["target"], r["args"], r["kwargs"], r["after"], r["name"]
    ),
    "insert_module": lambda d, r: insert_module(
        d, r["constructor"], r["args"], r["after"], r["name"], r["seed"]
    ),
    "splice": lambda d, r: splice(
        d, r["producer"], r["user"], r["op"], r["target"], r["extra"], r.get("kwargs")
    ),
    "delete": lambda d, r: delete(d, r["names"]),
    "move_input": lambda d, r: move_input(d, r["name"], r["position"]),
    "rewire": lambda d, r: rewire(d, r["user"], r["label"], r["source"]),
    "paste": lambda d, r: paste(d, r["names"]),
    "add_input": lambda d, r: add_input(
        d, r["name"], r.get("type"), r.get("default", inspect.Signature.empty)
    ),
    "set_outputs": lambda d, r: set_outputs(d, r["names"]),
    "rewrite": replay_rewrite,
    "console": replay_console,
}
