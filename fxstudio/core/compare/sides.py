"""What a document is compared with, besides another model: the same model as it was before
its last rewrite (captured again, the edits before that rewrite replayed); and which of two
is "before" (:func:`ordered`: an earlier version of the other -- the model it was captured
from, the session it was reopened from -- goes on the left).

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
    >>> doc = open_document("examples:resnet")
    >>> _ = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    >>> "layer1_0_bn1" in before_last_rewrite(doc), "layer1_0_bn1" in doc
    (True, False)
    >>> fresh = open_document("examples:resnet")
    >>> ordered(doc, fresh) == (fresh, doc)  # the model as captured is the rewrite's "before"
    True
"""

from __future__ import annotations

from fxstudio.core.edits.records import encode_record
from fxstudio.core.errors import EditError, UserError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.model.opening import open_model
from fxstudio.core.sessions.replay import replay


def last_rewrite(doc: GraphDocument) -> int | None:
    """The index in ``doc.history`` of the last rewrite, if one was made."""
    rewrites = [i for i, r in enumerate(doc.history) if r.get("edit") == "rewrite"]
    return rewrites[-1] if rewrites else None


def before_last_rewrite(doc: GraphDocument) -> GraphDocument:
    """The model captured again with the edits made before its last rewrite."""
    last = last_rewrite(doc)
    if last is None:
        raise UserError("The graph has not been rewritten: there is no 'before' to compare with.")
    before = open_model(doc.request)
    replay(before, doc.history[:last])
    return before


def earlier_version(doc: GraphDocument, of: GraphDocument) -> bool:
    """Whether ``doc`` is an earlier version of ``of``: the same model captured the same way
    (spec and frontend), its edits the first of ``of``'s, which has more."""
    if (doc.request.spec, doc.request.frontend) != (of.request.spec, of.request.frontend):
        return False
    if len(doc.history) >= len(of.history):
        return False
    try:
        return all(
            encode_record(a) == encode_record(b)
            for a, b in zip(doc.history, of.history, strict=False)
        )
    except EditError:  # (a record that cannot be written as JSON: not comparable)
        return False


def ordered(now: GraphDocument, chosen: GraphDocument) -> tuple[GraphDocument, GraphDocument]:
    """The document now and one chosen to compare it with, as (before, after): the chosen one
    first when it is an earlier version of the document now (the model the document was
    captured from, the session it was reopened from: its edits since -- a rewrite's removed
    BatchNorms -- then read as removed, not added), else the document now first."""
    return (chosen, now) if earlier_version(chosen, now) else (now, chosen)
