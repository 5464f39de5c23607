"""Open a model into a document in one call -- load, capture, wrap -- or reopen a session
(used by the CLI and the window)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, cast

from fxstudio.core import progress, turns
from fxstudio.core.capture import CaptureOptions, Frontend, capture
from fxstudio.core.document import GraphDocument, ModelSource
from fxstudio.core.errors import CaptureError
from fxstudio.core.guard import special_failure
from fxstudio.core.loading import LoadedModel, load_model
from fxstudio.core.replay import restore
from fxstudio.core.sessionfile import read_session

SESSION_SUFFIX = ".fxstudio"


@dataclass(frozen=True)
class OpenRequest:
    """What the user asked to open: the MODEL spec and how to capture it."""

    spec: str
    frontend: Frontend | Literal["auto"] = "auto"  # auto: export for hf: models, fx otherwise
    inputs: tuple[str, ...] = ()
    seed: int = 0
    leaf_modules: tuple[str, ...] = field(default_factory=tuple)
    train: bool = False


def open_document(request: OpenRequest | str, inputs: Sequence[str] = ()) -> GraphDocument:
    """Load, capture and wrap a model, or reopen a ``.fxstudio`` session.

    Raises :class:`~fxstudio.core.errors.UserError` for bad input.

    >>> doc = open_document("examples:negrelu")
    >>> [r.name for r in doc.rows()]
    ['x', 'y', 'z', 'neg', 'relu', 'add', 'mul', 'output']
    """
    req = (
        request if isinstance(request, OpenRequest) else OpenRequest(request, inputs=tuple(inputs))
    )
    if req.spec.endswith(SESSION_SUFFIX):
        return open_session(req.spec)
    return open_model(req)


def open_session(path: str | os.PathLike[str]) -> GraphDocument:
    """Capture a session's model again, replay its edits and restore what the user saw."""
    data = read_session(path)
    request = OpenRequest(
        data.spec,
        cast(Frontend, data.frontend),
        data.inputs,
        data.seed,
        data.leaf_modules,
        data.train,
    )
    return restore(open_model(request), data)


def open_model(req: OpenRequest) -> GraphDocument:
    """Load, capture and wrap the model a request names."""
    try:
        return _open_model(req)
    except BaseException as exc:  # what no stage worded: sys.exit, Ctrl+C, out of memory
        special = special_failure(f"Opening {req.spec}", exc)
        if special is None or special is exc:
            raise
        raise special from exc


def _open_model(req: OpenRequest) -> GraphDocument:
    with turns.one_turn():  # the model's imports, then its capture: one thread at a time
        return _load_and_capture(req)


def _load_and_capture(req: OpenRequest) -> GraphDocument:
    progress.tell(f"Loading {req.spec}")
    return capture_loaded(req, load_model(req.spec, req.inputs, req.seed))


def capture_loaded(req: OpenRequest, loaded: LoadedModel) -> GraphDocument:
    """Capture and wrap a model already loaded from the request (``load_model`` of its spec,
    inputs and seed): for a caller that ran the eager model first (Dynamo's explain).
    Raises :class:`~fxstudio.core.errors.CaptureError` as an open does."""
    with turns.one_turn():  # the capture patches nn.Module.__call__ (core.turns)
        frontend: Frontend = req.frontend if req.frontend != "auto" else loaded.frontend or "fx"
        options = CaptureOptions(frontend, req.leaf_modules, train=req.train)
        try:
            cap = capture(loaded, options)
        except CaptureError as exc:
            if frontend == "fx" and exc.tracing and loaded.example_inputs and not req.leaf_modules:
                _offer_export(req, exc)
            raise
        cap.notes[:0] = loaded.notes
        progress.tell("Indexing the graph")
        source = ModelSource(
            req.spec,
            cap.frontend,
            req.inputs,
            req.seed,
            loaded.source_file,
            req.leaf_modules,
            req.train,
        )
        return GraphDocument(cap.graph_module, source, cap.example_inputs, cap.notes)


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
