"""The Memory dock (over a small panel context): the estimate runs in a worker on a copy of
the graph; its timeline has a point per node (a click selects the node, the selection rings
its point); the Nodes dock gets bytes columns and the canvas a heat by bytes; *Save memory
JSON…* writes what ``fxstudio memory --json`` writes; a rewrite is drawn before / after."""

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest

from fxstudio.core.errors import UserError
from fxstudio.core.flows.memory import MemoryRequest, memory_flow
from fxstudio.core.graph.graphviews import NodeRow
from fxstudio.core.process.guard import format_bytes
from tests.conftest import run_fxstudio

LLAMA = (
    "hf:llama(num_hidden_layers=2, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, vocab_size=1000)"
)


def estimate(qtbot, panel):
    with qtbot.waitSignal(panel.finished, timeout=120000) as done:
        panel.run_button.click()
        assert not panel.run_button.isEnabled()  # one at a time
    return done.args[0]


def test_the_estimate_shows_as_a_timeline_bytes_columns_and_heat(qtbot, docks):
    ctx = docks("memory")
    doc = ctx.open("examples:resnet")
    panel = ctx.panels["memory"]
    code = doc.code()
    result = estimate(qtbot, panel)
    data = result.to_json()
    nodes = data["nodes"]
    assert doc.code() == code and panel.run_button.isEnabled()  # the document is as it was
    # the timeline: one point per node of the estimate, every one a node of the document, in
    # execution order; the peak marked where the estimate says it is
    plot = panel.plot
    names = [n["name"] for n in nodes]
    assert [p.data() for p in plot.points.points()] == names
    assert set(names) <= set(doc.node_names()) and len(names) >= len(doc.node_names()) - 1
    assert names == [n for n in doc.node_names() if n in set(names)]
    assert plot.now.names[plot.now.peak] == data["peak_node"]
    assert format_bytes(data["peak_bytes"]) in plot.peak_label.toPlainText()
    # the status line and the summary in words, not raw bytes
    said = panel.status_label.text()
    assert said.startswith(f"Peak {format_bytes(data['peak_bytes'])} of activations at ")
    assert str(data["peak_bytes"]) not in said
    assert panel.summary.toPlainText()
    # the Nodes dock: Bytes and Live after, sorted by the bytes
    model = ctx.panels["table"].model
    first = len(NodeRow.COLUMNS)
    assert model.headerData(first, Qt.Orientation.Horizontal) == "Bytes"
    assert model.headerData(first + 1, Qt.Orientation.Horizontal) == "Live after"
    conv = next(n for n in nodes if n["bytes"] > 0 and "conv" in n["name"])
    cell = model.index(model.row_of(conv["name"]), first)
    assert cell.data() == format_bytes(conv["bytes"])
    assert cell.data(Qt.ItemDataRole.UserRole) == conv["bytes"]
    # the heat by bytes: it turns the heat by time off, tints each node that allocates
    run = ctx.panels["run"]
    assert run.heat.isChecked() and not panel.heat.isChecked() and not panel.marks.items
    panel.heat.setChecked(True)
    assert not run.heat.isChecked()
    scene = ctx.canvas.scene()
    drawn = {n["name"] for n in nodes if n["bytes"] > 0 and n["name"] in scene.nodes}
    assert drawn and len(panel.marks.items) >= len(drawn)
    assert scene.heat is panel.marks
    texts = {tag.owner.name: tag.text for tag, _box in panel.marks.tags_shown(ctx.canvas)}
    assert texts and all(t.endswith("iB") or t.endswith(" B") for t in texts.values())
    most = max(n["bytes"] for n in nodes if n["name"] in drawn)
    top = panel.marks.tags[0]  # the hottest: the most bytes (a node's, or a module box's)
    assert top.share >= most and (top.owner.name in scene.groups or top.share == most)
    run.heat.setChecked(True)  # the heat by time back: the one by bytes goes
    assert not panel.heat.isChecked() and not panel.marks.items


def test_clicking_a_point_selects_its_node_and_the_selection_rings_it(qtbot, docks):
    ctx = docks("memory")
    ctx.open("examples:resnet")
    panel = ctx.panels["memory"]
    estimate(qtbot, panel)
    plot = panel.plot
    panel.dock.setFloating(True)  # (room for the plot)
    panel.dock.resize(900, 700)
    qtbot.waitUntil(lambda: plot.widget.viewport().height() > 250)
    name = "layer1_0_conv1"
    at = plot.point_position(name).toPoint()
    with qtbot.waitSignal(ctx.selection.changed, timeout=5000):
        QTest.mouseClick(plot.widget.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert ctx.selection.names == [name]
    assert plot.ringed() == [plot.now.names.index(name)]
    ctx.selection.select(["layer2_0_relu"])  # from the document: its point is ringed
    assert plot.ringed() == [plot.now.names.index("layer2_0_relu")]
    ctx.selection.select([])
    assert plot.ringed() == []
    # the theme switched: the plot's background follows the palette
    from fxstudio.qt import theme

    try:
        theme.set_colors(True)
        assert plot.widget.backgroundBrush().color() == QColor(theme.dark_palette().base().color())
    finally:
        theme.set_colors(False)  # (the process's colours: left as found)


def test_saved_memory_json_is_what_the_flow_writes(qtbot, docks, tmp_path):
    ctx = docks("memory")
    doc = ctx.open("examples:resnet")
    panel = ctx.panels["memory"]
    panel.inputs.setText("2x3x64x64")
    estimate(qtbot, panel)
    assert panel.save(tmp_path / "memory.json")
    saved = json.loads((tmp_path / "memory.json").read_text())
    request = MemoryRequest(inputs="2x3x64x64")
    assert saved == json.loads(json.dumps(memory_flow(doc, request).to_json()))
    assert "Wrote" in panel.status_label.text()


def test_saved_memory_json_equals_the_command_lines(qtbot, docks, tmp_path):
    ctx = docks("memory")
    ctx.open("examples:resnet", inputs=("2x3x64x64",))
    panel = ctx.panels["memory"]
    estimate(qtbot, panel)
    assert panel.save(tmp_path / "window.json")
    cli = tmp_path / "cli.json"
    ran = run_fxstudio("memory", "examples:resnet", "--input", "2x3x64x64", "--json", str(cli))
    assert ran.returncode == 0, ran.stderr
    assert json.loads((tmp_path / "window.json").read_text()) == json.loads(cli.read_text())


def test_a_training_step_measured_shows_its_breakdown_and_the_measured_peak(qtbot, docks):
    ctx = docks("memory")
    ctx.open("examples:resnet")
    panel = ctx.panels["memory"]
    panel.train.setChecked(True)
    assert panel.optimizer.isEnabled() and not panel.device.isEnabled()
    panel.optimizer.setCurrentIndex(panel.optimizer.findData("adam"))
    panel.measure.setChecked(True)
    data = estimate(qtbot, panel).to_json()
    step, measured = data["training"], data["measured_peak_bytes"]
    assert step["optimizer"] == "adam" and step["optimizer_bytes"] >= 2 * step["grads_bytes"]
    summary = panel.summary.toPlainText()
    for what, key in (("gradients", "grads_bytes"), ("optimizer state", "optimizer_bytes")):
        assert f"{what} {format_bytes(step[key])}" in " ".join(summary.split())
    assert "eval mode" in summary  # the window's model: the step of the graph as opened
    said = panel.status_label.text()
    assert f"measured {format_bytes(measured)}" in said
    assert f"training step {format_bytes(step['peak_bytes'])}" in said
    legend = [label.text for _sample, label in panel.plot.legend.items]  # the whole step
    assert f"measured step on cpu: peak {format_bytes(step['measured_peak_bytes'])}" in legend
    panel.whole_step.setChecked(False)  # the forward, its measured timeline
    legend = [label.text for _sample, label in panel.plot.legend.items]
    assert f"measured on cpu: peak {format_bytes(measured)}" in legend


def test_a_rewrite_is_drawn_before_and_after_and_the_old_result_is_stale(qtbot, docks):
    from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow

    ctx = docks("memory")
    doc = ctx.open("examples:resnet")
    panel = ctx.panels["memory"]
    first = estimate(qtbot, panel).to_json()
    assert "before" not in first
    with qtbot.waitSignal(ctx.session.graphStateChanged, timeout=10000):
        report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    assert report.check.ok
    model = ctx.panels["table"].model
    first_column = len(NodeRow.COLUMNS)
    assert model.headerData(first_column, Qt.Orientation.Horizontal) == "Bytes (stale)"
    assert "stale" in panel.status_label.text()
    second = estimate(qtbot, panel).to_json()
    assert second["before"]["peak_bytes"] == first["peak_bytes"]  # the graph estimated last
    legend = [label.text for _sample, label in panel.plot.legend.items]
    assert f"before: peak {format_bytes(first['peak_bytes'])}" in legend  # grey, under it
    assert f"now: peak {format_bytes(second['peak_bytes'])}" in legend
    assert f"before {format_bytes(first['peak_bytes'])}" in panel.status_label.text()
    assert model.headerData(first_column, Qt.Orientation.Horizontal) == "Bytes"
    assert "stale" not in panel.status_label.text()


def test_a_refusal_is_the_docks_notice_and_the_last_result_stays(qtbot, docks):
    ctx = docks("memory")
    ctx.open("examples:negrelu")
    panel = ctx.panels["memory"]
    shown = estimate(qtbot, panel)
    panel.inputs.setText("not a shape")
    refused = estimate(qtbot, panel)
    assert isinstance(refused, UserError)
    said = panel.status_label.text()
    assert said and "Traceback" not in said and "failed" not in said
    assert panel.last is shown and panel.save_button.isEnabled()


def test_a_structure_only_model_is_estimated_and_measuring_it_says_what_to_do(qtbot, docks):
    ctx = docks("memory")
    doc = ctx.open(LLAMA, weights=False, inputs=("1x2048:int64",))
    assert not doc.weights
    panel = ctx.panels["memory"]
    data = estimate(qtbot, panel).to_json()
    assert data["peak_bytes"] > 0 and len(panel.plot.now.names) == len(data["nodes"])
    panel.measure.setChecked(True)
    refused = estimate(qtbot, panel)
    assert isinstance(refused, UserError)
    said = panel.status_label.text()
    assert "weights" in said and "failed" not in said
    assert panel.last.to_json()["peak_bytes"] == data["peak_bytes"]  # the estimate stays


def test_the_inputs_follow_the_model_opened(qtbot, docks):
    """The sizes typed for one model are not carried to the next (#54: `1x8192:int64`, typed
    for a LLaMA, was refused on GPT-2): another model opened, the Inputs are empty and say
    that model's own inputs, and an estimate is of them."""
    ctx = docks("memory")
    ctx.open(LLAMA, inputs=("1x64:int64",))
    panel = ctx.panels["memory"]
    assert panel.inputs.placeholderText() == "as captured: 1x64:int64"  # (its weights first)
    panel.inputs.setText("1x64:int64")  # (its own: its graph was captured at fixed sizes)
    assert estimate(qtbot, panel).to_json()["inputs"] == ["1x64:int64"]
    ctx.open("examples:negrelu")  # (three inputs of 4x8)
    assert panel.inputs.text() == ""
    assert panel.inputs.placeholderText() == "as captured: 4x8:float32, 4x8:float32, 4x8:float32"
    result = estimate(qtbot, panel)
    assert not isinstance(result, Exception), result
    assert result.to_json()["inputs"] == ["4x8:float32"] * 3


def _peak_clicked(qtbot, ctx, plot, index):
    """Click the starred peak (point ``index``): what the selection became."""
    at = plot.point_position(index).toPoint()
    with qtbot.waitSignal(ctx.selection.changed, timeout=5000):
        QTest.mouseClick(plot.widget.viewport(), Qt.MouseButton.LeftButton, pos=at)
    return ctx.selection.names


def test_a_click_on_the_starred_peak_selects_its_node(qtbot, docks):
    ctx = docks("memory")
    ctx.open("examples:resnet")
    panel = ctx.panels["memory"]
    data = estimate(qtbot, panel).to_json()
    plot = panel.plot
    panel.dock.setFloating(True)  # (room for the plot)
    panel.dock.resize(900, 700)
    qtbot.waitUntil(lambda: plot.widget.viewport().height() > 250)
    peak = data["peak_node"]
    assert plot.now.names[plot.now.peak] == peak
    assert _peak_clicked(qtbot, ctx, plot, plot.now.peak) == [peak]
    assert plot.ringed() == [plot.now.peak]


def _box(item):
    """Where ``item`` is drawn, in the plot's scene."""
    return item.mapRectToScene(item.boundingRect())


def test_the_legend_and_the_peaks_label_stay_inside_the_plot_and_apart(qtbot, docks):
    """The legend covered the peak's label, and at 1000x700 both were cut at the left (#54):
    at any size the plot shows them inside it, apart -- or, too small for both, the legend
    alone."""
    from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow

    ctx = docks("memory")
    doc = ctx.open("examples:resnet")
    panel = ctx.panels["memory"]
    panel.measure.setChecked(True)
    estimate(qtbot, panel)
    with qtbot.waitSignal(ctx.session.graphStateChanged, timeout=10000):
        rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    estimate(qtbot, panel)  # (before, measured, now and the parameters: four in the legend)
    plot = panel.plot
    assert len(plot.legend.items) == 4
    panel.dock.setFloating(True)

    def apart(size):  # (the plot settles over a few turns of the event loop)
        view = plot.item.vb.sceneBoundingRect()
        label, legend = plot.peak_label, plot.legend
        assert legend.isVisible() or label.isVisible(), size
        if label.isVisible():
            assert view.contains(_box(label)), (size, view, _box(label))
            star = plot.widget.mapToScene(plot.point_position(plot.now.peak).toPoint())
            assert _box(label).bottom() <= star.y() - 6, size  # (above the star, not over it)
        if legend.isVisible():
            assert view.contains(_box(legend)), (size, view, _box(legend))
        if legend.isVisible() and label.isVisible():
            assert not _box(label).intersects(_box(legend)), size

    for size in ((1200, 500), (700, 420), (460, 300), (330, 260)):
        was = plot.item.vb.width()
        panel.dock.resize(*size)
        qtbot.waitUntil(lambda was=was: plot.item.vb.width() != was)
        qtbot.waitUntil(lambda size=size: apart(size))
        if size == (1200, 500):  # (room for both)
            assert plot.legend.isVisible() and plot.peak_label.isVisible()
