"""Making recorded work again: the edits (each kind as its registry entry says,
:data:`~fxstudio.core.edits.EDIT_KINDS`), console statements and rewrites a session holds,
replayed on a freshly captured model.

A session (:mod:`fxstudio.core.saving.sessionfile`) stores what the user did as records, not the
graph itself; reopening it (:mod:`fxstudio.core.saving.sessions`) captures the model again and
replays them.  The edits made again are real :class:`~fxstudio.core.edits.engine.Edit`
objects, so the restored work can be undone as it was made.

Example:
    >>> from fxstudio.core.model.opening import open_model
    >>> from fxstudio.core.edits import set_target
    >>> doc = open_model("examples:negrelu")
    >>> _ = set_target(doc, "relu", "torch.tanh")
    >>> again = open_model("examples:negrelu")
    >>> [edit.label for edit in replay(again, doc.history)]
    ['Change relu to torch.tanh']
    >>> again.code() == doc.code()
    True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fxstudio.core.console import replay_console
from fxstudio.core.edits import EDIT_KINDS
from fxstudio.core.edits.engine import Edit
from fxstudio.core.errors import EditError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.patterns.apply import replay_rewrite

__all__ = ["replay"]


def replay(doc: GraphDocument, records: Iterable[dict[str, Any]]) -> list[Edit]:
    """Apply recorded edits again, in order; returns the edits made (raises
    :class:`EditError` at one that fails)."""
    made: list[Edit] = []
    for rec in records:
        kind = str(rec.get("edit"))
        if kind in EDIT_KINDS:
            done: Any = EDIT_KINDS[kind].make_again(doc, rec)
        elif kind in NOT_EDITS:
            done = NOT_EDITS[kind](doc, rec)  # an Edit, a list of them (console) or None
        else:
            raise EditError(f"Unknown edit '{rec.get('edit')}' in the session.")
        made.extend(e for e in (done if isinstance(done, list) else [done]) if isinstance(e, Edit))
    return made


#: Records of work that is not one of the edits (:data:`~fxstudio.core.edits.EDIT_KINDS`):
#: how each is made again.
NOT_EDITS: dict[str, Callable[[GraphDocument, dict[str, Any]], Any]] = {
    "rewrite": replay_rewrite,
    "console": replay_console,
}
