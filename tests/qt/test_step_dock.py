"""The Step dock: node by node in a worker, the card, the three-way link, collapsed modules
as a debugger treats calls, breakpoints, an edit ending the stepping."""

from tests.qt.conftest import open_and_wait


def _do(qtbot, panel, action):
    with qtbot.waitSignal(panel.moved, timeout=60000):
        action.trigger()


def test_step_shows_values_and_links_canvas_table_and_code(qtbot, window):
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    panel = window.panels["step"]
    window.document.collapsed.clear()
    _do(qtbot, panel, panel.into_action)  # x
    assert panel.stepper.current == "x" and window.selection.current == "x"
    _do(qtbot, panel, panel.into_action)  # stem_0: a conv
    assert window.selection.current == "stem_0"
    assert panel.stats["value"].text() == "[1, 16, 32, 32] float32"
    assert panel.picture.pixmap() is not None and not panel.picture.pixmap().isNull()
    assert panel.picture_caption.text() == "channels 0–15 of item 0"
    assert sum(panel.histogram.counts) == 16 * 32 * 32
    assert panel.eager.text().startswith("same as module stem.0")
    assert panel.code_line.text().startswith("line 2: stem_0 = getattr(self.stem")
    assert "resnet.py:" in panel.source_line.text() and "self.stem" in panel.source_line.text()
    # the code view's selection is the same node (the code controller follows the selection)
    line = window.document.code_line_map()["stem_0"]
    assert window.panels["code"].view.textCursor().blockNumber() == line - 1
    assert window.panels["code"].view.extraSelections()[0].cursor.blockNumber() == line - 1
    _do(qtbot, panel, panel.back_action)
    assert panel.stepper.current == "x" and window.selection.current == "x"
    _do(qtbot, panel, panel.continue_action)
    assert panel.stepper.finished and "at the end" in panel.where.text()
    assert panel.first_difference.isHidden()  # graph and eager agree everywhere


def test_a_collapsed_module_is_stepped_over_or_entered(qtbot, window):
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    panel, doc = window.panels["step"], window.document
    doc.collapsed = {"stem", "layer1"}
    _do(qtbot, panel, panel.over_action)  # x: not in a module
    _do(qtbot, panel, panel.over_action)  # the whole collapsed stem in one step
    assert panel.stepper.current == "stem_2" and "stem" in doc.collapsed
    _do(qtbot, panel, panel.into_action)  # into layer1: expanded, stopped at its first node
    assert panel.stepper.current == "layer1_0_conv1" and "layer1" not in doc.collapsed


def test_breakpoints_run_to_selected_and_the_slider(qtbot, window):
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    panel = window.panels["step"]
    window.selection.select(["layer2_0_conv1"])
    panel.breakpoint_action.trigger()
    assert "layer2_0_conv1" in panel.breakpoints.text()
    _do(qtbot, panel, panel.continue_action)
    assert panel.stepper.next_node == "layer2_0_conv1"
    window.selection.select(["layer1_0_relu"])
    _do(qtbot, panel, panel.to_selected_action)
    assert panel.stepper.current == "layer1_0_relu"
    with qtbot.waitSignal(panel.moved, timeout=60000):
        panel.slider.setValue(3)
    assert panel.stepper.position == 3


def test_an_edit_ends_the_stepping_and_the_next_step_runs_the_new_graph(qtbot, window):
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    panel = window.panels["step"]
    _do(qtbot, panel, panel.continue_action)
    window.selection.select(["relu"])
    window.edits.delete_selection()
    assert panel.stepper is None and "edited" in panel.status_label.text()
    _do(qtbot, panel, panel.continue_action)
    assert "relu" not in panel.stepper.index and panel.stepper.finished


def test_a_failing_start_says_why(qtbot, window):
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    panel = window.panels["step"]
    window.document.example_inputs = ()
    with qtbot.waitSignal(panel.failed, timeout=60000) as failed:
        panel.into_action.trigger()
    said = panel.status_label.text()
    assert failed.args[0] == said and "the Open dialog's Inputs" in said and "--" not in said
    assert panel.into_action.isEnabled()


def test_opening_another_model_does_not_say_the_graph_was_edited(qtbot, window):
    """Another model opened while stepping (even after an edit had ended the stepping):
    the card is the new model's, before its first node, and says nothing of an edit."""
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    panel = window.panels["step"]
    _do(qtbot, panel, panel.into_action)
    window.selection.select(["relu"])
    window.edits.delete_selection()
    assert "edited" in panel.status_label.text()
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    assert panel.stepper is None
    assert "edited" not in panel.status_label.text()
    assert panel.status_label.text() == ""
    assert panel.where.text().startswith("Before the first node")
