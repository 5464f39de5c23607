"""The window's ways into the Compare window (:mod:`fxstudio.qt.windows.compare`): another
model or session chosen in the Open dialog (the earlier version of the two on the left), or
the model as it was before its last rewrite.  Each opens the other side in a worker -- it runs
the model's code, so it can be stopped, as an open can -- while the window stays usable."""

from __future__ import annotations

from typing import Any

from fxstudio.core.flows import OpenRequest, open_document
from fxstudio.core.flows.diff import before_last_rewrite, last_rewrite, ordered
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.window.open_dialog import OpenDialog
from fxstudio.qt.windows.compare import copy_of, show_compare
from fxstudio.qt.workers import UserCodeTask


def compare_with_request(window: Any, request: OpenRequest) -> UserCodeTask:
    """The document (as it is now) against ``request`` opened, before on the left: the one
    opened when it is an earlier version of the document (:func:`ordered`), else the
    document.  The open runs the other model's code in a worker (stoppable, as an open is)."""
    doc = window.document
    now = copy_of(doc)
    now.history = list(doc.history)  # (the edits it was made with: which one is "before")
    task = UserCodeTask(lambda: open_document(request), window)
    name = doc.request.spec or "this model"

    def opened(other: GraphDocument) -> None:
        before, after = ordered(now, other)
        titles = (f"{name} (now)", request.spec)
        show_compare(window, before, after, titles if before is now else titles[::-1])

    task.succeeded.connect(opened)
    task.finished.connect(lambda: window.status.show(""))  # "Opening …" said its part
    task.failed.connect(
        lambda exc: window.show_error("Could not open the model to compare with", exc)
    )
    window.status.show(f"Opening {request.spec} to compare with…", 0)
    task.start()
    return task


def compare_with(window: Any) -> None:
    """*File ▸ Compare with…*: choose the other model (or session) in the Open dialog."""
    doc = window.document
    if doc is None:
        return
    dialog = OpenDialog(window, doc.request, window.session.recent.load())
    dialog.setWindowTitle("Compare with")
    chosen = dialog.request() if dialog.exec() else None
    dialog.deleteLater()  # (not kept under the window, listening for the zoo's names)
    if chosen is not None and chosen.spec:
        compare_with_request(window, chosen)


def compare_before_rewrite(window: Any) -> UserCodeTask | None:
    """*File ▸ Compare with before the last rewrite*: the model captured again with the
    edits before its last rewrite, on the left; the document now on the right."""
    doc = window.document
    if doc is None or last_rewrite(doc) is None:
        window.status.show("The graph has not been rewritten: nothing to compare with.", 5000)
        return None
    right = copy_of(doc)
    task = UserCodeTask(lambda: before_last_rewrite(doc), window)
    name = doc.request.spec or "the model"
    task.succeeded.connect(
        lambda before: show_compare(
            window, before, right, (f"{name} before the rewrite", f"{name} now")
        )
    )
    task.failed.connect(
        lambda exc: window.show_error("Could not make the graph before the rewrite", exc)
    )
    task.start()
    return task
