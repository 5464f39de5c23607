"""What a document is compared with, besides another model: the same model as it was before
its last rewrite (captured again, the edits before that rewrite replayed).

Example:
    >>> from fxstudio.core.saving.sessions import open_document
    >>> from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
    >>> doc = open_document("examples:resnet")
    >>> _ = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    >>> "layer1_0_bn1" in before_last_rewrite(doc), "layer1_0_bn1" in doc
    (True, False)
"""

from __future__ import annotations

from fxstudio.core.errors import UserError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.model.opening import open_model
from fxstudio.core.saving.replay import replay


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
