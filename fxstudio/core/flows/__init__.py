"""The front door to the core: one function per user flow, one request in, one result out.

The window (``fxstudio.qt``) and the command line (``fxstudio.cli``) call these -- plus the
document (:mod:`fxstudio.core.graph.document`), the errors (:mod:`fxstudio.core.errors`) and a
short list of helpers named in ``tests/test_architecture.py`` -- so that what either of them
shows or saves is worked out once.  Each result says itself in words (``describe()``), as
JSON (``to_json()``) and, where it saves, to a file (``write(path)``).

The flows, in the order a user meets them:

- **open** -- :func:`open_document` (:class:`OpenRequest`: a MODEL spec or a ``.fxstudio``
  session) -> a :class:`~fxstudio.core.graph.document.GraphDocument`
- **layout** -- :func:`layout_flow` (:class:`LayoutRequest`) -> :class:`LayoutResult`: the
  canvas's placement and its counts (``fxstudio layout``)
- **rewrite** -- :func:`rewrite_flow` (the document, a :class:`RewriteRequest` holding a
  :class:`RewriteSpec`) -> :class:`Report`: matched, replaced as one edit, checked
  (``fxstudio rewrite``); in a worker, :func:`rewrite_copy` on a detached copy ->
  :class:`RewrittenCopy`, whose ``adopt(doc, snap)`` makes it one edit of the document (the
  Patterns dock)
- **explain** -- :func:`explain` (a graph, a pattern, a node asked about) ->
  :class:`Explanation`: why a pattern does or does not match there
- **profile** -- :func:`profile` (the document, :class:`ProfileOptions`, a baseline) ->
  :class:`Profile` (``fxstudio profile``, the Run dock)
- **memory** -- :func:`memory_flow` (the document, a :class:`MemoryRequest`, a baseline) ->
  :class:`MemoryResult`: where the bytes go -- each node's, the peak and what is live there,
  parameters apart, per module; before and after (``fxstudio memory``, the Memory dock)
- **step** -- :func:`step_flow` (:class:`StepRequest`: a model, session or document, how far
  to run, compared with the eager model or not) -> :class:`StepResult`: each node's value,
  the first difference from the eager model (``fxstudio step``); :func:`step_through` (the
  document) -> a :class:`Stepper`: the Interpreter node by node, moved one step at a time
  (the Step dock)
- **diff** -- :func:`diff_flow` (:class:`DiffRequest`: two models, sessions or documents) ->
  :class:`DiffResult`: aligned, values and times compared (``fxstudio diff``, the Compare
  window)
- **compile** -- :func:`compile_flow` (:class:`CompileRequest`) -> :class:`CompileResult`:
  graph breaks, the model compiled, kernels attributed to nodes (``fxstudio compile``, the
  Compile dock)
- **export** -- :func:`export` (the document, a path, a format) -> :class:`ExportResult`
  (``fxstudio export``, *File ▸ Export*)
- **render** -- ``render.render_flow`` (``render.RenderRequest``: the document, what to
  collapse, a heat) -> ``render.RenderResult``: the canvas's picture as SVG, text as text
  (``fxstudio render``, which writes PDF and PNG of it through Qt)
- **report** -- ``report.report_flow`` (``report.ReportRequest``: a model, session or
  document, a baseline, a profile, memory, compiled kernels) -> ``report.ReportResult``: one
  self-contained HTML page (``fxstudio report``, ``fxstudio diff --html``, *File ▸ Export
  report…*)

The flows written here (the others live beside their feature and are re-exported): ``layout``
(:func:`layout_flow`), ``step`` (:func:`step_flow`), ``diff`` (:func:`diff_flow`),
``compile`` (:func:`compile_flow`), ``memory`` (:func:`memory_flow`), ``run``
(:func:`profile`: the run refused first when it would not fit in memory).

Each feature's module is also its front for the window: what a dock needs besides the flow --
the few steps it would otherwise put together itself, worked out once as a function, and the
types and small helpers it reads a result with, re-exported and listed in the module's
``__all__``.  The window imports them as ``fxstudio.core.flows.<module>``; this package does
not import the fronts below (the command line does not pay for them):

- ``open`` -- the Open dialog, the welcome page, a dropped file, the recent list:
  ``check_request``, ``request_for_file``, ``zoo_specs``, ``open_prepared`` (the open as the
  window does it: the views' work done in the loading thread)
- ``save`` -- *File ▸ Save / Export*, autosave's recovery files and the crash log
- ``edit`` -- the insert palette's catalogue, the Console dock, catching up after edits
- ``layout`` -- the canvas: ``canvas_layout`` (the layout and what to draw of it),
  ``group_title``, and the engine's, drawing's and labels' types
- ``run`` -- the Run dock: ``device_choices``, ``dtype_choices``, a profile's types
- ``step`` -- the Step dock: ``step_move`` (one move, in the model code's turn), a value's
  summary and picture
- ``diff`` -- the Compare window, the last rewrite, per-node data read from other viewers
- ``compile`` -- the Compile dock: a break's place, a kernel's lines
- ``memory`` -- the Memory dock: the estimate's node and module rows, ``parse_inputs``,
  ``format_bytes``
- ``render`` -- the render flow itself (imported from here only where a picture is drawn):
  ``render_flow``, ``check_output`` (a picture's path checked before any work), ``FORMATS``
- ``lesson`` -- the Learn FX dock: the steps, the demonstrations, ``diagnose`` (a trap's
  diagnosis)
- ``patterns`` -- the Patterns dock: patterns made, matched, explained, replaced
- ``picture`` -- a ``.pt2``'s first picture from its archive and the canvas items' drawing
  vocabulary, torch-free (the window draws it before torch is imported)
- ``report`` -- *File ▸ Export report…*, ``fxstudio report`` and ``fxstudio diff --html``:
  ``report_flow``, ``diff_report`` (a compare made already, as a page)

Example:
    >>> from fxstudio.core.flows import DiffRequest, RewriteRequest, RewriteSpec
    >>> from fxstudio.core.flows import diff_flow, open_document, rewrite_flow
    >>> doc = open_document("examples:negrelu")
    >>> len(rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="negrelu"))).result.replaced)
    1
    >>> diff = diff_flow(DiffRequest("examples:negrelu", doc, values=False))
    >>> diff.describe()[-1]
    '  changed (rewritten): relu → relu'
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fxstudio.core.compiling.result import Compiled
    from fxstudio.core.flows.compile import CompileRequest, CompileResult, compile_flow
    from fxstudio.core.flows.diff import DiffRequest, DiffResult, diff_flow
    from fxstudio.core.flows.layout import LayoutRequest, LayoutResult, layout_flow
    from fxstudio.core.flows.memory import MemoryRequest, MemoryResult, memory_flow
    from fxstudio.core.flows.run import profile
    from fxstudio.core.flows.step import (
        StepRequest,
        StepResult,
        UnknownNode,
        step_flow,
        step_through,
    )
    from fxstudio.core.graph.request import OpenRequest
    from fxstudio.core.patterns.apply import (
        Report,
        RewriteRequest,
        RewriteSpec,
        RewrittenCopy,
        rewrite_copy,
        rewrite_flow,
    )
    from fxstudio.core.patterns.explain import Explanation, explain
    from fxstudio.core.runtime.profiling import Profile, ProfileOptions
    from fxstudio.core.saving.export import ExportResult, export
    from fxstudio.core.sessions.documents import open_document
    from fxstudio.core.stepping.stepper import Stepper

#: Where each name comes from: imported on first use, so that importing one front below
#: (``flows.picture`` before torch, ``flows.layout`` for the canvas) does not import them all.
_FROM = {
    "Compiled": "fxstudio.core.compiling.result",
    "CompileRequest": "fxstudio.core.flows.compile",
    "CompileResult": "fxstudio.core.flows.compile",
    "compile_flow": "fxstudio.core.flows.compile",
    "DiffRequest": "fxstudio.core.flows.diff",
    "DiffResult": "fxstudio.core.flows.diff",
    "diff_flow": "fxstudio.core.flows.diff",
    "LayoutRequest": "fxstudio.core.flows.layout",
    "LayoutResult": "fxstudio.core.flows.layout",
    "layout_flow": "fxstudio.core.flows.layout",
    "MemoryRequest": "fxstudio.core.flows.memory",
    "MemoryResult": "fxstudio.core.flows.memory",
    "memory_flow": "fxstudio.core.flows.memory",
    "StepRequest": "fxstudio.core.flows.step",
    "StepResult": "fxstudio.core.flows.step",
    "UnknownNode": "fxstudio.core.flows.step",
    "step_flow": "fxstudio.core.flows.step",
    "step_through": "fxstudio.core.flows.step",
    "OpenRequest": "fxstudio.core.graph.request",
    "Report": "fxstudio.core.patterns.apply",
    "RewriteRequest": "fxstudio.core.patterns.apply",
    "RewriteSpec": "fxstudio.core.patterns.apply",
    "rewrite_flow": "fxstudio.core.patterns.apply",
    "RewrittenCopy": "fxstudio.core.patterns.apply",
    "rewrite_copy": "fxstudio.core.patterns.apply",
    "Explanation": "fxstudio.core.patterns.explain",
    "explain": "fxstudio.core.patterns.explain",
    "Profile": "fxstudio.core.runtime.profiling",
    "ProfileOptions": "fxstudio.core.runtime.profiling",
    "profile": "fxstudio.core.flows.run",
    "ExportResult": "fxstudio.core.saving.export",
    "export": "fxstudio.core.saving.export",
    "open_document": "fxstudio.core.sessions.documents",
    "Stepper": "fxstudio.core.stepping.stepper",
}


__all__ = [
    "CompileRequest",
    "CompileResult",
    "Compiled",
    "DiffRequest",
    "DiffResult",
    "Explanation",
    "ExportResult",
    "LayoutRequest",
    "LayoutResult",
    "MemoryRequest",
    "MemoryResult",
    "OpenRequest",
    "Profile",
    "ProfileOptions",
    "Report",
    "RewriteRequest",
    "RewriteSpec",
    "RewrittenCopy",
    "StepRequest",
    "StepResult",
    "Stepper",
    "UnknownNode",
    "compile_flow",
    "diff_flow",
    "explain",
    "export",
    "layout_flow",
    "memory_flow",
    "open_document",
    "profile",
    "rewrite_copy",
    "rewrite_flow",
    "step_flow",
    "step_through",
]


def __getattr__(name: str) -> object:
    """A flow's name, imported from its module on first use (PEP 562)."""
    module = _FROM.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
