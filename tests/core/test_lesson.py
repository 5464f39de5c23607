"""Learn FX without a window: every step's check on real documents and real actions (edits,
a stepper, the pattern engine, the trap fixes, a timed comparison, the export frontend)."""

import json

import pytest
import torch

from fxstudio.core import edits
from fxstudio.core.errors import CaptureError
from fxstudio.core.flows.lesson import traced_nodes
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.lesson import demos
from fxstudio.core.lesson.syllabus import (
    DEFAULT_MODEL,
    PASS_MODEL,
    STEPS,
    TRAPS,
    LessonState,
    code_target,
    count_word,
    record_comparison,
    record_stepper,
    record_trace_size,
    record_trap,
    step_index,
    trace_size_wanted,
)
from fxstudio.core.model.fixes import diagnose_failure, diagnose_graph
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.patterns.explain import explain
from fxstudio.core.patterns.making import compile_function, from_function
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.pattern import DEFAULT_RULES
from fxstudio.core.runtime.speedup import compare
from fxstudio.core.sessions.documents import open_document
from fxstudio.core.sessions.sessionfile import read_session, save_session
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
    state.facts["matched"] = 1  # Find found the fixed pattern: what is left is Replace
    verdict = check("pattern", docs_module, state).message
    assert "It missed" not in verdict and "matches now (1 place)" in verdict
    assert "Press Replace accepted in the Patterns dock" in verdict
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
    assert "press Compare in the Run dock" in check("pass", after, state).message
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
        and "symbolic tracing gives 6" in verdict.message
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


def test_step_10_counts_a_fresh_trace_not_the_graph_step_9_folded() -> None:
    """After step 9's fold the open ResNet is not what symbolic tracing gives: step 10 says
    how many nodes a fresh trace has, and the folded graph's count as the folded graph's."""
    state = LessonState()
    traced = len(open_document(PASS_MODEL))
    folded = open_document(PASS_MODEL)
    rewrite_flow(folded, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    assert len(folded) < traced  # (54 and 39)
    STEPS[step_index("export")].begin(folded, state)
    assert trace_size_wanted(state) == PASS_MODEL  # counted by the window, off its thread
    record_trace_size(state, PASS_MODEL, traced_nodes(folded.request))
    assert trace_size_wanted(state) is None
    exported = open_document(OpenRequest(PASS_MODEL, "export"))
    said = check("export", exported, state).message
    assert f"symbolic tracing gives {traced}" in said
    assert f"the fx graph you had open has {len(folded)} after 1 edit" in said
    aten = sum(
        isinstance(n.target, torch._ops.OpOverload)
        for n in exported.graph.nodes
        if n.op == "call_function"
    )
    gets = sum(n.op == "get_attr" for n in exported.graph.nodes)
    assert said.startswith(f"The export graph has {len(exported)} nodes")
    assert f"{aten} ATen calls, {gets} get_attr reads" in said
    # another model opened with export: nothing said of the ResNet's trace
    other = open_document(OpenRequest(DEFAULT_MODEL, "export"))
    assert "symbolic tracing" not in check("export", other, state).message


def test_every_count_the_lesson_states_is_of_what_it_names(docs_module) -> None:
    """Step 1 of an edited graph says it is edited, not "traced"; the opcodes the IR step
    counts are the graph's, its table has as many rows as it says there are opcodes, and the
    questions and traps are as many as the steps say."""
    import re

    state = LessonState()
    assert "traced: 6 nodes" in check("pick", docs_module, state).message
    edits.rename(docs_module, "add", "added")
    said = check("pick", docs_module, state).message
    assert "traced" not in said and "6 nodes now, after 1 edit to its trace" in said
    ir = STEPS[step_index("ir")]
    intro = ir.intro(docs_module, state)
    rows = re.findall(r"^\| `(\w+)` \| (\d+) \|", intro, re.M)
    assert f"There are {count_word(len(rows))} opcodes" in intro and ir.title.endswith(
        f"{count_word(len(rows))} opcodes"
    )
    assert sum(int(n) for _, n in rows) == len(docs_module)
    assert (
        ir.task(docs_module, state)
        == f"Answer the {count_word(len(demos.quiz(docs_module)))} questions."
    )
    state.facts["fixed"] = [cid for cid, _, _ in TRAPS]
    assert check("failures", None, state).message == (
        f"All {count_word(len(TRAPS))} traps explained and fixed."
    )
    failures = STEPS[step_index("failures")].intro(None, state)
    assert f"The {count_word(len(TRAPS))} classic cases" in failures
