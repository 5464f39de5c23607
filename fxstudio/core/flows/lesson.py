"""The lesson flow (*Help ▸ Learn FX*): the guided lesson of :mod:`fxstudio.core.lesson`,
its steps and checks, what each step shows on the learner's own model, and the traps'
diagnoses (:func:`diagnose`: why a model fails to capture, or captures wrong, with the fixes
tried).

Called by ``fxstudio.qt.panels.lesson.panel`` and ``lesson_form`` (the Learn FX dock).

Exposes :func:`diagnose` and :func:`traced_nodes` (worked out here) and, from the lesson: the
steps (:data:`STEPS`, :class:`Step`, :data:`TRAPS`, :data:`PASS_MODEL`), its state and verdicts
(:class:`LessonState`, :class:`Verdict`, :func:`record_comparison`, :func:`record_stepper`,
:func:`record_trap`, :func:`record_trace_size` and :func:`trace_size_wanted`,
:func:`count_word`), the demonstrations (:func:`trace_order`, :func:`replay_note`,
:func:`quiz` and its :class:`Question`, :func:`pattern_exercise`) and :class:`Diagnosis`.

Example:
    >>> from fxstudio.core.flows import open_document
    >>> doc = open_document("examples:negrelu")
    >>> [q.id for q in quiz(doc)], STEPS[0].id
    (['opcode', 'leaf'], 'pick')
    >>> diagnose(doc.request, doc)  # it captures right: nothing to say
    []
"""

from __future__ import annotations

from dataclasses import replace

from fxstudio.core.errors import CaptureError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.lesson.demos import (
    Question,
    pattern_exercise,
    quiz,
    replay_note,
    trace_order,
)
from fxstudio.core.lesson.syllabus import (
    PASS_MODEL,
    STEPS,
    TRAPS,
    LessonState,
    Step,
    Verdict,
    count_word,
    record_comparison,
    record_stepper,
    record_trace_size,
    record_trap,
    trace_size_wanted,
)
from fxstudio.core.model.fixes import Diagnosis, diagnose_failure, diagnose_graph
from fxstudio.core.sessions.documents import open_document

__all__ = [
    "PASS_MODEL",
    "STEPS",
    "TRAPS",
    "Diagnosis",
    "LessonState",
    "Question",
    "Step",
    "Verdict",
    "count_word",
    "diagnose",
    "pattern_exercise",
    "quiz",
    "record_comparison",
    "record_stepper",
    "record_trace_size",
    "record_trap",
    "replay_note",
    "trace_order",
    "trace_size_wanted",
    "traced_nodes",
]


def diagnose(request: OpenRequest, opened: GraphDocument | CaptureError) -> list[Diagnosis]:
    """What went wrong opening ``request`` and how to fix it: ``opened`` is the document it
    gave (a graph that captured wrong: each finding, with its fixes tried -- each captures the
    model again, so run it off the GUI thread) or the :class:`CaptureError` it raised (one
    diagnosis, at the user's line)."""
    if isinstance(opened, CaptureError):
        return [diagnose_failure(request, opened)]
    return diagnose_graph(opened)


def traced_nodes(request: OpenRequest) -> int:
    """How many nodes symbolic tracing gives the model of ``request``: captured afresh (it
    runs the model's code: off the GUI thread), without the edits a document made since --
    what step 10 compares the export graph with (:func:`record_trace_size`).

    >>> traced_nodes(OpenRequest("examples:fxdocs", frontend="export"))
    6
    """
    return len(open_document(replace(request, frontend="fx")))
