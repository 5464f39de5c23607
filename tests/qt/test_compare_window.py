"""The Compare window: a rewrite's before and after side by side, differences listed and
stepped through, selection synced, heat of value difference and time change; File ▸
Compare with… another model.  Values are compared in this process, on the same tensors."""

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication

from fxstudio.qt.window import compare_flow
from fxstudio.qt.windows.compare import CompareWindow
from tests.qt.conftest import open_and_wait


def _compare_window():
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, CompareWindow)]
    return windows[-1] if windows else None


def _fold(qtbot, window):
    patterns = window.panels["patterns"]
    with qtbot.waitSignal(patterns.found, timeout=60000):
        window.action("actionRewrite_fold-conv-bn").trigger()
    with qtbot.waitSignal(patterns.rewritten, timeout=60000):
        patterns.replace_button.click()


def test_before_and_after_a_fold_side_by_side(qtbot, window):
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    assert not window.action("actionCompareBeforeRewrite").isEnabled()  # nothing rewritten yet
    _fold(qtbot, window)
    action = window.action("actionCompareBeforeRewrite")
    assert action.isEnabled()
    action.trigger()
    qtbot.waitUntil(lambda: _compare_window() is not None, timeout=60000)
    view = _compare_window()
    qtbot.waitUntil(lambda: view.alignment is not None, timeout=60000)
    a = view.alignment
    assert len(a.removed) == 15 and len(a.changed()) == 15 and a.added == []
    assert "15 changed, 15 removed" in view.summary.text()
    assert "agree" in view.summary.text()  # the fold keeps the values
    # the marks: BatchNorms red on the left, the convs amber on both sides
    assert view.left.marks.status["layer1_0_bn1"] == "removed"
    assert view.right.marks.status["layer1_0_conv1"] == "changed"
    qtbot.waitUntil(lambda: len(view.left.marks.items) >= 30, timeout=60000)
    # the list: each difference selects and centres both sides
    texts = [view.differences.item(i).text() for i in range(view.differences.count())]
    assert texts[0] == "Changed (rewritten): stem_0 + stem_1 → stem_0"  # with its BatchNorm
    assert "Removed: layer1_0_bn1" in texts
    view.next.click()
    assert view.left.selection.names and view.right.selection.names
    # selecting a node on one side selects its partner on the other
    view.left.selection.select(["layer1_0_relu"])
    assert view.right.selection.names == ["layer1_0_relu"]
    # a module collapsed on one side is collapsed on the other (and expanded again)
    with qtbot.waitSignal(view.right.canvas.layoutDone, timeout=60000):
        view.left.canvas.toggle_group("layer1")
    assert (
        "layer1" in view.right.document.collapsed and "layer1" in view.left.canvas.layout.collapsed
    )
    with qtbot.waitSignal(view.right.canvas.layoutDone, timeout=60000):
        view.right.canvas.toggle_group("layer1")
    assert "layer1" not in view.left.document.collapsed
    # scrolling one side centres the other on the partner of the node in the middle
    qtbot.waitUntil(lambda: not view.left.canvas.busy() and not view.right.canvas.busy())
    view.right.view.centerOn(view.right.canvas.scene.nodes["layer3_1_conv2"])
    view.left.view.centerOn(
        view.left.canvas.scene.nodes["layer3_1_bn1"].sceneBoundingRect().center()
    )
    middle = view.right.view.mapToScene(view.right.view.viewport().rect().center())
    nodes = view.right.canvas.scene.nodes  # bn1 was folded away: its nearest paired neighbour
    near = (
        nodes["layer3_1_conv1"]
        .sceneBoundingRect()
        .united(nodes["layer3_1_relu"].sceneBoundingRect())
    )
    assert near.adjusted(-20, -20, 20, 20).contains(middle)
    # heat of the value difference, tagged on the right canvas
    view.heat.setCurrentText("Value difference")
    assert view.right.heat.nodes and all(v >= 0 for v in view.right.heat.nodes.values())
    view.close()


def test_times_measured_and_shown_as_heat(qtbot, window):
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    with qtbot.waitSignal(window.panels["patterns"].found, timeout=60000):
        window.action("actionRewrite_negrelu").trigger()
    with qtbot.waitSignal(window.panels["patterns"].rewritten, timeout=60000):
        window.panels["patterns"].replace_button.click()
    compare_flow.compare_before_rewrite(window)
    qtbot.waitUntil(lambda: _compare_window() is not None, timeout=60000)
    view = _compare_window()
    if view.alignment is None:
        with qtbot.waitSignal(view.ready, timeout=60000):
            pass
    # negrelu computes relu(x) where it was neg(x) + relu(y): the values differ from there on
    assert view.values.first_difference == "relu"
    assert view.right.marks.status["mul"] == "changed"  # same op, other values: amber too
    with qtbot.waitSignal(view.timed, timeout=120000):
        view.heat.setCurrentText("Time change")  # measures first
    assert view.times is not None and view.times.pairs
    assert set(view.right.heat.labels.values()) and all(
        label.endswith("%") and label[0] in "+-" for label in view.right.heat.labels.values()
    )
    assert "Times:" in view.summary.text()
    view.close()


def test_compare_with_another_model_and_a_side_that_cannot_open(qtbot, window, write_model):
    from fxstudio.core.graph.request import OpenRequest

    open_and_wait(qtbot, window, "examples:simple", signal="layoutShown")
    task = compare_flow.compare_with_request(window, OpenRequest("examples:simple"))
    with qtbot.waitSignal(task.finished, timeout=60000):
        pass
    view = _compare_window()
    qtbot.waitUntil(lambda: view.alignment is not None, timeout=60000)
    assert view.alignment.removed == [] and view.alignment.added == []
    assert view.differences.item(0).text().startswith("No differences")
    view.close()
    broken = write_model("raise RuntimeError('broken on purpose')\n", "broken.py")
    errors = []
    window.show_error = lambda title, exc: errors.append((title, exc))
    task = compare_flow.compare_with_request(window, OpenRequest(f"{broken}:M"))
    with qtbot.waitSignal(task.finished, timeout=60000):
        pass
    assert errors and "compare" in errors[0][0] and "broken on purpose" in str(errors[0][1])
    assert window.document.request.spec == "examples:simple"  # the document is untouched


def _differences(view) -> list[str]:
    return [view.differences.item(i).text() for i in range(view.differences.count())]


def test_compare_with_the_model_it_was_rewritten_from_puts_that_one_before(qtbot, window):
    """*File ▸ Compare with…* from the rewritten document: the model as captured is before
    (left), so the fold's BatchNorms read as removed; *Swap sides* swaps and compares again."""
    from fxstudio.core.graph.request import OpenRequest

    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    _fold(qtbot, window)
    task = compare_flow.compare_with_request(window, OpenRequest("examples:resnet"))
    with qtbot.waitSignal(task.finished, timeout=60000):
        pass
    view = _compare_window()
    qtbot.waitUntil(lambda: view.alignment is not None, timeout=60000)
    assert "layer1_0_bn1" in view.left.document and "layer1_0_bn1" not in view.right.document
    assert view.left.title.text() == "Left (before): examples:resnet"
    assert view.right.title.text() == "Right (after): examples:resnet (now)"
    texts = _differences(view)
    assert texts[0] == "Changed (rewritten): stem_0 + stem_1 → stem_0"
    assert "Removed: layer1_0_bn1" in texts and not any(t.startswith("Added") for t in texts)
    assert view.left.marks.status["layer1_0_bn1"] == "removed"
    with qtbot.waitSignal(view.ready, timeout=60000):
        view.swap_button.click()
    assert "layer1_0_bn1" in view.right.document and "layer1_0_bn1" not in view.left.document
    assert view.left.title.text() == "Left (before): examples:resnet (now)"
    assert view.split.widget(0) is view.left and view.split.widget(1) is view.right
    texts = _differences(view)
    assert "Added: layer1_0_bn1" in texts and not any(t.startswith("Removed") for t in texts)
    assert view.right.marks.status["layer1_0_bn1"] == "added"
    assert "layer1_0_bn1" not in view.left.marks.status  # the old marks are gone
    view.left.selection.select(["layer1_0_relu"])  # the partners follow the sides
    assert view.right.selection.names == ["layer1_0_relu"]
    view.close()


def test_node_data_from_a_file_is_drawn_with_a_legend(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from fxstudio.core.compare.overlay import write_model_explorer
    from fxstudio.core.graph.nodedata import Overlay
    from fxstudio.qt.window.node_data import node_data_of

    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    path = tmp_path / "times.json"
    write_model_explorer(Overlay("time", {"stem_0": 2.0, "layer1_0_conv1": 1.0, "gone": 3.0}), path)
    # View ▸ Load node data…, the file chosen in its dialog
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    window.action("actionLoadNodeData").trigger()
    data = node_data_of(window)
    assert data.overlay is not None
    assert set(data.marks.nodes) == {"stem_0", "layer1_0_conv1"}  # "gone" is not in the graph
    assert data.marks.labels["stem_0"] == "2"
    assert data.legend.isVisible() and "time" in data.legend.text()
    assert "1 not in this graph" in window.status.bar.currentMessage()
    assert len(data.marks.items) == 2  # tinted on the canvas
    assert window.action("actionClearNodeData").isEnabled()
    # a broken file is said, and the data shown stays
    errors = []
    window.show_error = lambda title, exc: errors.append((title, exc))
    bad = tmp_path / "bad.csv"
    bad.write_text("node,time\nstem_0,fast\n")
    assert data.load(bad) is None
    assert "not a number" in str(errors[0][1]) and set(data.marks.nodes) == {
        "stem_0",
        "layer1_0_conv1",
    }
    # drawn again after a relayout
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.canvas_controller.relayout()
    assert len(data.marks.items) == 2
    window.action("actionClearNodeData").trigger()
    assert not data.marks.items and not data.legend.isVisible()
    # opening another model takes the data of this one off
    assert data.load(path) is not None and data.legend.isVisible()
    open_and_wait(qtbot, window, "examples:simple", signal="layoutShown")
    assert data.overlay is None and not data.marks.nodes and not data.legend.isVisible()


# --- closing it, and what a closed one leaves behind (#36 items 3 and 9) ---------------------


def folded_and_compared(qtbot, window):
    """resnet with its BatchNorms folded, compared with before: the window, aligned and drawn."""
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    _fold(qtbot, window)
    task = compare_flow.compare_before_rewrite(window)
    with qtbot.waitSignal(task.finished, timeout=60000):
        pass
    view = _compare_window()
    qtbot.waitUntil(lambda: view.alignment is not None, timeout=60000)
    qtbot.waitUntil(lambda: not view.left.canvas.busy() and not view.right.canvas.busy())
    return view


def used_after(qtbot, window):
    """The main canvas used as a user goes on after a window closed: nodes clicked (the
    scene's selection), zoomed, an edit undone and redone, a node selected from a list."""
    controller = window.canvas_controller
    for name in ("layer1_0_conv1", "layer2_0_conv1", "layer3_1_conv2"):
        controller.scene.clearSelection()
        controller.scene.nodes[name].setSelected(True)  # what a click on the box does
        assert window.selection.names == [name]
    window.canvas.zoom_in()
    window.canvas.zoom_out()
    if window.session.undo_stack.canUndo():
        with qtbot.waitSignal(window.layoutShown, timeout=60000):
            window.session.undo_stack.undo()
        with qtbot.waitSignal(window.layoutShown, timeout=60000):
            window.session.undo_stack.redo()
    window.selection.select(["layer1_0_relu"])
    QApplication.processEvents()


def said_nothing(capfd, qtlog):
    """No traceback on stderr, no warning from Qt (the offscreen platform's own aside)."""
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Error" not in err, err
    warnings = [
        r.message
        for r in qtlog.records
        if r.type.name != "QtDebugMsg" and "propagateSizeHints" not in r.message
    ]
    assert warnings == []


def test_a_closed_compare_window_is_gone_and_leaves_nothing_connected(qtbot, window, capfd, qtlog):
    view = folded_and_compared(qtbot, window)
    view.left.selection.select(["layer1_0_relu"])  # each side's scene has a selection
    view.next.click()
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    with qtbot.waitSignal(view.destroyed, timeout=10000):  # deleted, not hidden
        qtbot.keyClick(view, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)  # File ▸ Close
    assert _compare_window() is None
    used_after(qtbot, window)
    said_nothing(capfd, qtlog)


def test_escape_closes_the_compare_window(qtbot, window):
    from fxstudio.core.graph.request import OpenRequest

    open_and_wait(qtbot, window, "examples:simple", signal="layoutShown")
    task = compare_flow.compare_with_request(window, OpenRequest("examples:simple"))
    with qtbot.waitSignal(task.finished, timeout=60000):
        pass
    view = _compare_window()
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    with qtbot.waitSignal(view.destroyed, timeout=10000):
        qtbot.keyClick(view.differences, Qt.Key.Key_Escape)
    assert _compare_window() is None


def test_dialogs_closed_leave_nothing_connected(qtbot, window, capfd, qtlog):
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    window.selection.select(["layer1_0_conv1"])  # (Insert node… needs one)
    seen = []

    def cancel():
        dialog = QApplication.activeModalWidget()
        seen.append(type(dialog).__name__)
        if dialog is not None:
            dialog.reject()

    for name in ("actionCompareWith", "actionAbout", "actionCommandPalette", "actionInsert"):
        QTimer.singleShot(0, cancel)
        window.findChild(QAction, name).trigger()  # shown modal; cancelled
    assert seen == ["OpenDialog", "AboutDialog", "CommandPalette", "InsertPalette"]
    used_after(qtbot, window)
    said_nothing(capfd, qtlog)


def test_stepping_to_a_removed_node_shows_where_it_was_on_both_sides(qtbot, window):
    view = folded_and_compared(qtbot, window)
    right = view.right
    right.view.centerOn(right.canvas.scene.nodes["layer3_1_conv2"])  # far from layer1
    row = next(
        i
        for i in range(view.differences.count())
        if view.differences.item(i).text() == "Removed: layer1_0_bn2"
    )
    view.differences.setCurrentRow(row)
    assert view.left.selection.names == ["layer1_0_bn2"] and right.selection.names == []
    assert in_sight(view.left, "layer1_0_bn2")
    assert in_sight(right, "layer1_0_conv2")  # the conv it was folded into


def test_the_opening_view_shows_the_top_of_both_graphs(qtbot, window):
    view = folded_and_compared(qtbot, window)
    view.resize(view.width() - 150, view.height() - 120)  # the list and the splitter settle
    QApplication.processEvents()
    for side in (view.left, view.right):
        top = side.canvas.scene.content_rect().top()
        assert side.view.mapToScene(side.view.viewport().rect()).boundingRect().top() <= top
    # a scroll of one side (not a resize) still moves the other
    view.left.view.centerOn(view.left.canvas.scene.nodes["layer3_1_conv2"])
    assert in_sight(view.right, "layer3_1_conv2")


def in_sight(side, name) -> bool:
    view = side.view
    item = side.canvas.scene.nodes[name]
    return view.viewport().rect().contains(view.mapFromScene(item.sceneBoundingRect().center()))


def test_stepping_to_an_added_node_centres_the_left_on_its_paired_neighbour(
    qtbot, window, write_model
):
    from fxstudio.core.graph.request import OpenRequest

    body = "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
    deep = "".join(f"        x = torch.sin(x) + {i}\n" for i in range(12))
    before = write_model(body + deep + "        return x\n", "before.py")
    after = write_model(body + deep + "        x = torch.tanh(x)\n        return x\n", "after.py")
    open_and_wait(qtbot, window, f"{before}:M", signal="layoutShown", inputs=("4",))
    task = compare_flow.compare_with_request(window, OpenRequest(f"{after}:M", inputs=("4",)))
    with qtbot.waitSignal(task.finished, timeout=60000):
        pass
    view = _compare_window()
    qtbot.waitUntil(lambda: view.alignment is not None, timeout=60000)
    qtbot.waitUntil(lambda: not view.left.canvas.busy() and not view.right.canvas.busy())
    assert view.alignment.added == ["tanh"]
    left = view.left
    left.view.centerOn(left.canvas.scene.nodes["x"])  # the top, far from the end
    row = next(
        i
        for i in range(view.differences.count())
        if view.differences.item(i).text() == "Added: tanh"
    )
    view.differences.setCurrentRow(row)
    assert view.right.selection.names == ["tanh"] and left.selection.names == []
    assert in_sight(view.right, "tanh")
    assert in_sight(left, "add_11")  # the last add, which tanh follows
    view.close()
