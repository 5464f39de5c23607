"""Reopening a saved session -- its model captured again (:mod:`fxstudio.core.model.opening`), its
recorded edits made again (:mod:`fxstudio.core.sessions.replay`), its view put back -- and the one
door for what a user names: a session file or a model.

A record that no longer applies (the model file changed) stops the replay there, and the
document's notes say so.  The edits made again are real
:class:`~fxstudio.core.edits.engine.Edit` objects (``doc.replayed``): the window puts them
on its undo stack, so the restored work can be undone as it was made.

Example:
    >>> import tempfile, pathlib
    >>> from fxstudio.core.edits import set_target
    >>> from fxstudio.core.sessions.sessionfile import save_session
    >>> doc = open_document("examples:negrelu")
    >>> _ = set_target(doc, "relu", "torch.tanh")
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.fxstudio"
    >>> save_session(doc, path)
    >>> again = open_document(str(path))
    >>> [edit.label for edit in again.replayed], again.code() == doc.code()
    (['Change relu to torch.tanh'], True)
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from fxstudio.core.edits.records import decode_record
from fxstudio.core.errors import EditError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.model.opening import as_request, open_model
from fxstudio.core.sessions.replay import replay
from fxstudio.core.sessions.sessionfile import SessionData, read_session

__all__ = ["open_document", "open_session", "restore"]


def open_document(request: OpenRequest | str, inputs: Sequence[str] = ()) -> GraphDocument:
    """Load, capture and wrap a model, or reopen a ``.fxstudio`` session.

    Raises :class:`~fxstudio.core.errors.UserError` for bad input.

    >>> doc = open_document("examples:negrelu")
    >>> [r.name for r in doc.rows()]
    ['x', 'y', 'z', 'neg', 'relu', 'add', 'mul', 'output']
    """
    req = as_request(request, inputs)
    if req.is_session:
        return open_session(req.spec)
    return open_model(req)


def open_session(path: str | os.PathLike[str]) -> GraphDocument:
    """Capture a session's model again, replay its edits and restore what the user saw."""
    data = read_session(path)
    return restore(open_model(data.request), data)


def restore(doc: GraphDocument, data: SessionData) -> GraphDocument:
    """Replay a session's edits on ``doc`` (its model, captured again) and restore the view;
    an edit that no longer applies stops the replay, and ``doc.notes`` says which.  The
    edits made again are ``doc.replayed``, in order."""
    for i, record in enumerate(data.edits, 1):
        try:
            doc.replayed.extend(replay(doc, [decode_record(record)]))
        except (EditError, KeyError, TypeError) as exc:
            doc.notes.append(
                f"Edit {i} of {len(data.edits)} ({record.get('edit', '?')}) could not be made "
                f"again ({exc}); the graph shows the edits before it."
            )
            break
    if data.code and doc.code() != data.code:
        doc.notes.append(
            "The model's code changed since this session was saved; its graph is the new one."
        )
    doc.restore_view(data.positions, data.collapsed, data.pattern_boxes)
    doc.session_extra = dict(data.extra)  # e.g. the lesson's state
    return doc
