"""The open flow's front for the window: what the Open dialog, the welcome page, a dropped
file and the recent list need to choose a model, and the open itself as the window does it
(:func:`open_prepared`: :func:`~fxstudio.core.flows.open_document`, then the work its views
will ask for).  ``fxstudio show`` and the other commands open with
:func:`~fxstudio.core.flows.open_document` directly.

Called by ``fxstudio.qt.window.open_dialog`` (*File ▸ Open*), ``welcome`` (the welcome
page), ``desktop`` (a file dropped on the window), ``window_state`` and ``session``
(DocumentSession: the open worker, the recent list).

Exposes, worked out here: :func:`check_request` (what can be told wrong before opening),
:func:`request_for_file` (what opening a dropped file means), :func:`bare_file_choices`
(the models a bare file path leaves to choose), :func:`zoo_specs` (the zoos' names to
complete), :func:`open_prepared` (its failure says a bare path's choices); and,
re-exported: :func:`check_spec`, :class:`FileModels` and :func:`file_models` (a ``.py``
file's models and factories),
:func:`list_examples`, :func:`model_file` (the file a spec's code is in),
:func:`model_names_in`, :class:`RecentModels`.

Example:
    >>> request_for_file("notes.txt")
    'notes.txt: fxstudio opens .py model files, .pt2 programs and .fxstudio sessions.'
    >>> check_request(OpenRequest("examples:negrelu"))
    >>> doc = open_prepared(OpenRequest("examples:negrelu"))
    >>> doc.code_ready()
    True
"""

from __future__ import annotations

import os
from pathlib import Path

from fxstudio.core.errors import LoadError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.request import SESSION_SUFFIX, OpenRequest
from fxstudio.core.layout.groups import collapse_big_graph
from fxstudio.core.model.loading import check_spec, model_names_in
from fxstudio.core.model.modelfiles import FileModels, file_models
from fxstudio.core.model.modelspec import list_examples, model_file
from fxstudio.core.process import modelcode
from fxstudio.core.saving.recent import RecentModels
from fxstudio.core.sessions.documents import open_document

__all__ = [
    "DROPPABLE",
    "FileModels",
    "RecentModels",
    "bare_file_choices",
    "check_request",
    "check_spec",
    "file_models",
    "list_examples",
    "model_file",
    "model_names_in",
    "open_prepared",
    "request_for_file",
    "zoo_specs",
]

#: The files the window opens when dropped on it.
DROPPABLE = (".py", ".pt2", SESSION_SUFFIX)


def check_request(request: OpenRequest) -> None:
    """What can be told wrong about ``request`` now, quickly, without running the model's
    code: a session file that is not there (:class:`~fxstudio.core.errors.LoadError`), or a
    spec or inputs that cannot be read (:func:`check_spec`)."""
    if request.spec.endswith(SESSION_SUFFIX):
        if not os.path.isfile(os.path.expanduser(request.spec)):
            raise LoadError(f"No such file: {request.spec}. Check the path.")
    else:
        check_spec(request.spec, request.inputs)


def request_for_file(path: str) -> OpenRequest | str:
    """What opening a dropped file means: a request, or why it cannot be opened.  A model
    file's one model is named; one with several names none, so that its open asks which."""
    p = Path(path)
    if p.suffix not in DROPPABLE:
        return f"{p.name}: fxstudio opens .py model files, .pt2 programs and .fxstudio sessions."
    if p.suffix != ".py":
        return OpenRequest(str(p))
    found = file_models(p)
    if not found.names:
        return (
            f"{p.name} defines no nn.Module class: open it with File ▸ Open and name the factory."
        )
    if found.to_choose():  # which one: the open asks (LoadError.choices)
        return OpenRequest(str(p))
    return OpenRequest(f"{p}:{found.obvious or found.names[0]}")


def bare_file_choices(spec: str) -> tuple[str, ...]:
    """The models to choose from when ``spec`` is a bare path to a model file that defines
    several, none of them obvious (:func:`~fxstudio.core.model.loading.named` refuses to
    guess); ``()`` for any other spec."""
    path = os.path.expanduser(spec)
    if not spec.endswith(".py") or not os.path.isfile(path):
        return ()
    return file_models(path).to_choose()


def zoo_specs() -> list[str]:
    """``hf:`` model types and ``timm:`` names of the installed packages (importing timm
    and transformers takes seconds: call it off the GUI thread).  It imports them in the
    model code's turn (:func:`~fxstudio.core.process.modelcode.one_turn`): an open started
    meanwhile importing them too would be handed half-made modules ("cannot import name
    'AutoModel' from 'transformers'")."""
    from fxstudio.core.model.zoo import hf_model_types, timm_names

    with modelcode.one_turn(bound=False):
        return [f"hf:{t}" for t in hf_model_types()] + [f"timm:{n}" for n in timm_names()]


def open_prepared(request: OpenRequest | str, *, first_open: bool = True) -> GraphDocument:
    """:func:`~fxstudio.core.flows.open_document`, then the work the window's views will ask
    for, done here (in the loading thread rather than the GUI thread): the first picture's
    collapsed modules (``first_open``), the table rows, the code and its line map, the module
    tree (a second at 10,000 nodes)."""
    try:
        doc = open_document(request)
    except LoadError as exc:  # a bare path to a file of several models: say which it has
        exc.choices = bare_file_choices(request if isinstance(request, str) else request.spec)
        raise
    if first_open:
        collapse_big_graph(doc)
    doc.rows()
    doc.code_line_map()
    doc.module_tree()
    return doc
