"""Editing: each action one undo step, refusals reported, the canvas redrawn -- over the small
panel context where the edit controller, canvas and docks are enough, on the window where the
status bar, its actions, the save and the window's own bookkeeping (the selection of a removed
node dropped) are part of it."""

import pytest
from PySide6.QtGui import QAction

from fxstudio.core.graph.catalogue import Entry, catalogue
from tests.qt.conftest import open_and_wait, select_row


def draw(qtbot, window, spec):
    return open_and_wait(qtbot, window, spec, signal="layoutShown")


def relaid(qtbot, window, action):
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        action()
    return window.canvas.scene()


def test_a_refused_edit_says_why_and_changes_nothing(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    code = window.document.code()
    window.selection.select(["x"])
    with qtbot.waitSignal(window.edits.refused) as refused:
        window.findChild(QAction, "actionDelete").trigger()
    assert "input 'x' is used" in refused.args[0]
    assert "input 'x' is used" in window.statusBar().currentMessage()
    assert window.document.code() == code and window.session.undo_stack.count() == 0


def test_insert_after_the_selected_node_and_on_the_selected_edge(qtbot, docks):
    ctx = docks()
    draw(qtbot, ctx, "examples:negrelu")
    entries = {e.text: e for e in catalogue(ctx.document)}
    ctx.selection.select(["neg"])
    scene = relaid(qtbot, ctx, lambda: ctx.edits.insert(entries["torch.sigmoid"]))
    code = ctx.document.code()
    assert "sigmoid = torch.sigmoid(neg)" in code
    assert "add = sigmoid + relu" in code  # neg's user now takes the new node: not dangling
    assert "sigmoid" in scene.nodes and ctx.selection.names == ["sigmoid"]
    assert {(e.source_name, e.target_name) for e in scene.edges} >= {
        ("neg", "sigmoid"),
        ("sigmoid", "add"),
    }
    assert ("neg", "add") not in {(e.source_name, e.target_name) for e in scene.edges}
    assert ctx.session.undo_stack.undoText() == "Insert sigmoid after neg"
    edge = next(e for e in scene.edges if (e.source_name, e.target_name) == ("relu", "add"))
    scene.clearSelection()
    edge.setSelected(True)
    assert ctx.canvas_controller.selected_edge() == ("relu", "add")
    relaid(qtbot, ctx, lambda: ctx.edits.insert(entries["nn.LeakyReLU"], "0.2"))
    code = ctx.document.code()
    assert "leaky_re_lu = self.leaky_re_lu(relu)" in code and "add = sigmoid + leaky_re_lu" in code
    assert ctx.document.graph_module.leaky_re_lu.negative_slope == 0.2
    assert ctx.session.undo_stack.count() == 2
    relaid(qtbot, ctx, ctx.session.undo_stack.undo)
    relaid(qtbot, ctx, ctx.session.undo_stack.undo)  # one step undoes the whole insert
    assert "add = neg + relu" in ctx.document.code() and "sigmoid" not in scene.nodes


def test_insert_with_nothing_selected_makes_a_node_of_its_own(qtbot, docks):
    ctx = docks()
    draw(qtbot, ctx, "examples:negrelu")
    entries = {e.text: e for e in catalogue(ctx.document)}
    ctx.selection.clear()
    relaid(qtbot, ctx, lambda: ctx.edits.insert(entries["torch.sigmoid"], "x"))
    code = ctx.document.code()
    assert "sigmoid = torch.sigmoid(x)" in code and "neg = torch.neg(x)" in code


def test_a_call_that_cannot_work_is_refused_and_the_document_kept(qtbot, window):
    """#36: add (two arguments) retargeted to torch.relu was kept, red, and saved broken."""
    draw(qtbot, window, "examples:negrelu")
    code = window.document.code()
    inspector = window.panels["inspector"]
    window.selection.select(["add"])
    with qtbot.waitSignal(window.edits.refused) as refused:
        window.edits.set_property("add", "target", "torch.relu")  # the inspector's edit
    assert "cannot call torch.relu with 2 arguments: it takes 1" in refused.args[0]
    assert "cannot call torch.relu with 2 arguments" in window.statusBar().currentMessage()
    assert window.session.undo_stack.count() == 0 and not window.session.modified
    assert window.document.code() == code and not window.document.history
    assert window.document.shape_problem is None
    assert window.canvas.scene().nodes["add"].problem is None  # not red
    assert [r for r in inspector.properties() if r[0] == "target"][0][1] == "operator.add"
    with qtbot.waitSignal(window.edits.refused) as refused:
        window.edits.change_target("mul", "torch.mm")  # 4x8 @ 4x8
    assert "mat1 and mat2 shapes cannot be multiplied (4x8 and 4x8)" in refused.args[0]
    assert window.session.undo_stack.count() == 0 and not window.session.modified
    relaid(qtbot, window, lambda: window.edits.change_target("add", "operator.mul"))
    assert "add = neg * relu" in window.document.code() and window.session.modified


def test_insert_with_arguments_and_a_weight(qtbot, window):
    draw(qtbot, window, "examples:simple")
    window.selection.select(["fc1"])
    method = Entry("Tensor.softmax", "call_method", "softmax", "method")
    relaid(qtbot, window, lambda: window.edits.insert(method, "dim=-1"))
    assert "softmax = fc1.softmax(dim = -1)" in window.document.code()
    weight = next(e for e in catalogue(window.document) if e.text == "fc2.weight")
    relaid(qtbot, window, lambda: window.edits.insert(weight))
    assert "fc2_weight = self.fc2.weight" in window.document.code()
    bad = window.edits.insert(method, "dim=")
    assert bad is None and "not arguments" in window.statusBar().currentMessage()


def test_rename_change_target_and_outputs(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    relaid(qtbot, window, lambda: window.edits.rename("relu", "act"))
    assert window.selection.names == ["act"] and "act" in window.canvas.scene().nodes
    relaid(qtbot, window, lambda: window.edits.change_target("act", "torch.tanh"))
    assert "act = torch.tanh(y)" in window.document.code()
    window.selection.select(["mul", "neg"])
    relaid(qtbot, window, window.findChild(QAction, "actionReturnSelected").trigger)
    assert "return (mul, neg)" in window.document.code()
    assert window.session.undo_stack.count() == 3
    for _ in range(3):
        window.session.undo_stack.undo()
    assert "act" not in window.document.code() and "return mul" in window.document.code()


def test_a_node_whose_shapes_no_longer_fit_is_marked(qtbot, window):
    from fxstudio.core.edits import set_target

    draw(qtbot, window, "examples:simple")
    # act's own call runs (2x32 -> 2x4); fc2, after it, no longer fits: kept, marked
    scene = relaid(qtbot, window, lambda: window.edits.apply(lambda d: set_target(d, "act", "fc2")))
    item = scene.nodes["fc2"]
    assert "mat1 and mat2 shapes cannot be multiplied" in item.problem
    assert "fc2" in window.statusBar().currentMessage()
    assert "shapes cannot be multiplied" in item.toolTip()
    scene = relaid(qtbot, window, window.session.undo_stack.undo)
    assert scene.nodes["fc2"].problem is None


def test_the_palette_searches_the_catalogue(qtbot, docks):
    ctx = docks()
    from fxstudio.qt.editing.palette import InsertPalette

    draw(qtbot, ctx, "examples:resnet")
    palette = InsertPalette(catalogue(ctx.document), "After x.", ctx.window)
    qtbot.addWidget(palette)
    qtbot.keyClicks(palette.filter_edit, "leaky")
    texts = [palette.list.item(i).text().split()[0] for i in range(palette.list.count())]
    assert "nn.LeakyReLU" in texts and "torch.nn.functional.leaky_relu" in texts
    palette.filter_edit.setText("layer1.0.conv1.weight")
    assert palette.chosen().op == "get_attr"
    palette.filter_edit.setText("matmul")
    assert palette.chosen().text == "torch.matmul"


def test_copy_and_paste(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    window.selection.select(["neg", "add"])
    window.findChild(QAction, "actionCopy").trigger()
    scene = relaid(qtbot, window, window.findChild(QAction, "actionPaste").trigger)
    assert {"neg_1", "add_1"} <= set(scene.nodes)
    assert "add_1 = neg_1 + relu" in window.document.code()
    assert sorted(window.selection.names) == ["add_1", "neg_1"]
    assert window.session.undo_stack.undoText() == "Paste 2 nodes"


def test_the_inspector_edits_name_target_args_and_kwargs(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    tree = window.panels["inspector"].tree
    window.selection.select(["add"])

    def row(label):
        return next(
            tree.topLevelItem(i)
            for i in range(tree.topLevelItemCount())
            if tree.topLevelItem(i).text(0) == label
        )

    assert row("args").text(1) == "neg, relu"  # edited without the brackets
    assert row("op").flags() & row("args").flags() != row("args").flags()  # op: read-only
    relaid(qtbot, window, lambda: row("args").setText(1, "neg, z"))
    assert "add = neg + z" in window.document.code()
    relaid(qtbot, window, lambda: row("target").setText(1, "torch.sub"))
    assert "add = torch.sub(neg, z)" in window.document.code()
    relaid(qtbot, window, lambda: row("kwargs").setText(1, "alpha=2"))
    assert "add = torch.sub(neg, z, alpha = 2)" in window.document.code()
    relaid(qtbot, window, lambda: row("name").setText(1, "diff"))
    assert window.selection.names == ["diff"] and row("name").text(1) == "diff"
    assert window.session.undo_stack.count() == 4
    # A refused edit puts the document's value back.
    row("args").setText(1, "neg, mul")
    assert "comes after it" in window.statusBar().currentMessage()
    assert row("args").text(1) == "neg, z" and window.session.undo_stack.count() == 4


def test_a_one_node_edit_updates_the_canvas_in_place(qtbot, docks):
    ctx = docks()
    draw(qtbot, ctx, "examples:resnet")
    scene = ctx.canvas.scene()
    started = []
    ctx.canvas_controller.layoutStarted.connect(lambda: started.append(1))
    conv = scene.nodes["layer1_0_conv1"]
    ctx.selection.select(["layer1_0_conv1"])
    entry = next(e for e in catalogue(ctx.document) if e.text == "torch.sigmoid")
    ctx.edits.insert(entry)
    assert ctx.canvas.scene() is scene and not started  # no new layout, same scene
    new = scene.nodes["sigmoid"]
    assert new.pos().x() > conv.pos().x() + conv.rect.width()  # beside its input
    edge = next(e for e in scene.edges if e.target_name == "sigmoid")
    assert edge.source is conv
    frame = scene.groups["layer1.0"]
    assert frame.sceneBoundingRect().contains(new.sceneBoundingRect())  # the frame grew
    ctx.session.undo_stack.undo()
    assert "sigmoid" not in scene.nodes and not any(e.target_name == "sigmoid" for e in scene.edges)
    ctx.selection.select(["layer1_0_relu"])
    ctx.edits.delete_selection()  # Edit ▸ Delete: bypassed: conv2 takes bn1
    assert "layer1_0_relu" not in scene.nodes
    assert any(
        (e.source_name, e.target_name) == ("layer1_0_bn1", "layer1_0_conv2") for e in scene.edges
    )
    ctx.session.undo_stack.undo()  # back where the layout had it, with its edges
    assert "layer1_0_relu" in scene.nodes and not started
    pairs = {(e.source_name, e.target_name) for e in scene.edges}
    assert ("layer1_0_bn1", "layer1_0_relu") in pairs and (
        "layer1_0_relu",
        "layer1_0_conv2",
    ) in pairs
    assert ("layer1_0_bn1", "layer1_0_conv2") not in pairs
    assert len(scene.edges) == len(ctx.document.edges())


def test_a_big_graph_shows_the_edit_first_and_catches_up_after(qtbot, docks, monkeypatch):
    ctx = docks("code")
    import fxstudio.qt.window.session as mw

    monkeypatch.setattr(mw, "DEFER_ABOVE", 3)  # treat the small example as big
    draw(qtbot, ctx, "examples:simple")
    doc = ctx.document
    assert doc.defer_heavy
    from fxstudio.core.edits import set_target

    with qtbot.waitSignal(ctx.session.caughtUp, timeout=30000):
        ctx.edits.apply(lambda d: set_target(d, "act", "fc2"))  # fc2, after it, breaks
        # Drawn at once; recompile, shapes, code and table come a moment later.
        assert "fc2" in ctx.canvas.scene().nodes and not doc.code_ready()
        assert "act = self.fc2(fc1)" not in ctx.panels["code"].view.toPlainText()
    assert doc.code_ready() and not doc.shapes_stale
    assert "act = self.fc2(fc1)" in ctx.panels["code"].view.toPlainText()
    assert "shapes cannot be multiplied" in ctx.canvas.scene().nodes["fc2"].problem
    with qtbot.waitSignal(ctx.session.caughtUp, timeout=30000):
        ctx.session.undo_stack.undo()
    assert ctx.canvas.scene().nodes["fc2"].problem is None
    assert "act = self.act(fc1)" in ctx.panels["code"].view.toPlainText()


def test_drag_a_wire_from_an_output_port_to_an_input(qtbot, docks):
    ctx = docks()
    from PySide6.QtCore import QPointF, Qt
    from PySide6.QtTest import QTest

    draw(qtbot, ctx, "examples:negrelu")
    view, scene = ctx.canvas, ctx.canvas.scene()
    view.actual_size()
    source, target = scene.nodes["x"], scene.nodes["add"]
    view.centerOn(QPointF((source.x() + target.x()) / 2, (source.y() + target.y()) / 2))
    assert next(t for t in scene.tools if hasattr(t, "port_at")).port_at(source.bottom()) is source
    press = view.mapFromScene(source.bottom())
    drop = view.mapFromScene(target.mapToScene(QPointF(target.rect.width() * 0.85, 10)))
    vp = view.viewport()
    with qtbot.waitSignal(ctx.layoutShown, timeout=30000):
        QTest.mousePress(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, press)
        QTest.mouseMove(vp, (press + drop) / 2)
        QTest.mouseMove(vp, drop)
        QTest.mouseRelease(vp, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, drop)
    assert "add = neg + x" in ctx.document.code()  # the right-hand input took x
    assert ctx.session.undo_stack.undoText() == "Connect x to add.args[1]"
    assert source.pos() == scene.nodes["x"].pos()  # the node itself did not move
    assert not any(type(i).__name__ == "QGraphicsLineItem" for i in scene.items())


def test_add_and_move_inputs(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    relaid(qtbot, window, lambda: window.edits.add_input("scale = 2.0"))
    assert "def forward(self, x, y, z, scale = 2.0)" in window.document.code()
    assert "scale" in window.canvas.scene().nodes and window.selection.names == ["scale"]
    window.selection.select(["z"])
    relaid(qtbot, window, window.findChild(QAction, "actionInputEarlier").trigger)
    assert "def forward(self, x, z, y, scale = 2.0)" in window.document.code()
    window.selection.select(["y"])
    window.findChild(QAction, "actionInputLater").trigger()  # past scale: refused
    assert "default value must come after" in window.statusBar().currentMessage()
    assert window.edits.add_input("bad = not python") is None
    assert window.session.undo_stack.count() == 2


def test_a_node_without_inputs_goes_where_the_user_is_looking(qtbot, docks):
    ctx = docks()
    draw(qtbot, ctx, "examples:resnet")
    view = ctx.canvas
    view.actual_size()
    view.centerOn(ctx.canvas.scene().nodes["layer3_0_conv1"])
    weight = next(e for e in catalogue(ctx.document) if e.text == "fc.weight")
    ctx.selection.clear()
    relaid(qtbot, ctx, lambda: ctx.edits.insert(weight))
    item = ctx.canvas.scene().nodes["fc_weight"]
    assert view.viewport().rect().contains(view.mapFromScene(item.pos()))


def test_edits_in_quick_succession_on_a_big_graph_leave_the_table_right(qtbot, docks, monkeypatch):
    ctx = docks("table")
    import fxstudio.qt.window.session as mw
    from fxstudio.core.edits import Ref, insert, set_target

    monkeypatch.setattr(mw, "DEFER_ABOVE", 3)
    draw(qtbot, ctx, "examples:negrelu")
    with qtbot.waitSignal(ctx.session.caughtUp, timeout=30000):
        ctx.edits.apply(lambda d: insert(d, "call_function", "torch.sigmoid", [Ref("neg")]))
        ctx.edits.apply(lambda d: set_target(d, "relu", "torch.tanh"))  # before the table
    model = ctx.panels["table"].model
    names = [model.index(r, 1).data() for r in range(model.rowCount())]
    assert names == ctx.document.node_names()
    assert model.index(model.row_of("relu"), 2).data() == "torch.tanh"


def test_a_big_graph_catches_up_in_a_worker_thread_whatever_the_edits_in_between(
    qtbot, docks, monkeypatch
):
    ctx = docks("code", "table")
    import threading

    import fxstudio.qt.window.session as mw
    from fxstudio.core.edits import Ref, catchup, insert, rename, set_target
    from fxstudio.core.sessions.documents import open_document

    monkeypatch.setattr(mw, "DEFER_ABOVE", 3)
    threads = []
    compute = catchup.compute

    def compute_and_note(snap):  # the real work, noting where it ran
        threads.append(threading.current_thread())
        return compute(snap)

    monkeypatch.setattr(catchup, "compute", compute_and_note)
    draw(qtbot, ctx, "examples:resnet")
    doc = ctx.document
    code_view, table = ctx.panels["code"].view, ctx.panels["table"].model
    select_row(ctx.panels["table"].view, 5)
    picked = ctx.selection.names
    code_view.verticalScrollBar().setValue(code_view.verticalScrollBar().maximum() // 2)
    scrolled = code_view.verticalScrollBar().value()
    ctx.edits.apply(lambda d: set_target(d, "add", "torch.sub"))
    ctx.edits.apply(lambda d: insert(d, "call_function", "torch.tanh", [Ref("fc")]))
    qtbot.waitUntil(lambda: bool(threads))  # a worker is on it: edit once more
    with qtbot.waitSignal(ctx.session.caughtUp, timeout=30000):
        ctx.edits.apply(lambda d: rename(d, "layer2_0_conv1", "first_conv"))
    assert threads and all(t is not threading.main_thread() for t in threads)
    reference = open_document("examples:resnet")
    set_target(reference, "add", "torch.sub")
    insert(reference, "call_function", "torch.tanh", [Ref("fc")])
    rename(reference, "layer2_0_conv1", "first_conv")
    assert code_view.toPlainText() == doc.code() == reference.code()
    rows = [
        tuple(table.index(r, c).data() for c in range(table.columnCount()))
        for r in range(table.rowCount())
    ]
    assert rows == [r.values() for r in reference.rows()]
    assert code_view.verticalScrollBar().value() == scrolled  # the lines changed, not the view
    assert ctx.selection.names == picked  # and the table kept its selection
    doc.ensure_compiled()  # what runs is what is shown
    assert doc.graph_module.code.strip() == code_view.toPlainText().strip()


def test_saving_waits_for_the_catch_up_and_edits_wait_for_the_save(
    qtbot, window, tmp_path, monkeypatch
):
    import fxstudio.qt.window.session as mw
    from fxstudio.core.edits import set_target

    monkeypatch.setattr(mw, "DEFER_ABOVE", 3)
    draw(qtbot, window, "examples:negrelu")
    window.edits.apply(lambda d: set_target(d, "relu", "torch.tanh"))
    assert window.session.catch_up.busy()
    out = tmp_path / "m.py"
    with qtbot.waitSignal(window.saving.exported, timeout=60000):
        window.saving.export_to(out, "py")
        with qtbot.waitSignal(window.edits.refused) as refused:
            window.edits.apply(lambda d: set_target(d, "neg", "torch.sigmoid"))
        assert "being saved" in refused.args[0]
        assert not window.findChild(QAction, "actionUndo").isEnabled()
    assert "relu = torch.tanh(y)" in out.read_text() and "sigmoid" not in out.read_text()
    assert window.findChild(QAction, "actionUndo").isEnabled()
    assert window.edits.apply(lambda d: set_target(d, "neg", "torch.sigmoid")) is not None


def test_shapes_that_change_downstream_are_relabelled_in_place(qtbot, docks, monkeypatch):
    ctx = docks("table")
    import fxstudio.qt.window.session as mw
    from fxstudio.core.edits import splice

    for big in (False, True):
        monkeypatch.setattr(mw, "DEFER_ABOVE", 3 if big else 2000)
        draw(qtbot, ctx, "examples:negrelu")
        ctx.canvas_controller.show_minimap(True)
        scene = ctx.canvas.scene()
        assert scene.nodes["mul"].lines[2] == "4x8"
        with qtbot.waitSignal(ctx.session.caughtUp if big else ctx.layoutShown, timeout=30000):
            ctx.edits.apply(
                lambda d: splice(d, "x", "neg", "call_function", "torch.unsqueeze", [0])
            )
        assert ctx.canvas.scene() is scene  # no new layout
        assert [scene.nodes[n].lines[2] for n in ("unsqueeze", "neg", "add", "mul")] == [
            "1x4x8"
        ] * 4
        table = ctx.panels["table"].model
        assert table.index(table.row_of("mul"), 5).data() == "1x4x8"
        # the overview map and the far-out picture know the new node and no longer the old edge
        overview = scene.overview()
        assert scene.nodes["unsqueeze"] in [overview.items[i] for i in overview.index.values()]
        lines = [e for e in overview.edges if e is not None]
        assert {(e.source_name, e.target_name) for e in lines} == {
            (e.source_name, e.target_name) for e in scene.edges
        }


def test_long_code_changed_in_place_is_coloured_like_the_rest(qtbot, docks, monkeypatch):
    ctx = docks("code")
    import fxstudio.qt.panels.code as cv
    from fxstudio.core.edits import Ref, insert, rename

    monkeypatch.setattr(cv, "HIGHLIGHT_ALL_BELOW", 10)  # colour as the lines scroll into view
    draw(qtbot, ctx, "examples:resnet")
    view, highlighter = ctx.panels["code"].view, ctx.panels["code"]._highlighter
    ctx.selection.select(["layer2_0_conv1"])
    doc = view.document()
    for edit in (
        lambda d: insert(d, "call_function", "torch.tanh", [Ref("layer2_0_conv1")]),  # a line in
        lambda d: rename(d, "layer2_0_conv1", "first_conv"),  # lines changed
    ):
        with qtbot.waitSignal(ctx.layoutShown, timeout=30000):
            ctx.edits.apply(edit)
        assert view.toPlainText() == ctx.document.code()
        line = ctx.document.code_line_map()["tanh"] - 1
        for number in range(line - 3, line + 4):  # on screen: the selected node is there
            block = doc.findBlockByNumber(number)
            got = [(r.start, r.length) for r in block.layout().formats()]
            assert got == [(a, n) for a, n, _ in highlighter.spans(block.text())], block.text()


def test_undoing_a_reopened_sessions_deletes_puts_no_node_over_another(qtbot, window, tmp_path):
    """A reopened session is laid out as its replayed edits left it, so the nodes their undo
    brings back have no place in that layout: each went beside its input, and two deleted
    one after the other (the second then fed by the first's input) landed on one spot."""
    from fxstudio.core.edits import delete
    from fxstudio.core.sessions.documents import open_document
    from fxstudio.core.sessions.sessionfile import save_session

    doc = open_document("examples:resnet")
    delete(doc, ["layer1_0_relu"])
    delete(doc, ["layer1_0_conv2"])
    path = tmp_path / "deleted.fxstudio"
    save_session(doc, path)
    draw(qtbot, window, str(path))
    for _ in range(2):
        scene = relaid(qtbot, window, window.session.undo_stack.undo)
    assert {"layer1_0_relu", "layer1_0_conv2"} <= set(scene.nodes)
    boxes = {name: item.sceneBoundingRect() for name, item in scene.nodes.items()}
    over = [(a, b) for a in boxes for b in boxes if a < b and boxes[a].intersects(boxes[b])]
    assert over == []


def test_undoing_a_node_a_big_graph_marked_leaves_nothing_behind(qtbot, window, monkeypatch):
    """Regression: a big graph keeps its shape problem until the catch-up; undoing the node
    it names used to make the canvas patch fail, and the selection kept the removed node."""
    import fxstudio.qt.window.session as mw

    monkeypatch.setattr(mw, "DEFER_ABOVE", 3)
    draw(qtbot, window, "examples:negrelu")
    entries = {e.text: e for e in catalogue(window.document)}
    window.selection.clear()
    with qtbot.waitSignal(window.session.caughtUp, timeout=30000):
        window.edits.rename("neg", "negated")  # the shapes are left for the catch-up...
        window.edits.insert(entries["torch.mm"], "x, x")  # ...so this call is not run first
    assert window.document.shape_problem[0] == "mm"  # 4x8 @ 4x8: marked when shapes come
    assert window.selection.names == ["mm"]
    with qtbot.waitSignal(window.session.caughtUp, timeout=30000):
        window.session.undo_stack.undo()
        assert window.selection.names == []  # the node is gone: so is its selection
        assert "mm" not in window.canvas.scene().nodes
    assert window.document.shape_problem is None
    assert window.panels["inspector"].properties() == []


def test_a_document_replaced_by_another_is_freed(qtbot, window):
    """The open document is frozen out of the cycle collector's way; the one it replaces
    must still go (a graph is full of reference cycles)."""
    import gc
    import weakref

    draw(qtbot, window, "examples:negrelu")
    old = weakref.ref(window.document.graph_module)
    draw(qtbot, window, "examples:simple")
    qtbot.waitUntil(lambda: old() is None)
    assert gc.get_freeze_count() > 0  # and the new one is out of the collector's way


@pytest.mark.parametrize("big", [False, True], ids=["small", "big"])
def test_many_quick_edits_leave_every_view_matching_the_document(qtbot, window, monkeypatch, big):
    """Edits, undos, redos, deletes, renames, relayouts and saves in quick succession, with
    the event loop let through at random points (a worker may be mid-catch-up): afterwards
    the code view, the table and the canvas all show the document as it is."""
    import random

    from PySide6.QtWidgets import QApplication

    import fxstudio.qt.window.session as mw
    from fxstudio.core.edits import rename
    from fxstudio.core.graph.graphviews import tidy_code

    monkeypatch.setattr(mw, "DEFER_ABOVE", 3 if big else 2000)
    draw(qtbot, window, "examples:resnet")
    doc, app, rng = window.document, QApplication.instance(), random.Random(7)
    tanh = next(e for e in catalogue(doc) if e.text == "torch.tanh")
    for i in range(60):
        name = rng.choice([n for n in doc.node_names() if n not in ("output", "x")])
        r = rng.random()
        if r < 0.3:
            window.selection.select([name])
            window.edits.insert(tanh)
        elif r < 0.45:
            window.edits.apply(lambda d, n=name, k=i: rename(d, n, f"n{k}"))
        elif r < 0.6:
            window.selection.select([name])
            window.edits.delete_selection()
        elif r < 0.8:
            window.session.undo_stack.undo()
        elif r < 0.9:
            window.session.undo_stack.redo()
        else:
            window.canvas_controller.relayout()
        for _ in range(rng.randint(0, 2)):
            app.processEvents()
    if window.session.catch_up.busy():
        with qtbot.waitSignal(window.session.caughtUp, timeout=60000):
            pass
    controller = window.canvas_controller
    if controller._task is not None or controller._building is not None:
        with qtbot.waitSignal(window.layoutShown, timeout=60000):
            pass
    assert window.panels["code"].view.toPlainText() == doc.code()
    assert doc.code() == tidy_code(doc.graph.python_code("self").src)
    table = window.panels["table"].model
    assert [table.index(r, 1).data() for r in range(table.rowCount())] == doc.node_names()
    assert [table.index(r, 2).data() for r in range(table.rowCount())] == [
        row.target for row in doc.rows()
    ]
    scene = window.canvas.scene()
    shown = set(scene.nodes) | set(scene.layout.owner)
    assert set(scene.nodes) <= set(doc.node_names()) <= shown
