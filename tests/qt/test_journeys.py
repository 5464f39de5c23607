"""The journeys of the README, driven as a user drives them in a 1280x800 window, each
asserting what the user sees: texts, what is in sight, and how much room the graph gets; and
every view of the window following one document.  (A dock alone is tested over a small panel
context: the ``docks`` fixture of ``tests/qt/conftest.py``.)"""

from pathlib import Path

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QPushButton

from fxstudio.core.saving.verify import run_standalone
from fxstudio.qt.window.main_window import MainWindow
from tests.core.test_export import original_outputs
from tests.qt.conftest import open_and_wait
from tests.qt.test_compare_window import said_nothing, used_after
from tests.qt.test_editing import relaid
from tests.qt.test_layouts import canvas_share, shown_docks
from tests.qt.test_open_dialog import shown_open_dialog


@pytest.fixture
def big(qtbot, tmp_path):
    w = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(w)
    w.resize(1280, 800)
    w.show()
    QApplication.processEvents()
    return w


def in_sight(window, name) -> bool:
    """The node is drawn inside the canvas's visible area."""
    view = window.canvas
    item = view.scene().nodes[name]
    return view.viewport().rect().contains(view.mapFromScene(item.sceneBoundingRect().center()))


def test_open_by_completion(qtbot, big):
    def choose(dialog):
        from tests.qt.test_open_dialog import _completions

        qtbot.keyClicks(dialog.spec_edit, "examples:res")
        offered = _completions(qtbot, dialog, "examples:res")
        assert offered.count("examples:resnet") == 1
        completer = dialog.spec_edit.completer()
        completer.complete()  # the list under the field, as typing shows it
        popup = completer.popup()
        qtbot.waitUntil(popup.isVisible)
        completer.setCurrentRow(0)
        assert popup.model().index(0, 0).data() == "examples:resnet"
        # what a click on it does (an offscreen popup takes no clicks or keys)
        dialog.spec_edit.setText(completer.currentCompletion())
        assert dialog.spec_edit.text() == "examples:resnet"
        dialog.accept()

    with qtbot.waitSignal(big.layoutShown, timeout=60000):
        shown_open_dialog(big, choose)
    assert big.statusBar().currentMessage().startswith("Opened in ")
    assert big.status.summary.text().startswith("54 nodes")
    assert canvas_share(big) >= 0.55
    assert shown_docks(big) == {"inspector", "code"}


def test_rewrite_with_preview_replace_and_undo(qtbot, big):
    open_and_wait(qtbot, big, "examples:resnet", signal="layoutShown")
    big.action("actionLayoutRewrite").trigger()
    patterns = big.panels["patterns"]
    assert "patterns" in shown_docks(big) and patterns.dock.width() >= 400
    with qtbot.waitSignal(patterns.found, timeout=60000):
        big.action("actionRewrite_fold-conv-bn").trigger()  # Rewrite ▸ Fold conv + BatchNorm
    assert patterns.summary.text().startswith("Fold conv + BatchNorm: 15 places to change")
    assert patterns.match_list.item(0).text() == "1. stem_0, stem_1"
    assert not patterns.pattern_code.isVisible()  # no unrelated pattern or function shown
    assert not patterns.replacement_code.isVisible()
    assert "stem_1" in big.document  # a preview changes nothing
    assert len(patterns.marks.matches) == 15  # drawn on the canvas
    big.canvas.actual_size()
    for _ in range(3):
        patterns.next_button.click()  # stepping centres the canvas on each place
    assert patterns.match_list.currentRow() == 3
    assert in_sight(big, "layer1_1_conv1") and in_sight(big, "layer1_1_bn1")
    with qtbot.waitSignal(patterns.found, timeout=60000):  # previewed again: nothing left
        with qtbot.waitSignal(patterns.rewritten, timeout=60000):
            patterns.replace_button.click()
    assert "Check passed" in patterns.check_label.text()
    assert patterns.check_label.isVisible()
    assert "stem_1" not in big.document
    assert "done -- nothing left to change" in patterns.summary.text()
    with qtbot.waitSignal(patterns.found, timeout=60000):
        big.action("actionUndo").trigger()
    assert patterns.check_label.text() == ""  # the check was of the undone rewrite
    assert "15 places to change" in patterns.summary.text()
    assert not big.statusBar().currentMessage().startswith("Not done")


def test_box_a_pattern_replace_compare_close_and_go_on(qtbot, big, capfd, qtlog):
    """The whole window: open, box a pattern on the canvas and write its replacement, replace
    everywhere, compare with before the rewrite, close the Compare window, and go on working
    in the main window -- and nothing is printed on stderr or warned on the way."""
    from PySide6.QtCore import Qt

    from fxstudio.qt.windows.compare import CompareWindow

    open_and_wait(qtbot, big, "examples:resnet", signal="layoutShown")
    big.action("actionLayoutRewrite").trigger()
    patterns = big.panels["patterns"]
    big.selection.select(["add_1", "layer1_1_relu_1"])  # a residual add and its relu, boxed
    with qtbot.waitSignal(patterns.found, timeout=60000):
        patterns.make_button.click()
    assert patterns.summary.text().startswith("6 matches"), patterns.summary.text()
    patterns.replacement_code.setPlainText("def replacement(x, y):\n    return torch.relu(x + y)\n")
    with qtbot.waitSignal(big.layoutShown, timeout=60000):
        with qtbot.waitSignal(patterns.rewritten, timeout=60000):
            patterns.replace_button.click()
    assert "Check passed" in patterns.check_label.text(), patterns.check_label.text()
    assert big.session.undo_stack.count() == 1  # one step: "Replace pattern"
    # File ▸ Compare with before the last rewrite
    big.action("actionCompareBeforeRewrite").trigger()
    qtbot.waitUntil(lambda: bool(big.findChildren(CompareWindow)), timeout=60000)
    view = big.findChildren(CompareWindow)[-1]
    qtbot.waitUntil(lambda: view.alignment is not None, timeout=60000)
    assert "12 changed, 0 removed, 0 added" in view.summary.text()  # 6 adds, 6 relus
    assert "all 54 compared pairs agree" in view.summary.text()
    view.next.click()
    assert view.left.selection.names and view.right.selection.names
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    with qtbot.waitSignal(view.destroyed, timeout=10000):
        qtbot.keyClick(view, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert not big.findChildren(CompareWindow)
    # back in the main window: nodes clicked, zoomed, the rewrite undone and redone
    used_after(qtbot, big)
    assert big.panels["inspector"].dock.isVisible()
    said_nothing(capfd, qtlog)


def test_built_ins_on_an_export_graph_preview_or_say_why_not(qtbot, big):
    open_and_wait(qtbot, big, "examples:resnet", frontend="export")
    patterns = big.panels["patterns"]
    with qtbot.waitSignal(patterns.found, timeout=60000):  # folds ATen calls too
        big.action("actionRewrite_fold-conv-bn").trigger()
    assert patterns.summary.text().startswith("Fold conv + BatchNorm: 15 places to change")
    with qtbot.waitSignal(patterns.idle, timeout=60000):  # reads torch functions only
        big.action("actionRewrite_swap-activation").trigger()
    assert "torch.export" in patterns.summary.text() and patterns.match_list.count() == 0


def test_run_and_compare_in_the_profile_layout(qtbot, big):
    open_and_wait(qtbot, big, "examples:resnet", signal="layoutShown")
    big.action("actionLayoutProfile").trigger()
    QApplication.processEvents()
    run, patterns = big.panels["run"], big.panels["patterns"]
    assert run.dock.width() >= 0.95 * big.width()
    assert big.centralWidget().height() >= 300  # the graph keeps room above the results
    run.min_time.setValue(0.02)
    run.threads.setValue(1)
    with qtbot.waitSignal(run.finished, timeout=300000):
        run.run_button.click()
    run.pin_button.click()  # the run just made is the baseline
    assert "baseline" in run.status_label.text().lower() or run.compare_button.isEnabled()
    with qtbot.waitSignal(patterns.found, timeout=60000):
        big.action("actionRewrite_fold-conv-bn").trigger()
    with qtbot.waitSignal(patterns.rewritten, timeout=60000):
        patterns.replace_button.click()
    with qtbot.waitSignal(run.finished, timeout=300000):
        run.compare_button.click()
    assert "After vs baseline" in run.status_label.text(), run.result.toPlainText()
    assert "speed-up" in run.status_label.text()


def test_step_to_a_node(qtbot, big):
    open_and_wait(qtbot, big, "examples:resnet", signal="layoutShown")
    step = big.panels["step"]
    step.dock.show()
    step.dock.raise_()
    assert step.where.text().startswith("Before the first node (0 of 54 run)")
    big.selection.select(["layer1_0_conv2"])
    with qtbot.waitSignal(step.moved, timeout=60000):
        step.run_to_selected()
    assert step.where.text().startswith("Node ")
    assert " of 54 run" in step.where.text()


def test_the_lessons_second_step(qtbot, big):
    lesson = big.panels["lesson"]
    with qtbot.waitSignal(big.layoutShown, timeout=60000):  # step 1 opens its model
        big.action("actionLearnFx").trigger()
    assert big.layouts.current == "learn" and "lesson" in shown_docks(big)
    assert lesson.heading.text().startswith("Step 1 of ")
    assert lesson.recheck().ok
    lesson.next_button.click()
    assert lesson.heading.text().startswith("Step 2 of ")
    assert lesson.text.toPlainText().strip() and lesson.text.isVisible()
    assert not lesson.text.verticalScrollBar().isVisible()  # the text has the height it needs
    replay = lesson.dock.findChild(QPushButton, "lessonReplay")
    assert replay is not None
    qtbot.waitUntil(replay.isVisible)  # (a step's widgets are shown once the loop turns)
    assert lesson.dock.width() >= 300


def test_save_as_python_after_a_rewrite(qtbot, big, tmp_path: Path):
    open_and_wait(qtbot, big, "examples:resnet", signal="layoutShown")
    patterns = big.panels["patterns"]
    with qtbot.waitSignal(patterns.found, timeout=60000):
        big.action("actionRewrite_fold-conv-bn").trigger()
    with qtbot.waitSignal(patterns.rewritten, timeout=60000):
        patterns.replace_button.click()
    out = tmp_path / "folded.py"
    with qtbot.waitSignal(big.saving.exported, timeout=60000):
        big.saving.export_to(out, "py")
    assert big.statusBar().currentMessage().startswith("Saved folded.safetensors, folded.py")
    inputs, expected = original_outputs("examples:resnet")
    # a fold rounds differently: the same numbers to float32's tolerance for this depth
    assert run_standalone(out, inputs, expected).one_thread.within_tolerance


# -- the views of one window over one document ------------------------------------------------


def test_window_shows_the_examples_nodes(qtbot, window):
    doc = open_and_wait(qtbot, window, "examples:resnet")
    assert window.document is doc
    assert window.objectName() == "MainWindow"
    model = window.panels["table"].view.model()
    assert model.rowCount() == len(doc.graph.nodes)
    names = {model.index(r, 1).data() for r in range(model.rowCount())}
    assert names == set(doc.node_names())
    assert window.panels["code"].view.toPlainText() == doc.code()
    assert "examples:resnet" in window.windowTitle()


def test_delete_is_one_undo_step_and_the_canvas_follows(qtbot, window):
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    window.selection.select(["relu"])
    scene = relaid(qtbot, window, window.findChild(QAction, "actionDelete").trigger)
    assert "relu" not in scene.nodes and "add = neg + y" in window.document.code()
    assert (
        window.session.undo_stack.count() == 1
        and window.session.undo_stack.undoText() == "Delete relu"
    )
    assert "add = neg + y" in window.panels["code"].view.toPlainText()  # the code view follows
    assert window.panels["table"].model.row_of("relu") is None  # and the table
    scene = relaid(qtbot, window, window.session.undo_stack.undo)
    assert "relu" in scene.nodes and "add = neg + relu" in window.panels["code"].view.toPlainText()
    scene = relaid(qtbot, window, window.session.undo_stack.redo)
    assert "relu" not in scene.nodes


WIDE = (
    "import torch\n"
    "class Net(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.up = torch.nn.Linear(16, 64)\n"
    "    def forward(self, x):\n"
    "        return self.up(x).relu()\n"
    "def example_inputs():\n"
    "    return (torch.randn(4, 16),)\n"
)


def test_a_measurement_that_cannot_fit_is_refused_then_a_smaller_one_measures(
    qtbot, big, write_model
):
    """Issue 54's journey: the Memory dock's Inputs at a size no machine holds, *Measure*
    ticked, *Estimate*: the estimate is shown, the measurement is not started -- the notice
    says what it would take, what is available and what to do -- and the window, the model
    and its edits are as they were; a smaller input then measures."""
    path = write_model(WIDE)
    open_and_wait(qtbot, big, f"{path}:Net", signal="layoutShown")
    memory = big.panels["memory"]
    with qtbot.waitSignal(memory.finished, timeout=120000):
        big.action("actionEstimateMemory").trigger()  # (Ctrl+Shift+M: the dock and a first one)
    memory.inputs.setText("10000000000x16")  # 10^10 rows: 5.2 TiB of activations
    memory.measure.setChecked(True)
    with qtbot.waitSignal(memory.finished, timeout=120000) as done:
        memory.run_button.click()
    result = done.args[0]
    assert result.measured is None and result.refused  # shown: the estimate, not a run
    said = memory.status_label.text()
    assert said.startswith("Peak 5.2 TiB") and said.endswith("not measured: it would not fit")
    tip = memory.status_label.toolTip()
    assert "would take about" in tip and "is available, so it was not started" in tip
    assert "smaller input" in tip and "Run this module" in tip and "--" not in tip
    summary = memory.summary.toPlainText()
    assert summary.startswith("Not measured. Measuring the memory of a run at these inputs")
    assert big.document is not None and big.session.undo_stack.count() == 0
    memory.inputs.setText("64x16")
    with qtbot.waitSignal(memory.finished, timeout=120000) as done:
        memory.run_button.click()
    measured = done.args[0]
    assert measured.measured is not None and not measured.refused
    assert " · measured " in memory.status_label.text()
    assert "not measured" not in memory.status_label.text()
