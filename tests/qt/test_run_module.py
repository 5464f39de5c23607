"""Run the part that fits, in the window (issue 38): one module of a structure-only model runs
alone from the Run dock's Module list or the canvas's menu on the module -- the dock's own
profile on the part, off the GUI thread -- and the result says what was run and, of many
modules alike, the whole-model figure as an extrapolation."""

import pytest

from fxstudio.core.graph.request import OpenRequest
from fxstudio.qt.panels.run.module import ONE_MODULE, WHOLE
from tests.core.test_structure_only import SMALL_LLAMA


def quick(panel) -> None:
    panel.min_time.setValue(0.05)
    panel.threads.setValue(1)


def test_run_one_module_of_a_structure_only_model_from_the_dock(qtbot, docks):
    ctx = docks("run")
    doc = ctx.open("examples:resnet", weights=False)
    panel = ctx.panels["run"]
    quick(panel)
    assert panel.module.currentText() == WHOLE
    assert "Run this module" in panel.run_button.toolTip()  # what can run is offered
    assert "Module" in panel.status_label.text()
    panel.module.setCurrentIndex(panel.module.findData("layer1"))
    assert "random weights" in panel.run_button.toolTip()
    assert panel.per_node.isChecked()
    with qtbot.waitSignal(panel.finished, timeout=120000) as done:
        panel.run_button.click()
        assert not panel.run_button.isEnabled()  # in a worker
    result = done.args[0]
    assert not isinstance(result, Exception), panel.result.toPlainText()
    said = panel.result.toPlainText()
    assert "the module layer1 alone" in said and "random weights" in said
    assert "extrapolation" not in said  # one of one alike: nothing to extrapolate
    assert panel.status_label.text().startswith("layer1 alone: median")
    # the node table lists the part's nodes, all of them inside layer1
    inside = {n for g in doc.module_tree().walk() if g.path == "layer1" for n in g.all_nodes()}
    names = {panel.node_table.item(r, 0).text() for r in range(panel.node_table.rowCount())}
    names -= {"(unattributed)", "(gap)"}
    assert names and names <= inside
    # the heat and the Top chart: the module and those in it, not the ones its inputs came from
    assert {m.path for m in ctx.session.profile.modules} >= {"layer1", "layer1.0"}
    assert all(m.path.startswith("layer1") for m in ctx.session.profile.modules)
    assert not doc.weights and panel.run_button.isEnabled()  # the document is as it was
    # back to the whole model: refused, and the refusal offers a module; a refusal is the
    # dock's notice, not a failed run, and the module's result stays
    panel.module.setCurrentIndex(panel.module.findText(WHOLE))
    with qtbot.waitSignal(panel.finished, timeout=60000) as done:
        panel.run_button.click()
    assert isinstance(done.args[0], Exception)
    notice = panel.status_label.text()
    assert ONE_MODULE in notice and "failed" not in notice
    assert panel.result.toPlainText() == said and panel.node_table.rowCount() > 2


def test_run_this_module_from_the_canvas_menu_of_a_group(qtbot, docks):
    ctx = docks("run")
    ctx.open("examples:resnet", weights=False)
    panel = ctx.panels["run"]
    quick(panel)
    panel.per_node.setChecked(False)
    controller = ctx.canvas_controller
    group = controller.scene.groups["layer1"]
    menu = controller.context_menu(group.sceneBoundingRect().center())
    assert menu is not None
    action = next(a for a in menu.actions() if a.text() == "Run this module (layer1)")
    with qtbot.waitSignal(panel.finished, timeout=120000) as done:
        action.trigger()
    assert not isinstance(done.args[0], Exception), panel.result.toPlainText()
    assert panel.module.currentData() == "layer1"
    said = panel.result.toPlainText()
    assert "the module layer1 alone" in said and "random weights" in said


def test_a_call_module_node_offers_its_module(qtbot, docks):
    ctx = docks("run")
    doc = ctx.open("examples:resnet")
    controller = ctx.canvas_controller
    with qtbot.waitSignal(controller.layoutDone, timeout=60000):
        doc.set_collapsed_groups(())
    node = controller.scene.nodes["layer1_0_conv1"]
    menu = controller.context_menu(node.sceneBoundingRect().center())
    assert menu is not None
    texts = [a.text() for a in menu.actions()]
    assert "Run this module (layer1.0.conv1)" in texts
    # and the modules around it, innermost first (a decoder layer, clicked on its attention)
    around = [t for t in texts if t.startswith("Run the module around it")]
    assert around == [
        "Run the module around it (layer1.0)",
        "Run the module around it (layer1)",
    ], texts
    ran = []
    ctx.panels["run"].run_alone = ran.append  # (which module each asks for; run above)
    for action in menu.actions():
        if action.text().startswith("Run the module around it"):
            action.trigger()
    assert ran == ["layer1.0", "layer1"]


def test_one_layer_of_many_says_the_whole_as_an_extrapolation(qtbot, docks):
    ctx = docks("run")
    ctx.open(SMALL_LLAMA, weights=False)
    panel = ctx.panels["run"]
    quick(panel)
    panel.per_node.setChecked(False)
    with qtbot.waitSignal(panel.finished, timeout=180000) as done:
        panel.run_alone("layers.0")
    assert not isinstance(done.args[0], Exception), panel.result.toPlainText()
    said = panel.result.toPlainText().splitlines()
    assert any("the module layers.0 alone" in line and "1 of 2 alike" in line for line in said)
    extrapolated = [line for line in said if line.startswith("x2 modules alike")]
    assert extrapolated and "an extrapolation of one module, not a measurement" in extrapolated[0]


def test_the_window_offers_a_module_on_a_structure_only_document(qtbot, window):
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.session.open(OpenRequest("examples:resnet", weights=False))
    panel = window.panels["run"]
    assert panel.module.findData("layer1") > 0
    assert "Run this module" in panel.run_button.toolTip()


def test_a_checkpoint_folders_document_offers_a_module_with_its_weights(qtbot, window, tmp_path):
    """Opened structure only from a checkpoint folder, a module runs with the folder's
    weights: the offer says so, not random weights."""
    transformers = pytest.importorskip("transformers")
    from tests.core.test_checkpoints import SMALL

    folder = tmp_path / "checkpoint"
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**SMALL))
    model.save_pretrained(folder, max_shard_size="100KB")
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.session.open(OpenRequest(f"hf:{folder}", weights=False))
    tip = window.panels["run"].run_button.toolTip()
    assert "checkpoint folder" in tip and "random weights" not in tip, tip


def test_a_structure_only_programs_module_runs_with_the_archives_weights(qtbot, docks, tmp_path):
    """A .pt2 opened structure only: the Run dock offers a module with the weights read from
    the archive, and runs it with them (the result says where they came from)."""
    import torch

    from tests.core.test_program_weights import Stack

    path = tmp_path / "stack.pt2"
    torch.export.save(torch.export.export(Stack().eval(), (torch.randn(5, 32),)), path)
    ctx = docks("run")
    ctx.open(str(path), weights=False)
    panel = ctx.panels["run"]
    quick(panel)
    panel.module.setCurrentIndex(panel.module.findData("layers.1"))
    tip = panel.run_button.toolTip()
    assert "read from the program's .pt2 file" in tip and "random weights" not in tip, tip
    with qtbot.waitSignal(panel.finished, timeout=120000) as done:
        panel.run_button.click()
    assert not isinstance(done.args[0], Exception), panel.result.toPlainText()
    said = panel.result.toPlainText()
    assert "the module layers.1 alone" in said and f"weights from {path}" in said, said
    assert "x3 modules alike" in said  # the three blocks: one run, the rest extrapolated


LLAMA_4 = SMALL_LLAMA.replace("num_hidden_layers=2", "num_hidden_layers=4")  # folded: ×4


def test_a_folded_box_is_tagged_with_all_its_modules_share(qtbot, docks):
    ctx = docks("run")
    ctx.open(LLAMA_4)
    panel = ctx.panels["run"]
    quick(panel)
    scene = ctx.canvas.scene()
    layers = ["layers.0", "layers.1", "layers.2", "layers.3"]
    assert scene.layout.folds == {"layers.0": layers}  # one box, ×4
    with qtbot.waitSignal(panel.finished, timeout=120000) as done:
        panel.run_button.click()
    shares = {m.path: m.share for m in done.args[0].after.nodes.modules}
    whole = sum(shares[p] for p in layers)  # as the module times (the Top chart) add up
    tags = {t.owner: t for t in panel.marks.tags}
    tag = tags[scene.groups["layers.0"]]
    assert tag.share == whole and tag.text == f"{whole:.1%} ×4"
    assert tag.share > 3 * max(shares[p] for p in layers) / 2  # not one layer's
    tip = next(i.toolTip() for i in panel.marks.items if i.parentItem() is tag.owner)
    assert f"time: {whole:.1%} of the profiled run: all 4 modules of this box together" in tip
    assert tags[scene.groups["norm"]].text == f"{shares['norm']:.1%}"  # not a fold: as it was
    # one of them run alone: its share of that run, said to be one of the four
    with qtbot.waitSignal(panel.finished, timeout=120000) as done:
        panel.run_alone("layers.0")
    assert not isinstance(done.args[0], Exception), panel.status_label.text()
    tag = next(t for t in panel.marks.tags if t.owner is scene.groups["layers.0"])
    alone = next(m.share for m in ctx.session.profile.modules if m.path == "layers.0")
    assert tag.text == f"{alone:.1%} (1 of 4)"
    tip = next(i.toolTip() for i in panel.marks.items if i.parentItem() is tag.owner)
    assert "layers.0 only, of the 4 modules of this box (the others were not in the run)" in tip
