"""The Memory dock's training step (a small LLaMA, over a small panel context): the timeline
shows the whole step -- forward, backward, optimizer step, the phases marked, the step's
peak starred at its node; *Backward* lists the backward's nodes in order, one row each, and
what is live at the step's peak; a click on a backward row, or on a backward point of the
plot, selects the document's node it comes from."""

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from fxstudio.core.process.guard import format_bytes
from fxstudio.qt.panels.memory.step import NAME_ROLE, ORIGIN_ROLE, is_input

LLAMA = (
    "hf:llama(num_hidden_layers=2, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, vocab_size=1000)"
)


def train(qtbot, docks):
    """The dock after a training step's estimate; (the context, the panel, the step's JSON)."""
    ctx = docks("memory")
    ctx.open(LLAMA, inputs=("1x256:int64",))
    panel = ctx.panels["memory"]
    panel.train.setChecked(True)
    with qtbot.waitSignal(panel.finished, timeout=180000) as done:
        panel.run_button.click()
    data = done.args[0].to_json()
    panel.dock.setFloating(True)  # (room for the plot and the tables)
    panel.dock.resize(1200, 800)
    return ctx, panel, data


def test_the_timeline_shows_the_whole_step_its_phases_and_its_peak(qtbot, docks):
    ctx, panel, data = train(qtbot, docks)
    step, plot = data["training"], panel.plot
    assert panel.step_bar.isVisible() and panel.whole_step.isChecked()
    drawn = plot.step
    runs = [r for r in step["forward"] if not is_input(r)] + [
        r for r in step["backward"] if not is_input(r)
    ]
    assert list(drawn.names) == [r["name"] for r in runs] + ["optimizer.step"]
    assert len(plot.points.points()) == len(drawn.names)
    # the phases marked in execution order, each a band over its own nodes
    assert [t.toPlainText() for t in plot.phase_labels] == ["forward", "backward", "optimizer step"]
    spans = {label: (first, last) for label, first, last in drawn.spans}
    assert set(drawn.phases[spans["backward"][0] : spans["backward"][1] + 1]) == {"backward"}
    # the step's peak starred where the estimate says it is, everything held included
    i = drawn.peak
    assert (drawn.phases[i], drawn.names[i]) == (step["peak_phase"], step["peak_node"])
    assert drawn.held + max(drawn.during) == step["peak_bytes"] == drawn.held + drawn.during[i]
    label = plot.peak_label.toPlainText()
    assert f"training peak {format_bytes(step['peak_bytes'])}" in label
    where = "in the optimizer's step" if step["peak_phase"] == "optimizer" else step["peak_node"]
    assert where in label
    # what is live there, in words in the summary
    summary = " ".join(panel.summary.toPlainText().split())
    assert f"Live at the step's peak ({format_bytes(step['peak_bytes'])}" in summary
    assert f"{len(step['live_at_peak'])} value(s)" in summary
    # the forward's timeline back, on request
    panel.whole_step.setChecked(False)
    assert plot.step is None and list(plot.now.names) == [n["name"] for n in data["nodes"]]


def test_the_backward_table_has_a_row_per_node_and_a_click_selects_its_origin(qtbot, docks):
    ctx, panel, data = train(qtbot, docks)
    step, doc = data["training"], ctx.document
    assert not panel.step_tabs.isVisible()  # on request
    panel.backward_button.click()
    assert panel.step_tabs.isVisible()
    table = panel.backward_table
    model = table.model()
    assert model.rowCount() == len(step["backward"])
    names = [model.index(r, 1).data() for r in range(model.rowCount())]
    assert names == [r["name"] for r in step["backward"]]  # in order
    row = next(
        k
        for k, r in enumerate(step["backward"])
        if r["bytes"] and r["origin"] and r["origin"] != r["name"] and r["origin"] in doc
    )
    index = model.index(row, 1)
    assert index.data(ORIGIN_ROLE) == step["backward"][row]["origin"]
    table.scrollTo(index)
    qtbot.waitUntil(lambda: table.visualRect(index).isValid())
    with qtbot.waitSignal(ctx.selection.changed, timeout=5000):
        QTest.mouseClick(
            table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(index).center()
        )
    origin = step["backward"][row]["origin"]
    assert ctx.selection.names == [origin]
    assert origin in panel.status_label.text()
    # a node of autograd's own (the loss's gradient): said, nothing selected
    own = next(k for k, r in enumerate(step["backward"]) if not r["origin"])
    table.scrollTo(model.index(own, 1))
    QTest.mouseClick(
        table.viewport(),
        Qt.MouseButton.LeftButton,
        pos=table.visualRect(model.index(own, 1)).center(),
    )
    assert "comes from no node of the document" in panel.status_label.text()
    assert ctx.selection.names == [origin]
    # a node selected in the document: the backward's first node from it is made current
    other = next(r["origin"] for r in step["backward"] if r["origin"] not in (None, origin))
    ctx.selection.select([other])
    assert table.currentIndex().data(ORIGIN_ROLE) == other
    # sorted by the bytes (as numbers), then back in order by #
    table.sortByColumn(3, Qt.SortOrder.DescendingOrder)
    shown = [model.index(r, 3).data(Qt.ItemDataRole.UserRole) for r in range(model.rowCount())]
    assert shown == sorted((r["bytes"] for r in step["backward"]), reverse=True)
    assert model.index(0, 1).data(ORIGIN_ROLE) == next(
        r["origin"] or "" for r in step["backward"] if r["name"] == model.index(0, 1).data()
    )
    table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
    assert [model.index(r, 1).data() for r in range(model.rowCount())] == names
    # what is live at the peak: one row a value, the largest first
    live = panel.live_table.model()
    assert live.rowCount() == len(step["live_at_peak"])
    listed = {live.index(r, 0).data(NAME_ROLE) for r in range(live.rowCount())}
    assert listed == set(step["live_at_peak"])
    sizes = [live.index(r, 2).data(Qt.ItemDataRole.UserRole) for r in range(live.rowCount())]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > 0


def test_clicking_a_backward_point_selects_the_node_it_comes_from(qtbot, docks):
    ctx, panel, data = train(qtbot, docks)
    plot = panel.plot
    qtbot.waitUntil(lambda: plot.widget.viewport().height() > 250)
    drawn = plot.step
    doc = ctx.document
    first, last = next((f, la) for label, f, la in drawn.spans if label == "backward")
    i = next(k for k in range(first, last + 1) if drawn.origins[k] in doc)
    with qtbot.waitSignal(ctx.selection.changed, timeout=5000):
        QTest.mouseClick(
            plot.widget.viewport(), Qt.MouseButton.LeftButton, pos=plot.point_position(i).toPoint()
        )
    origin = drawn.origins[i]
    assert ctx.selection.names == [origin]
    # every point of that node -- its forward's and its backward's -- ringed
    ringed = plot.ringed()
    assert i in ringed and {drawn.origins[k] for k in ringed} == {origin}
    assert {drawn.phases[k] for k in ringed} >= {"backward"}
