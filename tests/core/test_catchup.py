"""Code, rows and shapes of a big graph brought up to date from a snapshot, off the editing
thread (fxstudio.core.edits.catchup)."""

from __future__ import annotations

import threading

import pytest

from fxstudio.core import edits
from fxstudio.core.edits import catchup, snapshots
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.sessions.documents import open_document


def deferred(spec: str, frontend: str = "fx"):
    doc = open_document(OpenRequest(spec, frontend=frontend))
    doc.defer_heavy = True
    return doc


def test_an_edit_on_a_big_graph_leaves_code_and_shapes_for_later():
    doc = deferred("examples:simple")
    events = []
    doc.subscribe(events.append)
    edits.set_target(doc, "act", "fc2")  # act runs (2x32 -> 2x4); fc2 after it no longer fits
    assert not doc.code_ready() and doc.shapes_stale and doc.shape_problem is None
    assert "act = self.fc2(fc1)" in doc.code()  # asked for, the code is generated: never stale
    assert catchup.catch_up(doc) and not doc.shapes_stale
    assert doc.shape_problem[0] == "fc2"
    assert "shapes cannot be multiplied" in doc.shape_problem[1]
    assert events[-1].kind.name == "SHAPES_CHANGED"
    assert events[-1].names == {"fc2"}  # the problem; fc2's shape cleared from there on
    assert doc.row("fc2").shape == ""
    assert not catchup.catch_up(doc)  # nothing left
    doc.ensure_compiled()  # before it runs
    assert doc.compiled and "act = self.fc2(fc1)" in doc.graph_module.code


@pytest.mark.parametrize(
    "spec,frontend",
    [
        ("examples:resnet", "fx"),
        ("examples:transformer", "fx"),
        ("examples:transformer", "export"),
        ("examples:simple", "export"),
    ],
)
def test_the_snapshot_gives_what_recompile_and_shape_propagation_give(spec, frontend):
    doc = deferred(spec, frontend)
    name = next(n for n in doc.node_names() if doc.node(n).op == "call_function")
    user = doc.users(name)[0]
    edits.splice(doc, name, user, "call_function", "torch.tanh")
    result = catchup.compute(snapshots.snapshot(doc, modules=False))  # (as the window reads)
    reference = open_document(OpenRequest(spec, frontend=frontend))  # the same edit, in sync
    edits.splice(reference, name, user, "call_function", "torch.tanh")
    assert result.code == reference.code()  # recompile()'s code, character for character
    assert result.lines == reference.code_line_map()
    assert result.rows == reference.rows()  # names, targets, args, shapes, dtypes, modules
    assert catchup.apply(doc, result)
    assert doc.code() == reference.code() and doc.rows() == reference.rows()
    assert doc.shape_problem == reference.shape_problem is None


def test_a_result_for_an_older_graph_is_dropped():
    doc = deferred("examples:negrelu")
    edits.set_target(doc, "relu", "torch.tanh")
    snap = snapshots.snapshot(doc)
    edits.set_target(doc, "neg", "torch.sigmoid")  # while the worker runs
    result = catchup.compute(snap)
    events = []
    doc.subscribe(events.append)
    assert not catchup.apply(doc, result)
    assert not events and doc.shapes_stale and not doc.code_ready()
    assert catchup.catch_up(doc)
    assert "neg = torch.sigmoid(x)" in doc.code() and "relu = torch.tanh(y)" in doc.code()


def test_the_live_graph_is_untouched_by_the_work_on_the_snapshot():
    doc = deferred("examples:negrelu")
    edits.splice(doc, "x", "neg", "call_function", "torch.unsqueeze", [0])
    snap = snapshots.snapshot(doc)
    before = {n.name: dict(n.meta) for n in doc.graph.nodes}
    result = catchup.compute(snap)
    assert {n.name: dict(n.meta) for n in doc.graph.nodes} == before
    assert result.changed == {"unsqueeze", "neg", "add", "mul"}  # 4x8 -> 1x4x8 from there
    catchup.apply(doc, result)
    assert doc.row("mul").shape == "1x4x8"


def test_a_held_snapshot_keeps_the_shapes_of_its_version():
    doc = deferred("examples:negrelu")
    held, quick = snapshots.snapshot(doc, held=True), snapshots.snapshot(doc)
    shape = {n[2]: tuple(n[7]["val"].shape) for n in held.nodes if "val" in n[7]}
    edits.splice(doc, "x", "neg", "call_function", "torch.unsqueeze", [0])
    assert catchup.catch_up(doc) and doc.row("mul").shape == "1x4x8"  # the live meta moved on
    mul = next(n for n in quick.nodes if n[2] == "mul")
    assert tuple(mul[7]["val"].shape) == (1, 4, 8)  # a quick one reads the live dicts
    graph = snapshots.rebuild(held)
    kept = {n.name: tuple(n.meta["val"].shape) for n in graph.nodes if "val" in n.meta}
    assert kept == shape and kept["mul"] == (4, 8)


def test_downstream_shape_changes_are_in_the_edit_event():
    doc = open_document("examples:negrelu")  # small: shapes in the edit itself
    events = []
    doc.subscribe(events.append)
    edits.splice(doc, "x", "neg", "call_function", "torch.unsqueeze", [0])
    assert events[-1].reshaped == {"neg", "add", "mul", "unsqueeze"}  # their labels change
    assert doc.row("add").shape == "1x4x8"


def test_edits_while_a_worker_computes_never_land_half_done():
    """The editing thread goes on while a worker works on snapshots: whatever it applies
    matches the graph it applies to."""
    doc = deferred("examples:resnet")
    relus = [n for n in doc.node_names() if doc.node(n).target == "relu" or "relu" in n][:6]
    results = []

    def work(snap):
        results.append(catchup.compute(snap))

    for i, name in enumerate(relus):
        thread = threading.Thread(target=work, args=(snapshots.snapshot(doc),))
        thread.start()
        edits.rename(doc, name, f"renamed_{i}")  # while the worker reads its snapshot
        thread.join()
        assert not catchup.apply(doc, results[-1])  # for the graph before the rename
    assert catchup.catch_up(doc)
    reference = open_document("examples:resnet")
    for i, name in enumerate(relus):
        edits.rename(reference, name, f"renamed_{i}")
    assert doc.code() == reference.code() and doc.rows() == reference.rows()


def test_a_view_made_while_an_edit_lands_is_not_kept_for_the_new_graph():
    """A layout worker reads rows and the module tree while the user edits: what it made
    from the old graph must not be cached as the new graph's."""
    from fxstudio.core.graph.graphviews import make_row

    doc = open_document("examples:negrelu")

    def rows_while_an_edit_lands():
        rows = [make_row(n) for n in doc.graph.nodes]
        edits.set_target(doc, "relu", "torch.tanh")  # the GUI thread, meanwhile
        return rows

    stale = doc._cached("rows", rows_while_an_edit_lands)
    assert [r.target for r in stale if r.name == "relu"] == ["torch.relu"]
    assert [r.target for r in doc.rows() if r.name == "relu"] == ["torch.tanh"]


def test_a_catch_up_writes_again_only_the_rows_its_edits_changed():
    """Rows are taken from the last ones made where a node's op, target, arguments, shape
    and module are as they were (graphviews.make_rows) -- never a row that no longer holds."""
    from fxstudio.core.graph.graphviews import make_row

    doc = deferred("examples:resnet")
    before = {r.name: r for r in doc.rows()}
    edits.rename(doc, "layer1_0_relu_1", "r")  # its users' arguments now read r
    edits.splice(doc, "r", "layer1_1_conv1", "call_function", "torch.neg")
    assert catchup.catch_up(doc)
    rows = {r.name: r for r in doc.rows()}
    assert doc.rows() == [make_row(n) for n in doc.graph.nodes]
    again = {name for name, row in rows.items() if row is not before.get(name)}
    assert again == {"r", "neg", "layer1_1_conv1", "add_1"}
    assert (
        rows["add_1"].args == "(layer1_1_bn2, r)"
        and rows["neg"].shape == rows["r"].shape == "1x16x32x32"
    )
    edits.splice(
        doc,
        "layer3_1_relu",
        "layer3_1_conv2",
        "call_function",
        "torch.nn.functional.avg_pool2d",
        [2],
    )
    assert catchup.catch_up(doc)  # half as wide and high from there on
    assert doc.rows() == [make_row(n) for n in doc.graph.nodes]
    assert doc.row("layer3_1_conv2").shape != rows["layer3_1_conv2"].shape
