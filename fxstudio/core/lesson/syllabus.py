"""The steps of *Learn FX*, the lesson's state, and each step's check.

A step is a state of the window (what it opens, what it shows) plus a check on what the
learner did: the document itself (an edit, a rewrite, a frontend) or the facts the window
records as the learner acts (nodes replayed, the node selected, how far the Step dock ran,
a pattern that missed, the traps fixed, a measured speed-up).  Every check is a plain
function of (document, state) -> :class:`Verdict`, run in the test suite without Qt.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document(DEFAULT_MODEL)
    >>> state = LessonState()
    >>> STEPS[0].check(doc, state).ok
    True
    >>> STEPS[1].check(doc, state).ok, STEPS[1].id
    (False, 'trace')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.lesson import beyond, checks, demos
from fxstudio.core.lesson.beyond import case_fixed, trace_size_wanted
from fxstudio.core.lesson.checks import code_target
from fxstudio.core.lesson.state import (
    DEFAULT_MODEL,
    PASS_MODEL,
    STEP_COUNT,
    TRAPS,
    Check,
    LessonState,
    Text,
    Verdict,
    count_word,
)

__all__ = [
    "DEFAULT_MODEL",
    "PASS_MODEL",
    "STEPS",
    "TRAPS",
    "LessonState",
    "Step",
    "Verdict",
    "case_fixed",
    "code_target",
    "count_word",
    "record_comparison",
    "record_stepper",
    "record_trap",
    "record_trace_size",
    "step_index",
    "trace_size_wanted",
]


@dataclass(frozen=True)
class Step:
    id: str
    title: str
    intro: Text  # Markdown, computed on the learner's model
    task: Text  # what to do, one or two sentences
    check: Check
    begin: Callable[[GraphDocument | None, LessonState], None] | None = None
    opens: Callable[[GraphDocument | None, LessonState], str | None] | None = None  # a spec


def _fixed_text(text: str) -> Text:
    return lambda doc, state: text


STEPS: tuple[Step, ...] = (
    Step(
        "pick",
        "Pick a model",
        checks.pick_intro,
        _fixed_text("Keep the docs' module open, or open your own (File ▸ Open model…)."),
        checks.pick_check,
        opens=lambda doc, state: state.model if doc is None else None,
    ),
    Step(
        "trace",
        "Watch the trace happen",
        checks.trace_intro,
        _fixed_text("Press Replay the trace and watch each node appear with your line."),
        checks.trace_check,
    ),
    Step(
        "ir",
        f"The IR: {count_word(len(demos.OPCODES))} opcodes",
        checks.ir_intro,
        lambda doc, state: (
            f"Answer the {count_word(len(demos.quiz(doc)))} questions."
            if doc is not None
            else "Open a model."
        ),
        checks.ir_check,
    ),
    Step("code", "Generated code, linked", checks.code_intro, checks.code_task, checks.code_check),
    Step(
        "interpret",
        "Step the Interpreter",
        checks.interpret_intro,
        _fixed_text("In the Step dock, step (F11) or continue (F8) to the end of the graph."),
        checks.interpret_check,
    ),
    Step(
        "surgery",
        "Graph surgery",
        checks.surgery_intro,
        checks.surgery_task,
        checks.surgery_check,
        checks.surgery_begin,
    ),
    Step(
        "pattern",
        "replace_pattern, and why a pattern misses",
        checks.pattern_intro,
        checks.pattern_task,
        checks.pattern_check,
        checks.pattern_begin,
    ),
    Step(
        "failures",
        "The classic failures",
        beyond.failures_intro,
        _fixed_text("Open each trap and press its fix."),
        beyond.failures_check,
    ),
    Step(
        "pass",
        "A real pass: conv + BN folding, measured",
        beyond.pass_intro,
        beyond.pass_task,
        beyond.pass_check,
        opens=lambda doc, state: (
            PASS_MODEL if doc is None or doc.request.spec != PASS_MODEL else None
        ),
    ),
    Step(
        "export",
        "What torch.export sees",
        beyond.export_intro,
        beyond.export_task,
        beyond.export_check,
        beyond.export_begin,
    ),
)


def step_index(step_id: str) -> int:
    return next(i for i, s in enumerate(STEPS) if s.id == step_id)


assert len(STEPS) == STEP_COUNT


# -- what the window records (the same calls in the tests) -----------------------------------------


def record_stepper(state: LessonState, stepper: Any) -> None:
    """How far the Step dock ran on which graph, and where it first differed from eager."""
    state.facts.update(
        step_position=stepper.position,
        step_total=len(stepper),
        step_differs=stepper.first_difference(),
    )


def record_comparison(state: LessonState, comparison: Any) -> None:
    """The before/after speed-up the Run dock measured."""
    w = comparison.whole
    state.facts.update(speedup=w.speedup, ci=[w.ci_low, w.ci_high], significant=bool(w.significant))


def record_trace_size(state: LessonState, spec: str, nodes: int) -> None:
    """How many nodes a fresh symbolic trace of ``spec`` has (:func:`trace_size_wanted`):
    what step 10 compares the export graph with, when the graph open was edited."""
    if state.baseline.get("fx_spec") == spec:
        state.baseline["fx_nodes"] = nodes


def record_trap(state: LessonState, doc: GraphDocument | None) -> None:
    """A trap's model captured without its trap: count it fixed."""
    for cid, spec, _ in TRAPS:
        if case_fixed(doc, spec) and cid not in state.facts.setdefault("fixed", []):
            state.facts["fixed"].append(cid)
