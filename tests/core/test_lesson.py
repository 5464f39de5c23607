"""Learn FX without a window: every step's check on real documents and real actions (edits,
a stepper, the pattern engine, the trap fixes, a timed comparison, the export frontend)."""

import json

import pytest
import torch

from fxstudio.core import edits
from fxstudio.core.errors import CaptureError
from fxstudio.core.lesson import demos
from fxstudio.core.lesson.steps import (
    DEFAULT_MODEL,
    PASS_MODEL,
    STEPS,
    TRAPS,
    LessonState,
    code_target,
    record_comparison,
    record_stepper,
    record_trap,
    step_index,
)
from fxstudio.core.model.fixes import diagnose_failure, diagnose_graph
from fxstudio.core.model.request import OpenRequest
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.patterns.explain import explain
from fxstudio.core.patterns.making import compile_function, from_function
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.pattern import DEFAULT_RULES
from fxstudio.core.runtime.speedup import compare
from fxstudio.core.saving.sessionfile import read_session, save_session
from fxstudio.core.saving.sessions import open_document
from fxstudio.core.stepping.stepper import for_document


def check(step_id, doc, state):
    return STEPS[step_index(step_id)].check(doc, state)


@pytest.fixture
def docs_module():
    return open_document(DEFAULT_MODEL)


def test_ten_steps_each_with_a_check_that_fails_before_the_action(docs_module) -> None:
    assert len(STEPS) == 10 and len({s.id for s in STEPS}) == 10
    state = LessonState()
    for step in STEPS:
        assert step.intro(docs_module, state)  # computed on the model, never empty
        assert step.task(docs_module, state)
    assert check("pick", docs_module, state).ok
    assert not check("pick", None, state).ok
    for step in STEPS[1:]:
        if step.begin:
            step.begin(docs_module, state)
        assert not step.check(docs_module, state).ok, step.id  # nothing done yet


def test_trace_quiz_and_code_steps(docs_module) -> None:
    state = LessonState()
    order = demos.trace_order(docs_module)
    assert [name for name, _, _ in order] == ["x", "param", "add", "linear", "clamp", "output"]
    assert order[2][2].text.startswith("return self.linear(x + self.param)")
    state.facts["replayed"] = 3
    assert "3 of 6" in check("trace", docs_module, state).message
    state.facts["replayed"] = len(order)
    assert check("trace", docs_module, state).ok
    state.answers = {"opcode": "call_method", "leaf": "leaf"}
    verdict = check("ir", docs_module, state)
    assert not verdict.ok and "add is call_function" in verdict.message
    state.answers["opcode"] = "call_function"
    assert check("ir", docs_module, state).ok
    name, line = code_target(docs_module)
    assert (name, line) == ("linear", 4) and docs_module.node_at_line(line) == name
    state.facts["selected"] = "add"
    assert not check("code", docs_module, state).ok
    state.facts["selected"] = docs_module.node_at_line(line)
    assert check("code", docs_module, state).ok


def test_interpreter_step_records_the_stepper(docs_module) -> None:
    state = LessonState()
    stepper = for_document(docs_module)
    stepper.run(limit=3)
    record_stepper(state, stepper)
    assert "3 of 6" in check("interpret", docs_module, state).message
    stepper.run_to_end()
    record_stepper(state, stepper)
    verdict = check("interpret", docs_module, state)
    assert verdict.ok and "agrees with the eager model" in verdict.message


def test_surgery_needs_a_changed_target_and_a_relu_and_shows_the_stale_code_bug(
    docs_module,
) -> None:
    state = LessonState()
    STEPS[step_index("surgery")].begin(docs_module, state)
    demo = demos.stale_code_demo(docs_module)
    assert demo.stale_same and demo.recompiled_differs > 0  # the real bug, run on a copy
    assert "add = x + param" in demo.stale_code_line
    edits.set_target(docs_module, "add", "operator.mul")
    assert "insert a relu" in check("surgery", docs_module, state).message
    edits.insert(docs_module, "call_function", "torch.relu", [edits.Ref("add")])
    verdict = check("surgery", docs_module, state)
    assert verdict.ok and "operator.add → operator.mul" in verdict.message
    assert "x * param" in verdict.message or "mul" in verdict.message


def test_pattern_step_needs_the_miss_and_then_a_rewrite(docs_module) -> None:
    state = LessonState()
    STEPS[step_index("pattern")].begin(docs_module, state)
    ex = demos.pattern_exercise(docs_module)
    assert ex.node == "clamp" and "max = 6.0" in ex.miss
    fn, source = compile_function(ex.miss)
    pattern = from_function(fn, dialect="fx", rules=DEFAULT_RULES, source=source)
    found = Matcher(pattern).find(docs_module.graph_module)
    assert not found.matches
    why = explain(docs_module.graph_module, pattern, found=found).describe()
    assert "6.0" in why and "1.0" in why  # the report names the literal
    state.facts["missed"] = why.splitlines()[0]
    assert "Fix it" in check("pattern", docs_module, state).message
    report = rewrite_flow(
        docs_module,
        RewriteRequest(RewriteSpec(pattern_code=ex.fix, replacement_code=ex.replacement)),
    )
    assert report.result.edit is not None and report.check.ok
    assert check("pattern", docs_module, state).ok


def test_every_trap_is_explained_at_its_line_and_fixed_by_a_recapture() -> None:
    state = LessonState()
    for cid, spec, _ in TRAPS:
        request = OpenRequest(spec)
        try:
            doc = open_document(request)
        except CaptureError as exc:
            diagnosis = diagnose_failure(request, exc)
        else:
            (diagnosis,) = diagnose_graph(doc)
        assert diagnosis.location is not None and spec.split(":")[1] in diagnosis.location.filename
        assert diagnosis.fixes, cid
        record_trap(state, open_document(diagnosis.fixes[0].request))
        assert cid in state.facts["fixed"]
    assert check("failures", None, state).ok
    kinds = {
        diagnose_failure(OpenRequest("examples:trap_if"), _error("examples:trap_if")).rule,
        diagnose_failure(OpenRequest("examples:trap_len"), _error("examples:trap_len")).rule,
    }
    assert kinds == {"tensor-if", "len"}


def _error(spec):
    try:
        open_document(spec)
    except CaptureError as exc:
        return exc
    raise AssertionError(f"{spec} traced")


def test_the_real_pass_and_export_steps() -> None:
    state = LessonState()
    before = open_document(PASS_MODEL)
    after = open_document(PASS_MODEL)
    assert "BatchNorm" in check("pass", after, state).message
    rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    assert "compare" in check("pass", after, state).message
    record_comparison(state, compare(before, after, threads=1, min_time=0.05))
    verdict = check("pass", after, state)
    assert verdict.ok and "×" in verdict.message and "95 % CI" in verdict.message
    fx_doc = open_document(DEFAULT_MODEL)
    STEPS[step_index("export")].begin(fx_doc, state)
    assert not check("export", fx_doc, state).ok
    exported = open_document(OpenRequest(DEFAULT_MODEL, "export"))
    verdict = check("export", exported, state)
    assert (
        verdict.ok
        and "ATen calls" in verdict.message
        and "symbolic tracing gave 6" in verdict.message
    )


def test_the_lesson_state_saves_in_a_session(tmp_path, docs_module) -> None:
    state = LessonState(step=4, done=["pick", "trace"], answers={"opcode": "call_function"})
    state.facts["fixed"] = ["trap_len"]
    path = tmp_path / "lesson.fxstudio"
    save_session(docs_module, path, lesson=state.to_json())
    data = read_session(path)
    restored = LessonState.from_json(data.extra["lesson"])
    assert restored == state
    assert LessonState.from_json({"step": 99}).step == len(STEPS) - 1  # clamped
    json.dumps(state.to_json())
    assert torch.is_tensor(docs_module.example_inputs[0])


def test_a_trap_without_an_automatic_fix_says_so_and_ordinary_models_have_no_traps() -> None:
    request = OpenRequest("examples:branchy")  # the branch is in the top-level forward
    diagnosis = diagnose_failure(request, _error("examples:branchy"))
    assert diagnosis.rule == "tensor-if" and diagnosis.fixes == ()  # export cannot follow it
    assert "torch.cond" in diagnosis.explanation and "branchy.py" in diagnosis.describe()
    for spec in ("examples:resnet", "examples:transformer", "examples:trap_if"):
        if spec.endswith("trap_if"):
            doc = open_document(OpenRequest(spec, leaf_modules=("gate",)))
        else:
            doc = open_document(spec)
        assert diagnose_graph(doc) == [], spec
