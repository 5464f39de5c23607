"""A rewrite's cost at scale (issue 38): runs node by node without the interpreter's cost, the
check and the shape runs on bounded threads (put back after), shapes after thousands of alike
replacements worked out once per kind of call, a deferred document's catch-up started from
what its edits touched, and an edit's lint made on the nodes it changed -- each giving what
the whole-graph way gives."""

from pathlib import Path

import pytest
import torch
import torch.fx as fx
from torch import nn

from fxstudio.core import edits
from fxstudio.core.edits import Ref
from fxstudio.core.edits.catchup import catch_up
from fxstudio.core.edits.engine import lint_nodes
from fxstudio.core.edits.snapshots import adopt, detached, propagated, snapshot, views
from fxstudio.core.errors import EditError
from fxstudio.core.flows import OpenRequest, open_document
from fxstudio.core.graph.document import ChangeKind, GraphDocument
from fxstudio.core.graph.edited import touched_since
from fxstudio.core.graph.execution import Current, bookkeeping_threads, run_nodes, threads
from fxstudio.core.graph.propagation import downstream, propagate_shapes
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.patterns.check import check, reference

#: 32 x (linear -> relu -> add)
DEEP = f"{Path(__file__).parents[1] / 'bench' / 'synthetic.py'}:deep_100"


class Several(nn.Module):
    """A call_method, a weight read directly (get_attr), keyword arguments, an input with a
    default value and a tuple out."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.scale = nn.Parameter(torch.full((4,), 0.5))

    def forward(self, x, shift=1.0):
        y = self.lin(x).clamp(min=-0.5, max=0.5) * self.scale
        return torch.cat([y, x], dim=1), (y + shift).sum(dim=-1)


def shapes(doc):
    return [(r.name, r.shape, r.dtype) for r in doc.rows()]


def whole_run_shapes(doc):
    """The document's shapes worked out from scratch (the whole graph run)."""
    for node in doc.graph.nodes:
        node.meta.pop("val", None)
    propagate_shapes(doc.graph_module, doc.example_inputs, graph=doc.graph)
    doc.emit(ChangeKind.SHAPES_CHANGED)
    return shapes(doc)


def test_run_nodes_computes_what_the_interpreter_computes():
    gm = fx.symbolic_trace(Several())
    x = torch.randn(3, 4)
    seen = []
    got = run_nodes(gm, gm.graph, (x,), lambda node, value: seen.append(node.name))
    want = fx.Interpreter(gm).run(x)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert seen == [n.name for n in gm.graph.nodes if n.op != "output"]
    at = Current()
    with pytest.raises(RuntimeError):
        run_nodes(gm, gm.graph, (torch.randn(3, 5),), at=at)  # the linear refuses 5 features
    assert at.node is not None and at.node.name == "lin"


def test_a_bookkeeping_run_of_small_ops_is_on_one_thread_and_the_count_put_back():
    before = torch.get_num_threads()
    with threads(2):
        small = fx.symbolic_trace(nn.Sequential(nn.Linear(4, 4), nn.ReLU()))
        with bookkeeping_threads(small, (torch.randn(2, 4),)) as n:
            assert n == torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
        big = fx.symbolic_trace(nn.Sequential(nn.Linear(512, 512)))
        with bookkeeping_threads(big, (torch.randn(64, 512),)) as n:
            assert n == torch.get_num_threads() == 2  # large ops keep every thread
        with pytest.raises(ValueError), bookkeeping_threads(small, (torch.randn(2, 4),)):
            raise ValueError
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == before


def test_the_check_runs_before_and_after_on_the_same_threads_and_puts_the_count_back():
    doc = open_document("examples:simple")
    before = torch.get_num_threads()
    ref = reference(doc)
    assert ref.threads == 1 and torch.get_num_threads() == before  # small ops: one thread
    result = check(doc, ref, exact=True)
    assert result.ok and result.max_abs_diff == 0.0 and torch.get_num_threads() == before
    copy = detached(snapshot(doc))  # not compiled: run node by node, the same values
    assert not copy.compiled and check(copy, ref, exact=True).max_abs_diff == 0.0


def test_the_check_runs_a_model_in_training_mode_in_eval_mode_and_leaves_it_so():
    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)))
    gm.train()
    doc = GraphDocument(gm, None, (torch.randn(8, 4),))
    ref = reference(doc)
    assert check(doc, ref, exact=True).max_abs_diff == 0.0  # no dropout drawn: eval mode
    assert all(m.training for m in gm.modules())


def test_thousands_of_alike_replacements_get_the_shapes_a_whole_run_gives():
    doc = open_document(OpenRequest(DEEP, "fx"))
    kept = {n.name: n.meta["val"] for n in doc.graph.nodes if "val" in n.meta}
    spec = RewriteSpec(
        pattern_code="def pattern(x):\n    return torch.relu(x)\n",
        replacement_code=(
            "def replacement(x):\n    return torch.cat([torch.relu(x), x], -1)[..., :16]\n"
        ),
    )
    report = rewrite_flow(doc, RewriteRequest(spec))
    assert len(report.result.replaced) == 32 and report.check is not None and report.check.ok
    # the linears before were not run again: their shapes are the very values they had
    assert all(n.meta["val"] is kept[n.name] for n in doc.graph.nodes if n.op == "call_module")
    after = shapes(doc)
    assert after == whole_run_shapes(doc) and doc.shape_problem is None


def test_a_node_that_does_not_fit_leaves_every_shape_as_it_was():
    doc = open_document(OpenRequest("examples:simple", "export"))
    vals = {n: n.meta.get("val") for n in doc.graph.nodes}
    relu = doc.node("relu")
    relu.target = torch.ops.aten.t.default  # 2x32 -> 32x2: the next linear refuses it
    with pytest.raises(RuntimeError):
        downstream(doc.graph_module, doc.graph, {"relu"})
    assert all(n.meta.get("val") is vals[n] for n in doc.graph.nodes)


def test_a_deferred_documents_catch_up_starts_from_what_its_edits_touched():
    doc = open_document(OpenRequest(DEEP, "fx"))
    doc.defer_heavy = True
    vals = {n.name: n.meta["val"] for n in doc.graph.nodes if "val" in n.meta}
    edits.set_target(doc, "relu_3", "torch.tanh")
    edits.set_inputs(doc, "add_7", [Ref("add_6"), Ref("layers_7")])
    assert doc.shapes_stale
    assert touched_since(doc.graph_module, doc.version) == ({"relu_3", "add_7"}, set())
    assert catch_up(doc) and not doc.shapes_stale
    kept = [n for n in doc.graph.nodes if n.meta.get("val") is vals.get(n.name)]
    assert len(kept) == len(doc.graph.nodes) - 2  # all but the two touched
    assert shapes(doc) == whole_run_shapes(doc)
    edits.set_target(doc, "relu_5", "torch.sigmoid")  # after a catch-up: this edit's node
    assert touched_since(doc.graph_module, doc.version) == ({"relu_5"}, set())


def test_edits_on_shapes_stale_for_another_reason_leave_the_whole_graph_to_run():
    doc = open_document("examples:negrelu")
    doc.defer_heavy = True
    doc.shapes_stale = True  # (not by an edit noted here)
    edits.set_target(doc, "relu", "torch.tanh")
    assert touched_since(doc.graph_module, doc.version) is None
    assert catch_up(doc) and shapes(doc) == whole_run_shapes(doc)


def test_a_rewrite_on_a_copy_propagates_only_what_it_touched():
    doc = open_document(OpenRequest(DEEP, "fx"))
    copy = detached(snapshot(doc))
    kept = {n.name: n.meta["val"] for n in copy.graph.nodes if "val" in n.meta}
    spec = RewriteSpec(
        pattern_code="def pattern(x):\n    return torch.relu(x)\n",
        replacement_code="def replacement(x):\n    return torch.nn.functional.relu(x)\n",
    )
    report = rewrite_flow(copy, RewriteRequest(spec))
    assert report.check is not None and report.check.ok and copy.shapes_stale
    touched = touched_since(copy.graph_module, copy.version)
    assert touched is not None and len(touched[0]) == 64  # 32 new nodes, 32 adds re-pointed
    propagated(copy)
    assert not copy.shapes_stale
    assert all(n.meta["val"] is kept[n.name] for n in copy.graph.nodes if n.op == "call_module")
    assert shapes(copy) == whole_run_shapes(copy)


def test_an_edit_is_linted_on_the_nodes_it_changed():
    doc = open_document("examples:negrelu")
    index = doc.node_index()
    lint_nodes(doc.graph, ["neg", "add"], index)  # as they are: valid
    doc.node("add").append(doc.node("neg"))  # neg now after its user add
    with pytest.raises(RuntimeError, match="'neg' of Node 'add' was used before"):
        lint_nodes(doc.graph, ["neg"], index)
    doc.node("relu").prepend(doc.node("neg"))  # back
    with pytest.raises(EditError, match="comes after it"):  # the edit's own check says so
        edits.set_inputs(doc, "neg", [Ref("mul")])
    gm = fx.symbolic_trace(nn.Sequential(nn.ReLU()))
    node = next(n for n in gm.graph.nodes if n.op == "call_module")
    node.target = "missing"
    with pytest.raises(RuntimeError, match="nonexistent attribute missing"):
        lint_nodes(gm.graph, [node.name], {node.name: node})


def test_the_note_of_what_edits_touched_is_dropped_when_another_change_came_between():
    doc = open_document("examples:negrelu")
    doc.defer_heavy = True
    edits.set_target(doc, "relu", "torch.tanh")
    doc.emit(ChangeKind.GRAPH_REPLACED)  # a change this note did not see
    edits.set_target(doc, "neg", "torch.sigmoid")
    assert touched_since(doc.graph_module, doc.version) is None


RELU_TO_F = RewriteSpec(
    pattern_code="def pattern(x):\n    return torch.relu(x)\n",
    replacement_code="def replacement(x):\n    return torch.nn.functional.relu(x)\n",
)
F_TO_RELU = RewriteSpec(
    pattern_code="def pattern(x):\n    return torch.nn.functional.relu(x)\n",
    replacement_code="def replacement(x):\n    return torch.relu(x)\n",
)


def test_a_rewrite_after_a_checked_one_takes_the_model_before_from_that_check():
    doc = open_document(OpenRequest(DEEP, "fx"))
    first = rewrite_flow(doc, RewriteRequest(RELU_TO_F))
    assert first.check is not None and first.check.ok
    kept = doc.kept_values("check/3")
    assert kept is not None and kept.holds_for(doc)
    assert reference(doc) is kept  # the model after the first rewrite: not run again
    with torch.no_grad():  # its outputs are what a run of the model gives now
        for inputs, outputs in zip(kept.inputs, kept.outputs, strict=True):
            assert len(outputs) == 1 and torch.equal(doc.graph_module(*inputs), outputs[0])
    second = rewrite_flow(doc, RewriteRequest(F_TO_RELU))
    assert second.check is not None and second.check.ok and second.check.runs == 3
    assert doc.kept_values("check/3") is not kept  # this version's own
    second.result.edit.undo()
    assert doc.kept_values() == {}  # another version of the graph: nothing kept for it


def test_kept_outputs_do_not_hold_once_a_weight_or_an_input_changed(monkeypatch):
    doc = open_document(OpenRequest(DEEP, "fx"))
    rewrite_flow(doc, RewriteRequest(RELU_TO_F))
    kept = doc.kept_values("check/3")
    with torch.no_grad():
        next(doc.graph_module.parameters()).add_(1.0)  # in place: same graph, other values
    assert not kept.holds_for(doc)
    again = reference(doc)
    assert again is not kept and not torch.equal(again.outputs[0][0], kept.outputs[0][0])
    assert doc.kept_values("check/3") is again  # (kept in its turn)
    doc.example_inputs = tuple(x.clone() for x in doc.example_inputs)
    assert not again.holds_for(doc) and reference(doc) is not again
    monkeypatch.setattr("fxstudio.core.patterns.check.KEEP_BYTES", 0)  # too big to keep
    rewrite_flow(doc, RewriteRequest(F_TO_RELU))
    assert doc.kept_values() == {}


def test_kept_outputs_go_with_the_graph_to_a_workers_copy_and_come_back_adopted():
    doc = open_document(OpenRequest(DEEP, "fx"))
    rewrite_flow(doc, RewriteRequest(RELU_TO_F))
    kept = doc.kept_values("check/3")
    snap = snapshot(doc)
    copy = detached(snap)
    assert copy.kept_values("check/3") is kept and kept.holds_for(copy)
    report = rewrite_flow(copy, RewriteRequest(F_TO_RELU))
    assert report.check is not None and report.check.ok
    after = copy.kept_values("check/3")
    propagated(copy)
    edit = adopt(doc, snap, copy, report.result.edit, views(copy))
    assert doc.kept_values("check/3") is after and after.holds_for(doc)
    edit.undo()  # the graph before, and its values with it
    assert doc.kept_values("check/3") is kept and reference(doc) is kept


def test_a_rewrite_on_a_copy_writes_again_only_the_rows_it_changed():
    """The worker's rows (snapshots.views) take the document's where a node is as it was:
    the 32 replacements and the 32 adds that use them are written again, nothing else."""
    from fxstudio.core.graph.graphviews import make_row

    doc = open_document(OpenRequest(DEEP, "fx"))
    doc.defer_heavy = True
    before = {r.name: r for r in doc.rows()}
    snap = snapshot(doc)
    copy = detached(snap)
    report = rewrite_flow(copy, RewriteRequest(RELU_TO_F))
    known = views(propagated(copy))
    assert known["rows"] == [make_row(n) for n in copy.graph.nodes]
    again = [r for r in known["rows"] if r is not before.get(r.name)]
    assert len(again) == 64 and {r.target for r in again} == {
        "torch.nn.functional.relu",
        "operator.add",
    }
    adopt(doc, snap, copy, report.result.edit, known)
    assert doc.rows() is known["rows"] and doc.row_memo  # the memo came with them
    doc.drop_caches()
    assert doc.rows() == known["rows"] and doc.rows()[5] is known["rows"][5]
