"""The Compile dock: graph breaks found by Dynamo, listed at their lines, each marked on the
canvas at the nodes it falls at; a model without breaks says so.  Compile and time: the
kernels, with their nodes; a model with graph breaks opened in part, compiled as
torch.compile does."""

import textwrap

import pytest
from PySide6.QtCore import Qt

from tests.qt.conftest import open_and_wait, select_row

GATED = textwrap.dedent("""
    import torch
    from torch import nn

    class Gate(nn.Module):
        def forward(self, h):
            if h.sum() > 0:
                return h * 2
            return h

    class Gated(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.gate = Gate()

        def forward(self, x):
            h = self.fc(x)
            print("h is", h.shape)
            h = self.gate(h)
            return torch.relu(h)

    def example_inputs():
        return (torch.randn(2, 4),)
""")


def test_breaks_listed_and_marked_on_the_canvas(qtbot, docks, write_model):
    ctx = docks("compile")
    path = write_model(GATED)
    ctx.open(f"{path}:Gated", leaf_modules=("Gate",))
    dock = ctx.panels["compile"]
    dock.dock.show()
    with qtbot.waitSignal(dock.explained, timeout=120000):
        dock.find_button.click()
    assert dock.summary.text().endswith("2 graph breaks:")
    assert [dock.breaks.item(i).text() for i in range(dock.breaks.count())] == [
        "1. model.py:19 — print or logging",
        "2. model.py:7 — A branch on a tensor's value",
    ]
    # the nodes made at the print's line: its h.shape read
    assert ctx.selection.names == ["getattr_1"]
    assert "is_compiling" in dock.detail.text() and len(dock._marks) == 2
    # the branch is inside Gate, kept as one node: the break falls at that node
    dock.breaks.setCurrentRow(1)
    assert ctx.selection.names == ["gate"]
    assert "torch.where" in dock.detail.text()
    # the graphs Dynamo made, listed; picking one selects the nodes made where its ops were
    assert dock.graphs.count() == 4 and dock.graphs.isVisibleTo(dock.dock)
    assert dock.graphs.item(0).text() == "Graph 1 — 5 nodes · model.py:18"
    picked = []
    for row in range(4):
        dock.graphs.setCurrentRow(row)
        picked.append(ctx.selection.names)
    assert picked == [["fc"], ["gate"], ["gate"], ["relu"]]


def test_a_model_without_breaks_says_so(qtbot, docks):
    ctx = docks("compile")
    ctx.open("examples:simple")
    dock = ctx.panels["compile"]
    with qtbot.waitSignal(dock.explained, timeout=120000):
        dock.find_button.click()
    assert "no graph breaks" in dock.summary.text() and dock.breaks.count() == 0
    assert dock.graphs.count() == 1 and not dock.graphs.isVisibleTo(dock.dock)


def test_compile_and_time_lists_the_kernels_and_outlines_a_fused_group(qtbot, docks):
    ctx = docks("compile", "console")
    ctx.open("examples:negrelu")
    ctx.panels["run"].min_time.setValue(0.1)
    tab = ctx.panels["compile"].kernels
    with qtbot.waitSignal(tab.shown, timeout=300000):
        tab.button.click()
    result = tab.result
    # a row a kernel, and the time outside every kernel: parts + outside = the profiled call
    assert tab.table.rowCount() == len(result.kernels) + 1 > 1
    texts = [tab.table.item(r, 0).text() for r in range(tab.table.rowCount())]
    outside = texts.index("(outside every kernel)")
    cells = [float(tab.table.item(r, 1).text()) for r in range(tab.table.rowCount())]
    assert cells[outside] == pytest.approx(result.unattributed_s * 1e3, abs=6e-4)
    assert sum(cells) == pytest.approx(result.profiled_s * 1e3, abs=6e-4 * len(cells))
    select_row(tab.table, outside)
    assert tab.current_kernel() is None
    assert "speed-up" in tab.summary.text() and "Compiled in" in tab.summary.text()
    fused = next(k for k in result.kernels if len(k.nodes) > 1)
    assert set(fused.nodes) == {"neg", "relu", "add", "mul"}
    # the fused group on the canvas: each of its nodes outlined (a child of its node item)
    scene = ctx.canvas.scene()
    outlined = {item.parentItem() for item in tab.marks.items}
    assert outlined == {scene.nodes[n] for n in fused.nodes}
    # picking the kernel selects its nodes and draws it as the current one
    tab.pick(result.kernels.index(fused))
    assert tab.current_kernel() is fused and set(ctx.selection.names) == set(fused.nodes)
    assert max(item.pen().widthF() for item in tab.marks.items) == 4.0
    # an edit makes the result stale: said, and the outlines go
    ctx.panels["console"].run("edits.set_target('relu', 'torch.sigmoid')")
    assert "changed since" in tab.summary.text() and tab.marks.items == []
    # another model: the result is dropped
    ctx.open("examples:simple")
    assert tab.result is None and tab.table.rowCount() == 0


def test_a_graph_that_cannot_run_says_why_and_keeps_the_result_empty(qtbot, docks):
    ctx = docks("compile", "console")
    ctx.open("examples:negrelu")
    ctx.panels["run"].min_time.setValue(0.1)
    # zeros(tensor): edits.set_target refuses it now; a raw statement on the graph is kept
    ctx.panels["console"].run(
        "next(n for n in graph.nodes if n.name == 'neg').target = torch.zeros"
    )
    tab = ctx.panels["compile"].kernels
    with qtbot.waitSignal(tab.failed, timeout=300000) as failed:
        tab.button.click()
    assert failed.args[0].startswith("Could not compile the graph: ")
    assert "zeros" in failed.args[0] and "Traceback" not in failed.args[0]
    assert tab.summary.text() == failed.args[0] and tab.result is None
    qtbot.waitUntil(lambda: tab.button.isEnabled())


def test_freeze_weights_compiles_with_the_weights_folded(qtbot, docks):
    ctx = docks("compile")
    ctx.open("examples:negrelu")
    ctx.panels["run"].min_time.setValue(0.1)
    tab = ctx.panels["compile"].kernels
    tab.freezing.setChecked(True)
    with qtbot.waitSignal(tab.shown, timeout=300000):
        tab.button.click()
    assert tab.result.freezing and "weights frozen" in tab.summary.text()


def test_a_model_opened_in_part_is_compiled_as_torch_compile_does(qtbot, docks, write_model):
    ctx = docks("compile")
    # Gate's branch on a tensor's value is kept inside a leaf module (the model opened in
    # part); Dynamo breaks there and at the print: the eager model is compiled, its kernels
    # shown by graph and line, each tied to the document's nodes made there
    path = write_model(GATED)
    ctx.open(f"{path}:Gated", leaf_modules=("Gate",))
    ctx.panels["run"].min_time.setValue(0.05)
    dock = ctx.panels["compile"]
    tab = dock.kernels
    with qtbot.waitSignal(tab.shown, timeout=300000):
        tab.button.click()
    result = tab.result
    assert result.source == "model" and result.graphs == 4
    assert "the eager model, 4 graphs" in tab.summary.text()
    # the breaks found on the way are shown on the Graph breaks tab, and its graphs listed
    assert dock.result is result.explained and dock.breaks.count() == 2
    assert dock.graphs.count() == 4 and dock.graphs.isVisibleTo(dock.dock)
    dock.graphs.setCurrentRow(3)
    assert ctx.selection.names == ["relu"]
    # a row a kernel (and the time outside them), with its graph and the lines it computes
    rows = {
        tab.table.item(r, 0).data(Qt.ItemDataRole.UserRole): r for r in range(tab.table.rowCount())
    }
    assert len(rows) == len(result.kernels) + 1
    for index, k in enumerate(result.kernels):
        assert tab.table.item(rows[index], 3).text() == str(k.graph + 1)
        assert tab.table.item(rows[index], 4).text().startswith("model.py:")
    # the branch's kernels (graphs 2 and 3) are the Gate node's: picking one selects it
    gate = next(i for i, k in enumerate(result.kernels) if k.graph == 1)
    tab.pick(gate)
    assert ctx.selection.names == ["gate"]
    first = next(i for i, k in enumerate(result.kernels) if k.graph == 0)
    tab.pick(first)
    assert ctx.selection.names == ["fc"]


PRINTY = textwrap.dedent("""
    import torch
    from torch import nn

    class Printy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            print("fc done")
            h = torch.relu(h)
            return h * 2

    def example_inputs():
        return (torch.randn(2, 4),)
""")


def _cuts(window):
    return [
        i.text() for i in window.canvas.scene().items() if hasattr(i, "text") and "✂" in i.text()
    ]


def test_a_print_that_makes_no_node_says_so_and_selects_nothing(qtbot, docks, write_model):
    ctx = docks("compile")
    # the print's line makes no node: the break is marked after the nodes right before it
    # (fc), nothing is selected -- not the next line's relu
    path = write_model(PRINTY)
    ctx.open(f"{path}:Printy")
    dock = ctx.panels["compile"]
    dock.dock.show()
    ctx.selection.select(["x"])
    with qtbot.waitSignal(dock.explained, timeout=120000):
        dock.find_button.click()
    assert dock.breaks.item(0).text() == "1. model.py:12 — print or logging"
    assert ctx.selection.names == []
    assert "Line 12 makes no node of the graph" in dock.detail.text()
    assert "right after fc" in dock.detail.text()
    assert _cuts(ctx) == ["✂ graph break after these (line 12 makes no node): print or logging"]


def test_break_marks_go_with_the_dock_and_with_the_model(qtbot, window, write_model):
    path = write_model(GATED)
    open_and_wait(qtbot, window, f"{path}:Gated", signal="layoutShown", leaf_modules=("Gate",))
    window.layouts.use("profile")
    dock = window.panels["compile"]
    dock.dock.show()
    with qtbot.waitSignal(dock.explained, timeout=120000):
        dock.find_button.click()
    assert len(_cuts(window)) == 1
    window.layouts.use("learn")  # no Compile dock there: no marks of it on the canvas
    assert dock.dock.isHidden() and _cuts(window) == []
    window.layouts.use("profile")
    dock.dock.show()
    assert len(_cuts(window)) == 1
    # Dynamo still running when another model opens: its breaks are not shown on that one
    dock.find_button.click()
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    qtbot.waitUntil(lambda: dock.task is None, timeout=120000)
    assert dock.breaks.count() == 0 and _cuts(window) == []


def test_graph_breaks_of_a_structure_only_model_are_found_without_weights(qtbot, docks):
    """Find graph breaks runs Dynamo on fake tensors when the document has no weights."""
    ctx = docks("compile")
    ctx.open("examples:resnet", weights=False)
    dock = ctx.panels["compile"]
    with qtbot.waitSignal(dock.explained, timeout=120000):
        dock.find_button.click()
    assert "no graph breaks" in dock.summary.text() and dock.breaks.count() == 0
