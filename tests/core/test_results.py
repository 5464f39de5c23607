"""Every flow's result keeps the flows' promise (:class:`fxstudio.core.results.Result`): the
same data as JSON, in words, and written to a file; a rewrite made on a copy is what the
document adopts."""

import importlib

import pytest

from fxstudio.core.results import Result

RESULTS = [
    "fxstudio.core.flows.compile:CompileResult",
    "fxstudio.core.flows.diff:DiffResult",
    "fxstudio.core.flows.layout:LayoutResult",
    "fxstudio.core.flows.memory:MemoryResult",
    "fxstudio.core.flows.render:RenderResult",
    "fxstudio.core.flows.report:ReportResult",
    "fxstudio.core.flows.step:StepResult",
    "fxstudio.core.patterns.apply:Report",
    "fxstudio.core.patterns.explain:Explanation",
    "fxstudio.core.runtime.profiling:Profile",
]


@pytest.mark.parametrize("where", RESULTS)
def test_a_flows_result_is_json_words_and_a_file(where):
    module, name = where.split(":")
    assert issubclass(getattr(importlib.import_module(module), name), Result)


def test_a_result_that_breaks_the_promise_is_told():
    class NoFile:
        def to_json(self):
            return {}

        def describe(self):
            return ""

    assert not issubclass(NoFile, Result)


def test_an_explanation_is_written_as_its_json(tmp_path):
    import json

    import torch

    from fxstudio.core.patterns.explain import explain
    from fxstudio.core.patterns.making import from_function
    from fxstudio.core.patterns.pattern import FX_RULES

    def graph(x):
        return torch.relu(-x)

    def pattern(x):
        return torch.sigmoid(-x)  # a near miss: the op after neg differs

    found = explain(torch.fx.symbolic_trace(graph), from_function(pattern, rules=FX_RULES))
    found.write(tmp_path / "why.json")
    written = json.loads((tmp_path / "why.json").read_text())
    assert written == found.to_json() and written, written


def test_a_rewrite_made_on_a_copy_is_adopted_as_one_edit_of_the_document():
    """What the window does with a worker's rewrite (rewrite_copy, then adopt): the document
    gets it as one undoable edit; a document changed meanwhile refuses it (Stale)."""
    from fxstudio.core.edits import set_target
    from fxstudio.core.edits.snapshots import Stale, detached, snapshot
    from fxstudio.core.flows import RewriteRequest, RewriteSpec, open_document, rewrite_copy

    doc = open_document("examples:negrelu")
    code = doc.code()
    snap = snapshot(doc)
    done = rewrite_copy(detached(snap), RewriteRequest(RewriteSpec(builtin="negrelu")))
    assert doc.code() == code  # (the worker's copy, not the document)
    edit = done.adopt(doc, snap)
    assert edit is not None and done.report.result.edit is edit
    assert doc.code() != code
    edit.undo()
    assert doc.code() == code

    snap = snapshot(doc)
    late = rewrite_copy(detached(snap), RewriteRequest(RewriteSpec(builtin="negrelu")))
    set_target(doc, "relu", "torch.nn.functional.gelu")  # the document goes on meanwhile
    with pytest.raises(Stale):
        late.adopt(doc, snap)
