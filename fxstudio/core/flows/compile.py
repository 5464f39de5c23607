"""The compile flow: where torch.compile's Dynamo breaks the model into several graphs and
why, and -- unless only that is asked -- the model compiled, timed against eager, its kernels
attributed to the nodes and lines they came from (:mod:`fxstudio.core.compiling`).  The one
flow behind ``fxstudio compile`` and the Compile dock (its *Find graph breaks* and its
*Kernels* tab).

Besides :func:`compile_flow` (:class:`CompileRequest` -> :class:`CompileResult`), it exposes
what the Compile dock reads the result with: a break (:class:`GraphBreak`) and the nodes it
falls at (:func:`break_place`, :func:`graph_nodes`), a kernel (:class:`Kernel`) and its lines
in words (:func:`where`).

The model's code runs here -- built again from the request, one thread at a time
(:mod:`fxstudio.core.process.modelcode`) -- so call it from a worker that can be stopped.

Example:
    >>> from fxstudio.core.graph.request import OpenRequest
    >>> result = compile_flow(CompileRequest(OpenRequest("examples:simple"), explain_only=True))
    >>> result.explained.graphs, result.compiled is None
    (1, True)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from fxstudio.core.compiling.breaks import Explained, GraphBreak, explain_breaks
from fxstudio.core.compiling.kernels import BACKENDS, MODES
from fxstudio.core.compiling.located import break_place, graph_nodes
from fxstudio.core.compiling.model import compile_model
from fxstudio.core.compiling.quiet import muted_stdout
from fxstudio.core.compiling.result import Compiled, Kernel, where
from fxstudio.core.errors import UserError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.graph.weights import has_weights, no_weights_message
from fxstudio.core.memory.fits import require_fits, run_need
from fxstudio.core.model.loading import load_model
from fxstudio.core.model.modelspec import LoadedModel
from fxstudio.core.model.opening import capture_loaded
from fxstudio.core.process import modelcode
from fxstudio.core.process.files import write_json
from fxstudio.core.results import Json
from fxstudio.core.runtime.devices import resolve

__all__ = [
    "BACKENDS",
    "MODES",
    "CompileRequest",
    "CompileResult",
    "Compiled",
    "Explained",
    "GraphBreak",
    "Kernel",
    "break_place",
    "compile_flow",
    "graph_nodes",
    "where",
]


@dataclass(frozen=True)
class CompileRequest:
    """What to compile: the ``model`` (built again from its spec, inputs, seed; trained or
    not), and how.

    ``explain_only``: Dynamo's breaks only, nothing compiled (fast).  ``document``: the graph
    compiled when Dynamo captures the model whole (the window's, edits and all); without
    one the model is captured here, and one that cannot be is compiled all the same (its
    kernels placed at the lines of the user's code only).  ``explained``: Dynamo's breaks,
    when already found (not run again)."""

    model: OpenRequest
    explain_only: bool = False
    document: GraphDocument | None = None
    explained: Explained | None = None
    device: str = "cpu"
    backend: str = "inductor"
    mode: str = "default"
    threads: int | None = None
    min_time: float = 1.0
    freezing: bool = False


@dataclass
class CompileResult:
    """Dynamo's breaks (None only when Dynamo could not run over the model and the
    document's graph was compiled instead: the notes say so) and what was compiled (None
    when only the breaks were asked for)."""

    title: str
    explained: Explained | None
    compiled: Compiled | None = None

    def to_json(self) -> Json:
        """The compiled result (it holds the breaks), or the breaks alone."""
        if self.compiled is not None:
            return self.compiled.to_json()
        return self.explained.to_json() if self.explained is not None else {}

    def write(self, path: str | os.PathLike[str]) -> None:
        """:meth:`to_json`, written atomically."""
        write_json(path, self.to_json(), indent=2)

    def describe(self) -> str:
        """The breaks, then what was compiled (``fxstudio compile`` prints it)."""
        parts = []
        if self.explained is not None:
            parts.append(f"{self.title}: {self.explained.describe()}")
        if self.compiled is not None:
            parts.append(self.compiled.describe(breaks=self.explained is None))
        return "\n".join(parts)


def compile_flow(request: CompileRequest) -> CompileResult:
    """Explain, and compile unless ``explain_only``, as the request says.  Raises
    :class:`~fxstudio.core.errors.UserError` for a model that cannot be built or run, a
    missing device, a compiler that fails."""
    model = request.model
    if request.explain_only:
        explained = request.explained
        if explained is None:
            with modelcode.one_turn(bound=False):  # the model's code: one thread at a time
                explained = explain_breaks(_load(model, values=False), train=model.train)
        return CompileResult(model.spec, explained)
    resolve(request.device)  # a missing device is said before the model is built
    if request.document is not None:  # the model built again only if it is needed
        request.document.require_weights("Compiling")
        compiled = _compiled(request, lambda: _loaded_alone(model), request.document)
        return CompileResult(model.spec, compiled.explained, compiled)
    with modelcode.one_turn(bound=False):
        loaded = _load(model)
        explained = request.explained or explain_breaks(loaded, train=model.train)
    doc, why = _captured(model, loaded)
    compiled = _compiled(request, lambda: loaded, doc, explained)
    if why:
        compiled.notes.append(why)
    return CompileResult(model.spec, explained, compiled)


def _load(model: OpenRequest, values: bool = True) -> LoadedModel:
    """The model built again; ``values``: it must have its weights (to compile and time it;
    finding graph breaks runs on fake tensors and needs none)."""
    if not values:
        return load_model(model.spec, tuple(model.inputs), model.seed, model.weights)
    if not model.weights:
        raise UserError(no_weights_message("Compiling", model.spec, asked=True))
    loaded = load_model(model.spec, tuple(model.inputs), model.seed)
    if not has_weights(loaded.module):  # too large for this machine: built without weights
        raise UserError(no_weights_message("Compiling", model.spec))
    return loaded


def _loaded_alone(model: OpenRequest) -> LoadedModel:
    with modelcode.one_turn(bound=False):
        return _load(model)


def _compiled(
    request: CompileRequest,
    load: Callable[[], LoadedModel],
    doc: GraphDocument | None,
    explained: Explained | None = None,
) -> Compiled:
    if doc is not None and doc.weights:  # (said otherwise by the compile itself)
        # the model as built again (a copy of the weights, unless the open's own) run
        # eager and compiled: the outputs of both held
        need = run_need(doc, copies=int(doc is request.document))
        require_fits("Compiling and timing the model", need and need.twice(), request.device)
    return compile_model(
        load,
        doc,
        explained if explained is not None else request.explained,
        request.device,
        request.backend,
        request.mode,
        request.threads,
        request.min_time,
        freezing=request.freezing,
        train=request.model.train,
    )


def _captured(model: OpenRequest, loaded: LoadedModel) -> tuple[GraphDocument | None, str]:
    """The model captured as a document (built once: the loaded model), or None and why
    not -- a model neither symbolic tracing nor export captures is compiled all the same."""
    try:
        with muted_stdout():  # a print in forward prints while it is traced
            return capture_loaded(model, loaded), ""
    except UserError as exc:
        first = str(exc).strip().splitlines()
        return None, (
            "Not captured as a document"
            + (f" ({first[0].rstrip(':')})" if first else "")
            + ": kernels are placed at the lines of your code only."
        )
