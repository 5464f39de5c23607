"""*File ▸ Export report…*: the session as one self-contained HTML page
(:func:`fxstudio.core.flows.report.report_flow`, as ``fxstudio report`` writes it) with what the
docks hold for the graph as it is now -- the Run dock's profile, the Memory dock's estimate,
the Compile dock's kernels (a stale one, of an earlier graph, is left out and the status line
says so).  The page is made in a worker -- the rewrite history's checks run the model again --
on a copy of the document, while the window stays usable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fxstudio.core.errors import UserError
from fxstudio.core.flows.report import ReportRequest, report_flow
from fxstudio.qt.file_dialogs import FileType, ask_save_path
from fxstudio.qt.panels.compile.panel import CompilePanel
from fxstudio.qt.panels.memory.panel import MemoryPanel
from fxstudio.qt.panels.run.panel import RunPanel
from fxstudio.qt.windows.compare import copy_of
from fxstudio.qt.workers import UserCodeTask

__all__ = ["REPORT_TYPES", "export_report", "export_report_to", "what_the_docks_hold"]

REPORT_TYPES = (FileType("HTML report", (".html", ".htm")),)


def what_the_docks_hold(window: Any) -> tuple[dict[str, Any], list[str]]:
    """The results of the graph as it is now, as :class:`ReportRequest` fields, and the names
    of those left out as stale."""
    held: dict[str, Any] = {}
    stale: list[str] = []
    run, memory = window.panel(RunPanel), window.panel(MemoryPanel)
    kernels = window.panel(CompilePanel).kernels
    for field, name, result, old in (
        ("profile", "profile", run.last, run.stale),
        ("memory", "memory", memory.last, memory.stale),
        ("compiled", "kernels", kernels.result, kernels.stale),
    ):
        if result is not None and old:
            stale.append(name)
        elif result is not None:
            held[field] = result
    return held, stale


def export_report_to(window: Any, path: Path) -> UserCodeTask | None:
    """Write the report of the window's document to ``path`` in a worker; the status line
    says when it is written (or the error what went wrong)."""
    doc = window.document
    if doc is None:
        return None
    copy = copy_of(doc)
    copy.history = list(doc.history)  # (the rewrite history and its checks)
    copy.notes = list(doc.notes)
    held, stale = what_the_docks_hold(window)
    request = ReportRequest(copy, title=doc.request.spec or "model", **held)
    task = UserCodeTask(lambda: report_flow(request), window)

    def written(result: Any) -> None:
        try:
            result.write(path)
        except UserError as exc:
            window.show_error(f"Could not write {path.name}", exc)
            return
        left_out = f" (left out, of an earlier graph: {', '.join(stale)})" if stale else ""
        window.status.show(f"Saved the report {path}{left_out}", 15000)

    task.succeeded.connect(written)
    task.failed.connect(lambda exc: window.show_error(f"Could not write {path.name}", exc))
    window.status.show(f"Writing the report {path.name}…", 0)
    task.start()
    return task


def export_report(window: Any) -> UserCodeTask | None:
    """Ask where, then :func:`export_report_to`."""
    if window.document is None:
        return None
    chosen = ask_save_path(window, "Export report", window.session.suggest(".html"), REPORT_TYPES)
    return export_report_to(window, chosen[0]) if chosen is not None else None
