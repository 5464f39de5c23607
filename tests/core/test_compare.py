"""Two graphs compared (fxstudio.core.compare): alignment by each kind of evidence, values
on the same inputs and the first difference, per-node data in and out.  Values are compared
in this process (both graphs run here on the same tensors), at the dtype's tolerance."""

import csv
import json
import textwrap

import pytest
import torch

from fxstudio.core.compare.align import align, op_kind
from fxstudio.core.compare.overlay import (
    GRAPH_ID,
    OverlayError,
    read_overlay,
    write_model_explorer,
    write_netron,
)
from fxstudio.core.compare.sides import ordered
from fxstudio.core.compare.values import compare_values
from fxstudio.core.edits import splice
from fxstudio.core.graph.nodedata import Overlay
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.sessions.documents import open_document


@pytest.fixture
def before():
    return open_document("examples:resnet")


def calls(doc):
    return [n.name for n in doc.graph.nodes if n.op in ("call_module", "call_function")]


def test_a_fold_removes_the_batchnorms_and_pairs_each_conv_as_changed(before):
    after = open_document("examples:resnet")
    rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    a = align(before, after)
    modules = dict(before.graph_module.named_modules())
    bns = [n for n in calls(before) if op_kind(before.node(n), modules) == "batchnorm"]
    assert len(bns) == 15 and a.removed == bns and a.added == []
    convs = [p for p in a.pairs if p.how == "provenance"]
    assert len(convs) == 15
    assert all(p.status == "changed" and p.why == "rewritten" and p.left == p.right for p in convs)
    # everything else is the same node, unchanged (a relu after a folded BatchNorm included)
    assert {p.status for p in a.pairs if p.how != "provenance"} == {"same"}
    values = compare_values(before, after, a)
    assert values.first_difference is None
    assert max(v.max_rel_diff for v in values.nodes) < 1e-4  # the fold's own check tolerance


def test_the_fx_and_the_export_capture_align_with_no_value_difference(before):
    exported = open_document(OpenRequest("examples:resnet", "export"))
    a = align(before, exported)
    left_share, right_share = a.coverage(before, exported)
    assert left_share == 1.0 and right_share >= 0.9
    conv = a.pair_of_left("layer1_0_conv1")
    assert exported.node(conv.right[0]).target == torch.ops.aten.conv2d.default
    assert conv.how == "source" and conv.status == "same"
    values = compare_values(before, exported, a)
    assert values.first_difference is None and len(values.nodes) == len(a.pairs)


def test_an_inserted_op_is_added_and_the_first_difference_is_its_user(before):
    after = open_document("examples:resnet")
    splice(after, "layer2_0_relu", "layer2_0_conv2", "call_function", "operator.mul", (2.0,))
    a = align(before, after)
    assert a.added == ["mul"] and a.removed == []
    assert all(p.status == "same" for p in a.pairs)  # its user's input is the same value
    values = compare_values(before, after, a)
    assert values.first_difference == "layer2_0_conv2"
    order = [n.name for n in after.graph.nodes]
    first = order.index("layer2_0_conv2")
    assert not any(v.differs for v in values.nodes if order.index(v.right) < first)


def test_a_changed_target_is_changed_and_differs_there(before):
    after = open_document("examples:negrelu")
    from fxstudio.core.edits import set_target

    set_target(after, "relu", "torch.sigmoid")
    a = align(open_document("examples:negrelu"), after)
    pair = a.pair_of_left("relu")
    assert pair.right == ("relu",) and pair.status == "changed" and pair.why == "kind"
    assert compare_values(open_document("examples:negrelu"), after, a).first_difference == "relu"


def test_two_models_written_differently_align_by_structure(write_model):
    common = "import torch\nfrom torch import nn\n"
    left = write_model(
        common
        + textwrap.dedent("""
        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.first = nn.Linear(4, 8)
                self.second = nn.Linear(8, 2)
            def forward(self, x):
                return self.second(torch.relu(self.first(x)) * 3)
        def example_inputs():
            return (torch.randn(2, 4),)
    """),
        "left.py",
    )
    right = write_model(
        common
        + textwrap.dedent("""
        class Other(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(4, 8)
                self.b = nn.Linear(8, 2)
            def forward(self, inp):
                h = self.a(inp)
                h = torch.relu(h)
                h = h * 3
                return self.b(h)
        def example_inputs():
            return (torch.randn(2, 4),)
    """),
        "right.py",
    )
    one, other = open_document(f"{left}:M"), open_document(f"{right}:Other")
    a = align(one, other)
    assert a.removed == [] and a.added == []
    assert a.pair_of_left("first").right == ("a",) and a.pair_of_left("second").right == ("b",)
    assert {p.how for p in a.pairs} >= {"structure"}
    # both built under the same seed: the same weights, so every pair agrees (right pairs)
    values = compare_values(one, other, a)
    assert values.first_difference is None and len(values.nodes) == len(a.pairs)


def test_an_earlier_version_of_the_document_is_before_wherever_the_comparison_starts(
    before, tmp_path
):
    from fxstudio.core.edits import set_target
    from fxstudio.core.sessions.sessionfile import save_session

    now = open_document("examples:resnet")
    rewrite_flow(now, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    assert ordered(now, before) == (before, now)  # the model it was rewritten from: before
    assert ordered(before, now) == (before, now)
    save_session(now, tmp_path / "folded.fxstudio")
    reopened = open_document(str(tmp_path / "folded.fxstudio"))
    set_target(reopened, "add", "torch.add")  # an edit since the session it was opened from
    session = open_document(str(tmp_path / "folded.fxstudio"))
    assert ordered(reopened, session) == (session, reopened)
    # not an earlier version: the document stays on the left
    other = open_document("examples:resnet")
    set_target(other, "add", "torch.add")
    assert ordered(other, now) == (other, now)  # edits apart: neither came from the other
    simple = open_document("examples:simple")
    assert ordered(simple, before) == (simple, before) and ordered(now, now) == (now, now)
    names = {p.left[0] for p in align(*ordered(now, before)).pairs if p.status == "changed"}
    assert "layer1_0_conv1" in names and "layer1_0_bn1" in align(before, now).removed


def test_op_kinds_are_one_word_across_captures(before):
    exported = open_document(OpenRequest("examples:resnet", "export"))
    modules = dict(before.graph_module.named_modules())
    fx_kinds = {op_kind(before.node(n), modules) for n in calls(before)}
    ex_modules = dict(exported.graph_module.named_modules())
    ex_kinds = {op_kind(exported.node(n), ex_modules) for n in calls(exported)}
    assert {"conv", "batchnorm", "relu", "add", "adaptiveavgpool", "flatten", "linear"} <= fx_kinds
    assert fx_kinds <= ex_kinds | {"guards"}


def test_different_inputs_are_refused_with_a_message(before):
    other = open_document(OpenRequest("examples:resnet", inputs=("2x3x16x16",)))
    from fxstudio.core.runtime.ondevice import RunError

    with pytest.raises(RunError, match="different inputs"):
        compare_values(before, other, align(before, other))


# --- per-node data in and out ----------------------------------------------------------------


def test_model_explorer_node_data_has_the_formats_fields(tmp_path, before):
    out = tmp_path / "times.json"
    names = calls(before)
    write_model_explorer(Overlay("time", {n: float(i) for i, n in enumerate(names)}, "ms"), out)
    data = json.loads(out.read_text())
    assert list(data) == [GRAPH_ID]  # graph id -> GraphNodeData
    graph = data[GRAPH_ID]
    assert set(graph) <= {"results", "thresholds", "gradient"}
    assert set(graph["results"]) == set(names)  # node ids: the FX node names
    assert all(
        set(r) == {"value"} and isinstance(r["value"], float) for r in graph["results"].values()
    )
    stops = [g["stop"] for g in graph["gradient"]]
    assert (
        stops[0] == 0
        and stops[-1] == 1
        and all(g["bgColor"].startswith("#") for g in graph["gradient"])
    )
    back = read_overlay(out)
    assert back.values == {n: float(i) for i, n in enumerate(names)}
    netron = tmp_path / "times.netron.json"
    write_netron(Overlay("time", {"conv": 2.5}), netron)
    assert read_overlay(netron).values == {"conv": 2.5} and read_overlay(netron).what == "time"


def test_a_csv_and_our_json_read_as_overlays(tmp_path):
    path = tmp_path / "data.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["node", "time_ms"])
        w.writerows([["conv", "1.5"], ["relu", "0.25"]])
    o = read_overlay(path)
    assert o.what == "time_ms" and o.values == {"conv": 1.5, "relu": 0.25}
    assert o.share("conv") == 1.0 and o.share("relu") == 0.0 and o.unknown({"conv"}) == ["relu"]
    ours = tmp_path / "ours.json"
    ours.write_text(json.dumps({"nodes": [{"name": "conv", "value": 3}]}))
    assert read_overlay(ours).values == {"conv": 3.0}


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        ('{"graph": {"results": {"conv": {"value": "fast"}}}}', "not a number"),
        ("[]", "holds no per-node data"),
    ],
)
def test_a_bad_overlay_file_says_what_is_wrong(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(OverlayError, match=message):
        read_overlay(path)
    with pytest.raises(OverlayError, match="Cannot read"):
        read_overlay(tmp_path / "missing.json")
