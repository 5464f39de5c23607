"""The lesson flow (*Help ▸ Learn FX*): the guided lesson of :mod:`fxstudio.core.lesson`,
its steps and checks, what each step shows on the learner's own model, and the traps'
diagnoses (:func:`diagnose`: why a model fails to capture, or captures wrong, with the fixes
tried).

Called by ``fxstudio.qt.panels.lesson`` and ``lesson_form`` (the Learn FX dock).

Exposes :func:`diagnose` (worked out here) and, from the lesson: the steps (:data:`STEPS`,
:class:`Step`, :data:`TRAPS`, :data:`PASS_MODEL`), its state and verdicts
(:class:`LessonState`, :class:`Verdict`, :func:`record_comparison`, :func:`record_stepper`,
:func:`record_trap`), the demonstrations (:func:`trace_order`, :func:`replay_note`,
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

from fxstudio.core.errors import CaptureError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.lesson.demos import Question, pattern_exercise, quiz, replay_note, trace_order
from fxstudio.core.lesson.steps import (
    PASS_MODEL,
    STEPS,
    TRAPS,
    LessonState,
    Step,
    Verdict,
    record_comparison,
    record_stepper,
    record_trap,
)
from fxstudio.core.model.fixes import Diagnosis, diagnose_failure, diagnose_graph
from fxstudio.core.model.request import OpenRequest

__all__ = [
    "PASS_MODEL",
    "STEPS",
    "TRAPS",
    "Diagnosis",
    "LessonState",
    "Question",
    "Step",
    "Verdict",
    "diagnose",
    "pattern_exercise",
    "quiz",
    "record_comparison",
    "record_stepper",
    "record_trap",
    "replay_note",
    "trace_order",
]


def diagnose(request: OpenRequest, opened: GraphDocument | CaptureError) -> list[Diagnosis]:
    """What went wrong opening ``request`` and how to fix it: ``opened`` is the document it
    gave (a graph that captured wrong: each finding, with its fixes tried -- each captures the
    model again, so run it off the GUI thread) or the :class:`CaptureError` it raised (one
    diagnosis, at the user's line)."""
    if isinstance(opened, CaptureError):
        return [diagnose_failure(request, opened)]
    return diagnose_graph(opened)
