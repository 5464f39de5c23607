"""Every flow's result keeps the flows' promise (:class:`fxstudio.core.results.Result`): the
same data as JSON, in words, and written to a file."""

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
