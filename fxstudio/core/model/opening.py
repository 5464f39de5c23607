"""Open a model into a document in one call -- load, capture, wrap (used by the CLI, the
window and :mod:`fxstudio.core.sessions.documents`, which reopens a saved session on top of it).

Example:
    >>> doc = open_model("examples:negrelu")
    >>> [r.name for r in doc.rows()]
    ['x', 'y', 'z', 'neg', 'relu', 'add', 'mul', 'output']
    >>> doc.request.frontend
    'fx'
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import replace

from fxstudio.core.errors import CaptureError, LoadError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.request import Frontend, OpenRequest
from fxstudio.core.model.capture import CaptureOptions, capture
from fxstudio.core.model.loading import LoadedModel, load_model
from fxstudio.core.process import collector, modelcode, progress
from fxstudio.core.process.guard import special_failure


def as_request(request: OpenRequest | str, inputs: Sequence[str] = ()) -> OpenRequest:
    """A request as given, or one for a spec (and its ``inputs``) with the defaults."""
    if isinstance(request, OpenRequest):
        return request
    return OpenRequest(request, inputs=tuple(inputs))


def open_model(request: OpenRequest | str, inputs: Sequence[str] = ()) -> GraphDocument:
    """Load, capture and wrap the model a request names (a session file is
    :func:`fxstudio.core.sessions.documents.open_document`'s).

    Raises :class:`~fxstudio.core.errors.UserError` for bad input."""
    req = as_request(request, inputs)
    if req.is_session:
        raise LoadError(f"{req.spec} is a session file, not a model: open it as a session.")
    try:
        return _open_model(req)
    except BaseException as exc:  # what no stage worded: sys.exit, Ctrl+C, out of memory
        special = special_failure(f"Opening {req.spec}", exc)
        if special is None or special is exc:
            raise
        raise special from exc


def _open_model(req: OpenRequest) -> GraphDocument:
    # one thread at a time; Cancel stops it; sized and watched, not bound (modelcode); not
    # swept again and again as it grows (collector.batched)
    with collector.batched(), modelcode.one_turn(bound=False), modelcode.stoppable():
        return _load_and_capture(req)


def _load_and_capture(req: OpenRequest) -> GraphDocument:
    progress.tell(f"Loading {req.spec}")
    return capture_loaded(req, load_model(req.spec, req.inputs, req.seed, req.weights))


def capture_loaded(req: OpenRequest, loaded: LoadedModel) -> GraphDocument:
    """Capture and wrap a model already loaded from the request (``load_model`` of its spec,
    inputs and seed): for a caller that ran the eager model first (Dynamo's explain).
    Raises :class:`~fxstudio.core.errors.CaptureError` as an open does."""
    # the capture patches nn.Module.__call__ (core.process.modelcode); sized, not bound
    with modelcode.one_turn(bound=False):
        frontend: Frontend = req.chosen_frontend or loaded.frontend or "fx"
        options = CaptureOptions(frontend, req.leaf_modules, train=req.train)
        try:
            cap = capture(loaded, options)
        except CaptureError as exc:
            if frontend == "fx" and exc.tracing and loaded.example_inputs and not req.leaf_modules:
                _offer_export(req, exc)
            raise
        cap.notes[:0] = loaded.notes
        progress.tell("Indexing the graph")
        opened = replace(req, frontend=cap.frontend)  # the frontend used, never "auto"
        doc = GraphDocument(
            cap.graph_module, opened, cap.example_inputs, cap.notes, loaded.source_file
        )
        doc.checkpoint = loaded.checkpoint
        return doc


def _offer_export(req: OpenRequest, exc: CaptureError) -> None:
    """Symbolic tracing failed: when the export frontend captures the model, say so on the
    error (``exc.alternative``, the request that works) and in its message, with the command."""
    alternative = replace(req, frontend="export")
    progress.tell("Tracing failed: trying the export frontend")
    try:
        _open_model(alternative)
    except Exception:  # noqa: BLE001 - export fails too: no offer (sys.exit, Ctrl+C go on up)
        return
    exc.alternative = alternative
    inputs = "".join(f" --input {i}" for i in req.inputs)
    exc.message += (
        "\nThe export frontend captures this model: open it with "
        f"fxstudio show {shlex.quote(req.spec)}{inputs} --frontend export"
    )
