"""What a report shows of a session, gathered as JSON: the rewrite history with each check
(:func:`history`: the session's edits made again on the model captured afresh, each rewrite
checked numerically against the graph before it, as the window checked it), a compare
(:func:`compare_data`: a :class:`~fxstudio.core.flows.DiffResult` with its titles, its first
divergence in words and whether the graphs differ in structure), and the page's title lines
(:func:`heading`).  The profile, the memory estimate and the compiled kernels go in as their
results' own ``to_json()``.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
    >>> doc = open_document("examples:negrelu")
    >>> _ = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="negrelu")))
    >>> [(h["label"], h["check"]["intended"]) for h in history(doc)]  # meant to change values
    [('negrelu (1 match)', True)]
"""

from __future__ import annotations

from typing import Any

from fxstudio.core.edits.records import encode_record
from fxstudio.core.errors import EditError, UserError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.model.opening import open_model
from fxstudio.core.patterns.apply import NO_VALUES
from fxstudio.core.patterns.builtins import builtin_for
from fxstudio.core.patterns.check import check, reference
from fxstudio.core.results import Json
from fxstudio.core.sessions.replay import replay

__all__ = ["compare_data", "heading", "history", "structural_changes"]


def history(doc: GraphDocument) -> list[dict[str, Any]]:
    """``doc``'s edits in the order made -- each ``{"edit", "label", "record"}`` and, for a
    rewrite, ``"check"`` (the check's JSON, ``"text"`` in words, ``"intended"``: a rewrite
    meant to change the values) or ``"unchecked"`` (why not).  The model is captured again and
    the edits made again one by one, each rewrite checked against the graph just before it;
    an edit that cannot be made again ends the list with a ``"note"`` saying so."""
    if not doc.history:
        return []
    fresh = open_model(doc.request)
    runnable = bool(fresh.example_inputs) and fresh.weights
    out: list[dict[str, Any]] = []
    for i, record in enumerate(doc.history, 1):
        kind = str(record.get("edit", "?"))
        entry: dict[str, Any] = {"edit": kind, "label": kind, "record": encode_record(record)}
        before = reference(fresh) if kind == "rewrite" and runnable else None
        try:
            made = replay(fresh, [record])
        except (EditError, UserError, KeyError, TypeError) as exc:
            entry["note"] = (
                f"edit {i} of {len(doc.history)} could not be made again ({exc}); the checks "
                "stop here"
            )
            out.append(entry)
            break
        entry["label"] = "; ".join(e.label for e in made) or kind
        if kind == "rewrite":
            if before is None:
                entry["unchecked"] = NO_VALUES if not fresh.weights else "no example inputs"
            else:
                exact, intended = _kind_of(fresh, record)
                result = check(fresh, before, exact)
                entry["check"] = {
                    **result.to_json(),
                    "text": result.describe(intended),
                    "intended": intended,
                }
        out.append(entry)
    return out


def _kind_of(doc: GraphDocument, record: Json) -> tuple[bool, bool]:
    """(exact, meant to change the values) of a recorded rewrite: a built-in says; a user's
    pattern is judged as a fold, as the Patterns dock judged it."""
    name = record.get("builtin")
    if not name:
        return False, bool(record.get("allow_difference", False))
    try:
        builtin = builtin_for(doc, str(name))
    except UserError:
        return False, False
    return builtin.exact, builtin.changes_values


def structural_changes(data: dict[str, Any]) -> int:
    """How many nodes a compare's JSON finds removed, added or changed (0: the same graph)."""
    changed = sum(1 for p in data.get("pairs", []) if p.get("status") == "changed")
    return len(data.get("removed", [])) + len(data.get("added", [])) + changed


def compare_data(result: Any) -> dict[str, Any]:
    """A :class:`~fxstudio.core.flows.DiffResult` as the report's compare: its JSON with the
    titles, the first divergence in words, why the values were not compared (when so) and
    ``structural`` (how many nodes differ in structure)."""
    data = result.to_json()
    data["titles"] = list(result.titles)
    values = result.values
    if values is not None and values.first_difference is not None:
        data["first_note"] = values.describe()
    if result.values_problem is not None:
        data["values_problem"] = str(result.values_problem)
    data["structural"] = structural_changes(data)
    data["describe"] = result.describe()
    return data


def heading(doc: GraphDocument, title: str = "") -> tuple[str, list[str]]:
    """The page's title and the lines under it: what the model is and how it was captured."""
    req = doc.request
    title = title or req.spec or "model"
    lines = [
        f"{len(doc)} nodes, captured with {req.frontend}"
        + (f" on {', '.join(req.inputs)}" if req.inputs else "")
        + ("" if req.weights else " (structure only, no weights)")
    ]
    lines += list(doc.notes)
    return title, lines
