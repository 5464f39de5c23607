"""The report flow: one self-contained HTML file of a model or session -- the graph drawn as the
canvas draws it, which pans, zooms, collapses and tells a node's details in any browser, with
no server and no network -- and what the session holds: the rewrite history with each check,
a profile (whole, per module, per node with its heat; before/after with its confidence
interval), a compare against a baseline (both graphs, the differences coloured, the first
divergence), compiled kernels and the memory estimate.  The one flow behind ``fxstudio
report``, ``fxstudio diff --html`` and *File ▸ Export report…*
(:mod:`fxstudio.core.share.htmlreport` writes the page).

A request names what to run (a profile's options, the memory estimate, a compile) or hands in
results already made (what the window's docks hold); nothing is run twice.

Example:
    >>> result = report_flow(ReportRequest("examples:negrelu", against="examples:negrelu"))
    >>> result.html.count('class="node"') >= 2 * 8, result.structural
    (True, 0)
    >>> sorted(result.to_json())
    ['compare', 'history', 'notes', 'subtitle', 'title']
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from fxstudio.core.compiling.result import Compiled
from fxstudio.core.flows.compile import CompileResult
from fxstudio.core.flows.diff import DiffRequest, DiffResult, Side, diff_flow
from fxstudio.core.flows.memory import MemoryRequest, MemoryResult, memory_flow
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.process.files import atomic_write
from fxstudio.core.results import Json
from fxstudio.core.runtime.profiling import Profile, ProfileOptions, profile
from fxstudio.core.sessions.documents import open_document
from fxstudio.core.share.gather import compare_data, heading, history
from fxstudio.core.share.htmlreport import report_html
from fxstudio.core.share.svg import drawing_svg

__all__ = ["ReportRequest", "ReportResult", "diff_report", "report_flow"]


@dataclass(frozen=True)
class ReportRequest:
    """What to report: ``source`` (a MODEL spec, a session, a request or an open document,
    which the flow never changes), compared with ``against`` when given; a profile run with
    ``profile`` (its options; against the baseline when there is one) or handed in done; the
    memory estimate when ``memory`` (before -> after against the baseline; or handed in);
    compiled kernels handed in (the compile flow's result, its
    :class:`~fxstudio.core.compiling.result.Compiled`, or their JSON)."""

    source: Side
    against: Side | None = None
    profile: ProfileOptions | Profile | None = None
    memory: bool | MemoryResult = False
    compiled: CompileResult | Compiled | dict[str, Any] | None = None
    values: bool = True  # compare the values against the baseline (when it has weights)
    history: bool = True  # the rewrite history with each check (the edits made again)
    title: str = ""


@dataclass
class ReportResult:
    """The page (:attr:`html`) and what it holds as JSON (:attr:`data`)."""

    html: str
    data: dict[str, Any]
    nodes: int  # nodes drawn in the main graph (or the right side of a compare)
    notes: list[str] = field(default_factory=list)

    @property
    def structural(self) -> int:
        """Nodes removed, added or changed against the baseline (0 without one)."""
        return int((self.data.get("compare") or {}).get("structural", 0))

    def to_json(self) -> Json:
        """What the page shows, as the JSON it holds (``script#fx-data``)."""
        return self.data

    def describe(self) -> list[str]:
        parts = [
            s for s in ("history", "profile", "compare", "compile", "memory") if self.data.get(s)
        ]
        lines = [
            f"report of {self.data.get('title', '')}: {self.nodes} nodes drawn, "
            f"{len(self.html.encode()) / 1e6:.2f} MB; sections: {', '.join(parts) or 'the graph'}"
        ]
        compare = self.data.get("compare")
        if compare:
            lines += list(compare.get("describe", []))
        lines += self.notes
        return lines

    def write(self, path: str | os.PathLike[str]) -> None:
        """The page, written atomically."""
        atomic_write(path, self.html)


def _opened(side: Side) -> GraphDocument:
    return side if isinstance(side, GraphDocument) else open_document(side)


def report_flow(request: ReportRequest) -> ReportResult:
    """Gather what ``request`` asks and write the page (see :class:`ReportRequest`).  Raises
    :class:`~fxstudio.core.errors.UserError` for bad input (a side that cannot be opened, a
    profile of a structure-only model)."""
    doc = _opened(request.source)
    base = _opened(request.against) if request.against is not None else None
    title, subtitle = heading(doc, request.title)
    data: dict[str, Any] = {"title": title, "subtitle": subtitle, "notes": []}
    if request.history:
        data["history"] = history(doc)
    if isinstance(request.profile, Profile):
        data["profile"] = request.profile.to_json()
    elif request.profile is not None:
        data["profile"] = profile(doc, request.profile, base).to_json()
    if isinstance(request.memory, MemoryResult):
        data["memory"] = request.memory.to_json()
    elif request.memory:
        data["memory"] = memory_flow(doc, MemoryRequest(None), against=base).to_json()
    if request.compiled is not None:
        compiled = request.compiled
        data["compile"] = compiled if isinstance(compiled, dict) else compiled.to_json()
    svgs = None
    if base is not None:
        titles = (_spec(request.against, base), title)
        diff = diff_flow(
            DiffRequest(base, doc, values=request.values, keep_going=True, titles=titles)
        )
        data["compare"] = compare_data(diff)
        svgs = (drawing_svg(base, expanded=True), drawing_svg(doc, expanded=True))
    html = report_html(data, drawing_svg(doc, expanded=True), svgs)
    return ReportResult(html, data, _drawn(doc), list(doc.notes))


def diff_report(result: DiffResult, title: str = "") -> ReportResult:
    """A compare already made (``fxstudio diff``) as a report: both graphs side by side, the
    differences coloured, the first divergence; no main graph."""
    left, right = result.titles
    data: dict[str, Any] = {
        "title": title or f"{left} vs {right}",
        "subtitle": [f"{len(result.left)} nodes against {len(result.right)}"],
        "compare": compare_data(result),
    }
    svgs = (drawing_svg(result.left, expanded=True), drawing_svg(result.right, expanded=True))
    return ReportResult(report_html(data, None, svgs), data, _drawn(result.right))


def _drawn(doc: GraphDocument) -> int:
    return len(doc)


def _spec(side: Side | None, doc: GraphDocument) -> str:
    return side if isinstance(side, str) else (doc.request.spec or "baseline")
