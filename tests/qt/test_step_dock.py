"""The Step dock: node by node in a worker, the card, the three-way link, collapsed modules
as a debugger treats calls, breakpoints, an edit ending the stepping."""


def _do(qtbot, panel, action):
    with qtbot.waitSignal(panel.moved, timeout=60000):
        action.trigger()


def test_step_shows_values_and_links_canvas_table_and_code(qtbot, docks):
    ctx = docks("step", "code")
    ctx.open("examples:resnet")
    panel = ctx.panels["step"]
    ctx.document.collapsed.clear()
    _do(qtbot, panel, panel.into_action)  # x
    assert panel.stepper.current == "x" and ctx.selection.current == "x"
    _do(qtbot, panel, panel.into_action)  # stem_0: a conv
    assert ctx.selection.current == "stem_0"
    assert panel.stats["value"].text() == "[1, 16, 32, 32] float32"
    assert panel.picture.pixmap() is not None and not panel.picture.pixmap().isNull()
    assert panel.picture_caption.text() == "channels 0–15 of item 0"
    assert sum(panel.histogram.counts) == 16 * 32 * 32
    assert panel.eager.text().startswith("same as module stem.0")
    assert panel.code_line.text().startswith("line 2: stem_0 = getattr(self.stem")
    assert "resnet.py:" in panel.source_line.text() and "self.stem" in panel.source_line.text()
    # the code view's selection is the same node (the code controller follows the selection)
    line = ctx.document.code_line_map()["stem_0"]
    assert ctx.panels["code"].view.textCursor().blockNumber() == line - 1
    assert ctx.panels["code"].view.extraSelections()[0].cursor.blockNumber() == line - 1
    _do(qtbot, panel, panel.back_action)
    assert panel.stepper.current == "x" and ctx.selection.current == "x"
    _do(qtbot, panel, panel.continue_action)
    assert panel.stepper.finished and "at the end" in panel.where.text()
    assert panel.first_difference.isHidden()  # graph and eager agree everywhere


def test_a_collapsed_module_is_stepped_over_or_entered(qtbot, docks):
    ctx = docks("step")
    ctx.open("examples:resnet")
    panel, doc = ctx.panels["step"], ctx.document
    doc.collapsed = {"stem", "layer1"}
    _do(qtbot, panel, panel.over_action)  # x: not in a module
    _do(qtbot, panel, panel.over_action)  # the whole collapsed stem in one step
    assert panel.stepper.current == "stem_2" and "stem" in doc.collapsed
    _do(qtbot, panel, panel.into_action)  # into layer1: expanded, stopped at its first node
    assert panel.stepper.current == "layer1_0_conv1" and "layer1" not in doc.collapsed


def test_breakpoints_run_to_selected_and_the_slider(qtbot, docks):
    ctx = docks("step")
    ctx.open("examples:resnet")
    panel = ctx.panels["step"]
    ctx.selection.select(["layer2_0_conv1"])
    panel.breakpoint_action.trigger()
    assert "layer2_0_conv1" in panel.breakpoints.text()
    _do(qtbot, panel, panel.continue_action)
    assert panel.stepper.next_node == "layer2_0_conv1"
    ctx.selection.select(["layer1_0_relu"])
    _do(qtbot, panel, panel.to_selected_action)
    assert panel.stepper.current == "layer1_0_relu"
    with qtbot.waitSignal(panel.moved, timeout=60000):
        panel.slider.setValue(3)
    assert panel.stepper.position == 3


def test_an_edit_ends_the_stepping_and_the_next_step_runs_the_new_graph(qtbot, docks):
    ctx = docks("step")
    ctx.open("examples:negrelu")
    panel = ctx.panels["step"]
    _do(qtbot, panel, panel.continue_action)
    ctx.selection.select(["relu"])
    ctx.edits.delete_selection()
    assert panel.stepper is None and "edited" in panel.status_label.text()
    _do(qtbot, panel, panel.continue_action)
    assert "relu" not in panel.stepper.index and panel.stepper.finished


def test_a_failing_start_says_why(qtbot, docks):
    ctx = docks("step")
    ctx.open("examples:negrelu")
    panel = ctx.panels["step"]
    ctx.document.example_inputs = ()
    with qtbot.waitSignal(panel.failed, timeout=60000) as failed:
        panel.into_action.trigger()
    said = panel.status_label.text()
    assert failed.args[0] == said and "the Open dialog's Inputs" in said and "--" not in said
    assert panel.into_action.isEnabled()


def test_opening_another_model_does_not_say_the_graph_was_edited(qtbot, docks):
    """Another model opened while stepping (even after an edit had ended the stepping):
    the card is the new model's, before its first node, and says nothing of an edit."""
    ctx = docks("step")
    ctx.open("examples:negrelu")
    panel = ctx.panels["step"]
    _do(qtbot, panel, panel.into_action)
    ctx.selection.select(["relu"])
    ctx.edits.delete_selection()
    assert "edited" in panel.status_label.text()
    ctx.open("examples:resnet")
    assert panel.stepper is None
    assert "edited" not in panel.status_label.text()
    assert panel.status_label.text() == ""
    assert panel.where.text().startswith("Before the first node")


def test_a_row_of_buttons_that_wraps_keeps_room_for_its_rows(qtbot):
    """The Step dock's buttons wrap to two rows in a narrow dock; the rows' height is the
    layout's minimum at that width, so a short dock never draws the slider over them."""
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QSlider, QToolButton, QVBoxLayout, QWidget

    from fxstudio.qt.forms import FlowLayout

    body = QWidget()
    qtbot.addWidget(body)
    column = QVBoxLayout(body)
    row = FlowLayout(spacing=2)
    for text in ("Restart", "Back", "Step", "Over", "Out", "To selected", "Continue"):
        row.addWidget(QToolButton(text=text))
    column.addLayout(row)
    slider = QSlider(Qt.Orientation.Horizontal)
    column.addWidget(slider)
    column.addStretch(1)
    body.resize(220, 40)  # too short for two rows and the slider
    body.show()
    qtbot.waitExposed(body)
    qtbot.waitUntil(lambda: body.minimumSizeHint().height() > 40)  # asked again, wrapped
    body.resize(220, body.minimumSizeHint().height())
    qtbot.waitUntil(lambda: slider.geometry().top() >= _bottom_of(row))
    assert _bottom_of(row) > row.itemAt(0).geometry().bottom()  # two rows at least


def _bottom_of(layout) -> int:
    return max(layout.itemAt(i).geometry().bottom() for i in range(layout.count()))
