"""Open a model into a document in one call: load, capture, wrap (used by the CLI and GUI)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from fxstudio.core.capture import CaptureOptions, Frontend, capture
from fxstudio.core.document import GraphDocument, ModelSource
from fxstudio.core.loading import load_model


@dataclass(frozen=True)
class OpenRequest:
    """What the user asked to open: the MODEL spec and how to capture it."""

    spec: str
    frontend: Frontend = "fx"
    inputs: tuple[str, ...] = ()
    seed: int = 0
    leaf_modules: tuple[str, ...] = field(default_factory=tuple)


def open_document(request: OpenRequest | str, inputs: Sequence[str] = ()) -> GraphDocument:
    """Load, capture and wrap a model.  Raises :class:`~fxstudio.core.errors.UserError`.

    >>> doc = open_document("examples:negrelu")
    >>> [r.name for r in doc.rows()]
    ['x', 'y', 'z', 'neg', 'relu', 'add', 'mul', 'output']
    """
    req = (
        request if isinstance(request, OpenRequest) else OpenRequest(request, inputs=tuple(inputs))
    )
    loaded = load_model(req.spec, req.inputs, req.seed)
    cap = capture(loaded, CaptureOptions(frontend=req.frontend, leaf_modules=req.leaf_modules))
    source = ModelSource(req.spec, cap.frontend, req.inputs, req.seed, loaded.source_file)
    return GraphDocument.from_capture(cap, source)
