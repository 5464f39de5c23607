"""Retake the README's screenshots of the window: the real window, driven as a user would,
each picture taken once what it shows is on screen (waiting on the window's signals).

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python packaging/screenshots.py [NAME ...]

writes ``packaging/screenshots/NAME.png`` (all of them without NAMEs -- the ``*-wide`` and
``*-narrow`` ones are a dock floated at the shapes the task layouts give it; ``--size 1000x700``
for a smaller window, ``--out DIR`` elsewhere).  Each window gets a fresh settings and
recovery folder, so it starts as a new user's does.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
HOME = Path(tempfile.mkdtemp(prefix="fxstudio-shots-"))  # each window's settings and recovery
os.environ["XDG_DATA_HOME"] = str(HOME / "data")  # the recent models: not the user's

from PySide6.QtCore import QEventLoop, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from fxstudio.core.graph.request import OpenRequest  # noqa: E402
from fxstudio.qt.window.layouts import BY_ID, LAYOUTS  # noqa: E402
from fxstudio.qt.window.main_window import MainWindow  # noqa: E402

TIMEOUT_MS = 180_000


def wait(signal, start: Callable[[], object] | None = None) -> None:
    """Run ``start()`` and the event loop until ``signal`` (or the timeout: then exit 1)."""
    loop = QEventLoop()
    signal.connect(loop.quit)
    timer = QTimer(singleShot=True, interval=TIMEOUT_MS)
    timer.timeout.connect(lambda: (print(f"timed out waiting for {signal}"), os._exit(1)))
    timer.start()
    if start is not None:
        start()
    loop.exec()
    timer.stop()
    signal.disconnect(loop.quit)


def settle(window: MainWindow, ms: int = 500) -> None:
    """Until the views show the graph as it is (layout drawn, code caught up), and ``ms``
    more for what is drawn on a timer (the overview map, repaints)."""
    app = QApplication.instance()
    while window.session.catch_up.busy() or window.canvas_controller.busy():
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def open_model(window: MainWindow, spec: str, **kw) -> None:
    wait(window.layoutShown, lambda: window.session.open(OpenRequest(spec, **kw)))
    settle(window)


def welcome(window: MainWindow) -> None:
    settle(window)


def main_window(window: MainWindow) -> None:
    open_model(window, "examples:resnet")
    window.selection.select(["add"])
    settle(window)


def dock(window: MainWindow, spec: str, panel_id: str, **kw):
    """Open ``spec`` (``kw``: the request's options) and bring the panel's dock to the
    front; the panel."""
    open_model(window, spec, **kw)
    if panel_id not in BY_ID[window.layouts.current].panels():  # the layout made for it
        window.layouts.use(next(lay.id for lay in LAYOUTS if panel_id in lay.panels()))
    panel = window.panels[panel_id]
    panel.dock.show()
    panel.dock.raise_()
    return panel


def pattern_matches(window: MainWindow) -> None:
    panel = dock(window, "examples:resnet", "patterns")
    window.selection.select(["layer1_0_conv1", "layer1_0_bn1", "layer1_0_relu"])
    wait(panel.found, panel.make_button.click)
    settle(window)


def pattern_check(window: MainWindow) -> None:
    """resnet's residual add + relu boxed, a replacement that drops the skip connection:
    the check fails and the rewrite is held back, Apply anyway offered."""
    panel = dock(window, "examples:resnet", "patterns")
    window.selection.select(["add_1", "layer1_1_relu_1"])
    wait(panel.found, panel.make_button.click)
    panel.replacement_code.setPlainText("def replacement(x, y):\n    return torch.relu(x)\n")
    wait(panel.withheld, panel.replace_button.click)
    settle(window)


def run_dock(window: MainWindow) -> None:
    panel = dock(window, "examples:resnet", "run")
    panel.min_time.setValue(0.05)
    wait(panel.finished, panel.run_button.click)
    panel.tabs.setCurrentWidget(panel.top_page)  # the nodes and modules that take the time
    window.selection.select(["layer1_0_conv2"])
    settle(window)


def stale_results(window: MainWindow) -> None:
    """A per-node run, then an edit: the heat, the Time column and the Run dock say stale."""
    run_dock(window)
    window.edits.change_target("add", "torch.sub")
    window.panels["table"].dock.raise_()
    window.selection.select(["layer1_0_conv2"])
    settle(window)


def rewrite_layout(window: MainWindow) -> None:
    """The Rewrite layout: a built-in chosen, its places previewed on the canvas."""
    open_model(window, "examples:resnet")
    window.layouts.use("rewrite")
    panel = window.panels["patterns"]
    wait(panel.found, lambda: window.action("actionRewrite_fold-conv-bn").trigger())
    panel.step(1)
    settle(window)


def compare_fold(window: MainWindow):
    """The Compare window: resnet before and after fold-conv-bn, times measured, the time
    change as heat, the first folded conv looked at."""
    from fxstudio.qt.window import compare_flow
    from fxstudio.qt.windows.compare import CompareWindow

    open_model(window, "examples:resnet")
    panel = window.panels["patterns"]
    wait(panel.found, lambda: window.action("actionRewrite_fold-conv-bn").trigger())
    wait(panel.rewritten, panel.replace_button.click)
    settle(window)
    made: list[CompareWindow] = []
    task = compare_flow.compare_before_rewrite(window)
    assert task is not None
    task.succeeded.connect(lambda _doc: made.append(window.findChildren(CompareWindow)[-1]))
    wait(task.finished)
    view = made[0]
    view.resize(window.size())
    if view.alignment is None:
        wait(view.ready)
    wait(view.timed, lambda: view.heat.setCurrentText("Time change"))
    view.differences.setCurrentRow(1)
    settle(window, 800)
    return view


def node_data(window: MainWindow) -> None:
    """View ▸ Load node data: a per-node profile written as Model Explorer node data (what
    ``fxstudio profile --per-node --model-explorer`` writes), read back onto the canvas."""
    from fxstudio.core.compare.overlay import write_model_explorer
    from fxstudio.core.runtime.profiling import ProfileOptions, profile
    from fxstudio.qt.window.node_data import node_data_of

    open_model(window, "examples:resnet")
    made = profile(window.document, ProfileOptions(min_time=0.1, per_node=True))
    path = Path(tempfile.mkdtemp()) / "resnet-times.json"
    write_model_explorer(made.node_times(), path)
    node_data_of(window).load(path)
    window.canvas.actual_size()
    window.canvas_controller.center_on(["layer1_0_conv1"])
    settle(window)


def compile_breaks(window: MainWindow) -> None:
    """The Compile dock: Dynamo's graph breaks of a model with a print and a branch on a
    tensor's value (inside a module kept as one node), the branch picked."""
    from tests.qt.test_compile_dock import GATED

    path = Path(tempfile.mkdtemp()) / "gated.py"
    path.write_text(GATED)
    request = OpenRequest(f"{path}:Gated", "fx", (), leaf_modules=("Gate",))
    wait(window.layoutShown, lambda: window.session.open(request))
    window.layouts.use("profile")
    panel = window.panels["compile"]
    panel.dock.show()
    panel.dock.raise_()
    wait(panel.explained, panel.find_button.click)
    panel.breaks.setCurrentRow(1)
    settle(window)


def compile_kernels(window: MainWindow) -> None:
    """The Compile dock's Kernels tab: the ResNet example compiled with inductor on the CPU,
    its kernels timed with their nodes; the slowest kernel that fused several nodes picked,
    its nodes outlined on the canvas."""
    open_model(window, "examples:resnet")
    window.layouts.use("profile")
    panel = window.panels["compile"]
    panel.dock.show()
    panel.dock.raise_()
    panel.tabs.setCurrentWidget(panel.kernels)
    window.panels["run"].min_time.setValue(0.5)
    window.panels["run"].threads.setValue(1)  # the other core draws the window
    tab = panel.kernels
    wait(tab.shown, tab.button.click)
    kernels = tab.result.kernels
    fused = (i for i, k in enumerate(kernels) if len(k.nodes) > 2)
    tab.pick(max(fused, key=lambda i: kernels[i].time_s))
    settle(window)


def expanded_50k(window: MainWindow) -> None:
    """The nested synthetic graph of 50,000 nodes (modules four levels deep), every module
    expanded, fitted to the window: the far-out picture."""
    spec = f"{ROOT / 'tests' / 'bench' / 'synthetic.py'}:nested_50000"
    wait(window.layoutShown, lambda: window.session.open(OpenRequest(spec, "fx", ("2x8",))))
    settle(window)
    wait(window.layoutShown, window.canvas_controller.expand_all)
    view = window.canvas  # far out (a 50,000-node chain fitted is a hair): its first stages
    view.resetTransform()
    view.scale(0.03, 0.03)
    top = view.sceneRect().top()
    view.centerOn(view.sceneRect().center().x(), top + view.viewport().height() / 2 / 0.03)
    settle(window, 1500)


GPT2_EAGER = "hf:gpt2(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, attn_implementation='eager')"


def fused_gpt2(window: MainWindow) -> None:
    """Eager GPT-2 captured by torch.export, each layer's attention fused into one
    scaled_dot_product_attention call inside its attention module's box."""
    open_model(window, GPT2_EAGER)
    window.layouts.use("rewrite")
    panel = window.panels["patterns"]
    wait(panel.found, lambda: window.action("actionRewrite_fuse-attention").trigger())
    wait(panel.rewritten, panel.replace_accepted)
    settle(window)
    fused = [n.name for n in window.document.graph.nodes if "scaled_dot" in str(n.target)]
    window.selection.select(fused[:1])
    window.canvas_controller.center_on(fused[:1])
    settle(window)


LLAMA_32 = (
    "hf:llama(num_hidden_layers=32, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, vocab_size=1000)"
)


def folded_layers(window: MainWindow) -> None:
    """A LLaMA of 32 layers, the first picture: its identical layers one box, ×32."""
    open_model(window, LLAMA_32)
    window.selection.select(["layers_0_self_attn_q_proj_weight"])  # (in the fold's box)
    window.canvas_controller.center_on(["layers.0"])
    settle(window)


def folded_layers_expanded(window: MainWindow) -> None:
    """The same after a double-click on the box: the first layer expanded, 31 still folded."""
    open_model(window, LLAMA_32)
    wait(window.layoutShown, lambda: window.canvas_controller.toggle_group("layers.0"))
    settle(window)
    window.canvas_controller.center_on(["layers.1"])
    settle(window)


def run_module(window: MainWindow) -> None:
    """The 32 layers structure only: Run this module on the folded layers' box; the Run dock
    says what ran (random weights) and the ×32 figure as an extrapolation."""
    panel = dock(window, LLAMA_32, "run", weights=False)
    panel.min_time.setValue(0.5)
    canvas = window.canvas_controller
    menu = canvas.context_menu(canvas.scene.groups["layers.0"].sceneBoundingRect().center())
    wait(panel.finished, next(a for a in menu.actions() if "Run this" in a.text()).trigger)
    window.selection.select(["layers_0_mlp_down_proj_weight"])
    settle(window)


LLAMA_70B = (
    "hf:llama(num_hidden_layers=80, hidden_size=8192, intermediate_size=28672, "
    "num_attention_heads=64, num_key_value_heads=8, vocab_size=128256)"
)


def llama_70b(window: MainWindow) -> None:
    """Llama-3-70B's shape: too big for memory, it opens structure only by itself (every
    shape, no weights) -- the first picture, its 80 layers one box ×80; the inspector on a
    weight says there is none."""
    open_model(window, LLAMA_70B)
    window.selection.select(["layers_0_self_attn_q_proj_weight"])  # (in the fold's box)
    window.canvas_controller.center_on(["layers.0"])
    settle(window)


def llama_70b_expanded(window: MainWindow) -> None:
    """The same with the first decoder layer expanded: the end of its MLP above the 79
    layers still folded, a weight of it in the inspector (its shape, no values)."""
    open_model(window, LLAMA_70B)
    wait(window.layoutShown, lambda: window.canvas_controller.toggle_group("layers.0"))
    settle(window)
    window.canvas.zoom(0.6)
    window.selection.select(["layers_0_mlp_down_proj_weight"])
    window.canvas_controller.center_on(["add_8", "layers.1"])
    settle(window)


def profile_layout(window: MainWindow) -> None:
    """The Profile layout: a per-node run, its results across the bottom, heat on the graph."""
    open_model(window, "examples:resnet")
    window.layouts.use("profile")
    panel = window.panels["run"]
    panel.min_time.setValue(0.05)
    wait(panel.finished, panel.run_button.click)
    window.selection.select(["layer1_0_conv2"])
    settle(window)


def step_dock(window: MainWindow) -> None:
    panel = dock(window, "examples:resnet", "step")
    window.selection.select(["layer1_0_conv2"])
    wait(panel.moved, panel.run_to_selected)
    settle(window)


#: The shapes a dock takes in the task layouts: a strip along the window's bottom (Profile),
#: a column on the right (Edit, Rewrite) or the left (Learn).
WIDE, NARROW, SHORT, LEFT_COLUMN = (1280, 320), (420, 700), (420, 320), (380, 860)


def floated(window: MainWindow, panel, size: tuple[int, int]):
    """The panel's dock floated at ``size`` (what it shows at that shape); the dock."""
    dock = panel.dock
    dock.setFloating(True)
    dock.resize(*size)
    dock.show()
    dock.raise_()
    settle(window)
    return dock


def run_result(window: MainWindow):
    """A per-node run of the ResNet, the slowest node selected; the Run panel."""
    panel = dock(window, "examples:resnet", "run")
    panel.min_time.setValue(0.05)
    wait(panel.finished, panel.run_button.click)
    window.selection.select(["layer1_0_conv2"])
    return panel


def run_dock_wide(window: MainWindow):
    return floated(window, run_result(window), WIDE)


def run_dock_narrow(window: MainWindow):
    return floated(window, run_result(window), NARROW)


def run_dock_short(window: MainWindow):
    return floated(window, run_result(window), SHORT)


def stepped(window: MainWindow):
    panel = dock(window, "examples:resnet", "step")
    window.selection.select(["layer1_0_conv2"])
    wait(panel.moved, panel.run_to_selected)
    return panel


def step_dock_wide(window: MainWindow):
    return floated(window, stepped(window), WIDE)


def step_dock_narrow(window: MainWindow):
    return floated(window, stepped(window), NARROW)


def lesson_at(window: MainWindow, step: int):
    lesson = window.panels["lesson"]
    wait(window.layoutShown, lesson.start)
    if step:
        lesson.go(step)
    settle(window)
    return lesson


def lesson_narrow(window: MainWindow):
    return floated(window, lesson_at(window, 0), LEFT_COLUMN)


def lesson_wide(window: MainWindow):
    return floated(window, lesson_at(window, 1), WIDE)


def heat_fitted(window: MainWindow) -> None:
    """The heat of a per-node run on the whole graph fitted to the window."""
    run_result(window)
    window.canvas.fit()
    settle(window)


def console(window: MainWindow) -> None:
    panel = dock(window, "examples:negrelu", "console")
    panel.run("edits.set_target('relu', 'torch.sigmoid')")
    panel.run("next(n for n in graph.nodes if n.name == 'add').target = operator.sub")
    settle(window)


def inspector(window: MainWindow) -> None:
    """A conv selected: the inspector's class, constructor and source; the zoom; the find
    bar on its first match."""
    panel = dock(window, "examples:resnet", "inspector")
    window.search.show()
    window.search.edit.setText("conv1")
    panel.refresh()
    settle(window)


def long_names(window: MainWindow) -> None:
    """Node boxes as wide as their labels; past the limit, elided in the middle."""
    open_model(window, "tests/models/long_names.py:Model")
    window.canvas.actual_size()
    window.canvas.centerOn(window.canvas.scene().nodes["stages_0_depthwise_convolution"])
    settle(window)


def editing(window: MainWindow) -> None:
    """A Dropout inserted after the selected ReLU (its users rewired to it), then an edit
    that cannot work -- add retargeted to torch.relu -- refused, its reason in the status bar."""
    from fxstudio.core.graph.catalogue import catalogue

    open_model(window, "examples:resnet")
    entries = {e.text: e for e in catalogue(window.document)}
    window.selection.select(["layer1_0_relu"])
    window.edits.insert(entries["nn.Dropout"])
    settle(window)
    window.edits.change_target("add", "torch.relu")  # refused at once, said in the status bar
    window.selection.select(["add"])
    settle(window)


def dark_theme(window: MainWindow) -> None:
    window.theme.choose("dark")
    open_model(window, "examples:resnet")


def memory_fused(window: MainWindow):
    """Eager GPT-2 at 1,024 tokens in the Profile layout: the memory estimated, the attention
    fused (fuse-attention), estimated again -- before (grey) and after on the timeline, the
    heat by bytes on the canvas, the fused attention of the first layer selected; the panel."""
    open_model(window, GPT2_EAGER, inputs=("1x1024:int64",))
    window.layouts.use("profile")
    panel = window.panels["memory"]
    panel.dock.show()
    panel.dock.raise_()
    wait(panel.finished, panel.run_button.click)
    window.layouts.use("rewrite")
    patterns = window.panels["patterns"]
    wait(patterns.found, lambda: window.action("actionRewrite_fuse-attention").trigger())
    wait(patterns.rewritten, patterns.replace_accepted)
    window.layouts.use("profile")
    panel.dock.show()
    panel.dock.raise_()
    panel.heat.setChecked(True)
    wait(panel.finished, panel.run_button.click)
    fused = [n.name for n in window.document.graph.nodes if "scaled_dot" in str(n.target)]
    window.selection.select(fused[:1])
    settle(window)
    return panel


def memory_dock(window: MainWindow) -> None:
    memory_fused(window)


def memory_dock_wide(window: MainWindow):
    return floated(window, memory_fused(window), WIDE)


def memory_dock_narrow(window: MainWindow):
    return floated(window, memory_fused(window), NARROW)


SMALL_LLAMA = (
    "hf:llama(num_hidden_layers=2, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, vocab_size=1000)"
)


def memory_training(window: MainWindow) -> None:
    """A small LLaMA at 256 tokens, an AdamW training step estimated in the Profile layout:
    the whole step on the timeline (forward, backward, optimizer step; its peak starred),
    *Backward* on, the backward node at the peak clicked -- the document's node it comes
    from selected on the canvas and ringed on the plot."""
    open_model(window, SMALL_LLAMA, inputs=("1x256:int64",))
    window.layouts.use("profile")
    panel = window.panels["memory"]
    panel.dock.show()
    panel.dock.raise_()
    panel.train.setChecked(True)
    wait(panel.finished, panel.run_button.click)
    window.resizeDocks([panel.dock], [560], Qt.Orientation.Vertical)  # (room for the tables)
    panel.backward_button.setChecked(True)
    table = panel.backward_table
    model = table.model()
    peak = panel.last.training.peak_node
    for row in range(model.rowCount()):
        index = model.index(row, 1)
        if index.data() == peak:
            table.setCurrentIndex(index)
            table.scrollTo(index, table.ScrollHint.PositionAtCenter)
            table.clicked.emit(index)
            break
    settle(window)


SHOTS: dict[str, Callable[[MainWindow], None]] = {
    "welcome": welcome,
    "main-window": main_window,
    "pattern-matches": pattern_matches,
    "pattern-check": pattern_check,
    "run-dock": run_dock,
    "stale-results": stale_results,
    "step-dock": step_dock,
    "rewrite-layout": rewrite_layout,
    "profile-layout": profile_layout,
    "fused-gpt2": fused_gpt2,
    "folded-layers": folded_layers,
    "folded-layers-expanded": folded_layers_expanded,
    "run-module": run_module,
    "llama-70b": llama_70b,
    "llama-70b-expanded": llama_70b_expanded,
    "console": console,
    "dark-theme": dark_theme,
    "editing": editing,
    "run-dock-wide": run_dock_wide,
    "run-dock-narrow": run_dock_narrow,
    "run-dock-short": run_dock_short,
    "step-dock-wide": step_dock_wide,
    "step-dock-narrow": step_dock_narrow,
    "lesson-narrow": lesson_narrow,
    "lesson-wide": lesson_wide,
    "heat-fitted": heat_fitted,
    "inspector": inspector,
    "long-names": long_names,
    "compare-fold": compare_fold,
    "expanded-50k": expanded_50k,
    "node-data": node_data,
    "compile-breaks": compile_breaks,
    "compile-kernels": compile_kernels,
    "memory-dock": memory_dock,
    "memory-dock-wide": memory_dock_wide,
    "memory-dock-narrow": memory_dock_narrow,
    "memory-training": memory_training,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", choices=[[], *SHOTS], metavar="NAME")
    parser.add_argument("--size", default="1600x1000", help="the window's size, WxH")
    parser.add_argument("--out", type=Path, default=ROOT / "packaging" / "screenshots")
    parser.add_argument("--suffix", default="", help="added to each file name")
    ns = parser.parse_args()
    width, height = (int(v) for v in ns.size.split("x"))
    app = QApplication.instance() or QApplication(sys.argv)
    ns.out.mkdir(parents=True, exist_ok=True)
    for name in ns.names or list(SHOTS):
        window = MainWindow(interactive=False, autosave_s=0, recovery=HOME / name / "recovery")
        window.resize(width, height)
        window.show()
        shown = SHOTS[name](window) or window  # a floated dock, or the whole window
        path = ns.out / f"{name}{ns.suffix}.png"
        shown.grab().save(str(path))
        print(path, flush=True)
        window.session.undo_stack.setClean()  # nothing to ask about
        window.close()
        window.deleteLater()
        app.processEvents()


if __name__ == "__main__":
    main()
