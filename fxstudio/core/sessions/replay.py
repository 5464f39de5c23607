"""Making recorded work again: the edits (each kind as its registry entry says,
:data:`~fxstudio.core.edits.EDIT_KINDS`), console statements and rewrites a session holds,
replayed on a freshly captured model.  A rewrite is read back here from its record (a
built-in's name, or its pattern and replacement as code); a console statement is run again by
:func:`fxstudio.core.console.replay_console`.

A session (:mod:`fxstudio.core.sessions.sessionfile`) stores what the user did as records, not the
graph itself; reopening it (:mod:`fxstudio.core.sessions.documents`) captures the model again and
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
from fxstudio.core.patterns.builtins import run_builtin
from fxstudio.core.patterns.making import compile_function, from_function
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.pattern import Rules
from fxstudio.core.patterns.replace import rewrite
from fxstudio.core.patterns.replacements import function_replacement
from fxstudio.core.results import Json

__all__ = ["replay", "replay_rewrite"]


def replay(doc: GraphDocument, records: Iterable[Json]) -> list[Edit]:
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


def replay_rewrite(doc: GraphDocument, record: Json) -> Edit | None:
    """Apply a recorded rewrite again (opening a session); returns its edit."""
    if record.get("builtin"):
        return run_builtin(doc, record["builtin"]).edit
    pat = record.get("pattern") or {}
    rep = record.get("replacement") or {}
    if not rep.get("code"):
        raise EditError(
            "The session has a rewrite whose replacement was not given as code; it cannot "
            "be replayed."
        )
    fn, source = compile_function(pat["code"], None)
    rules = Rules.from_json(pat.get("rules", {}))
    pattern = from_function(
        fn, pat.get("name"), pat.get("dialect", "fx"), rules=rules, source=source
    )
    pattern.node_rules = {k: Rules.from_json(v) for k, v in pat.get("node_rules", {}).items()}
    repl_fn, repl_source = compile_function(rep["code"], rep.get("name"))
    accepted = None
    if record.get("accepted") is not None:
        anchors = set(record["accepted"])
        found = Matcher(pattern).find(doc.graph_module)
        accepted = {m.index for m in found.matches if m.anchor in anchors}
    replacement = function_replacement(repl_fn, rep.get("name"), repl_source)
    result = rewrite(doc, pattern, replacement, accepted)
    if result.edit is None:
        raise EditError(f"The recorded rewrite {pattern.name} no longer matches anything.")
    return result.edit


#: Records of work that is not one of the edits (:data:`~fxstudio.core.edits.EDIT_KINDS`):
#: how each is made again.
NOT_EDITS: dict[str, Callable[[GraphDocument, dict[str, Any]], Any]] = {
    "rewrite": replay_rewrite,
    "console": replay_console,
}
