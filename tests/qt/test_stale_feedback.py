"""No stale or missing feedback (#20 item 5): every result is of the graph it was computed on
and says so once the graph changes (current again after an undo back to it); a refusal in the
status bar does not outlive the next thing done; the Step dock counts the graph it will step;
a command that cannot act is disabled."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QToolBar

from fxstudio.qt.canvas.heat import STALE
from fxstudio.qt.window.command_palette import CommandPalette
from fxstudio.qt.window.desktop import menu_actions
from tests.qt.conftest import move
from tests.qt.test_editing import draw, relaid


def run_per_node(qtbot, window):
    panel = window.panels["run"]
    panel.min_time.setValue(0.05)
    panel.threads.setValue(1)
    with qtbot.waitSignal(panel.finished, timeout=120000) as done:
        panel.run_button.click()
    return done.args[0]


def heat_labels(window):
    """The heat's share tags the canvas writes, by node name."""
    marks = window.panels["run"].marks
    return {tag.owner.name: tag.text for tag, _box in marks.tags_shown(window.canvas)}


def time_column(window):
    """The node table's Time column: its header and the neg row's cell (text, tooltip,
    colour), or None when there is none."""
    model = window.panels["table"].model
    last = model.columnCount() - 1
    header = model.headerData(last, Qt.Orientation.Horizontal)
    if not str(header).startswith("Time"):
        return None
    cell = model.index(model.row_of("neg"), last)
    brush = cell.data(Qt.ItemDataRole.ForegroundRole)
    return header, cell.data(), cell.data(Qt.ItemDataRole.ToolTipRole), brush


def inspector_time(window, name="neg"):
    window.selection.select([name])
    return dict(window.panels["inspector"].properties()).get("time", "")


# -- 1. results tied to the graph they were computed on ------------------------------------


def test_an_edit_marks_heat_times_and_the_run_stale_and_undo_makes_them_current(qtbot, docks):
    ctx = docks("run", "table", "inspector")
    draw(qtbot, ctx, "examples:negrelu")
    run_per_node(qtbot, ctx)
    panel = ctx.panels["run"]
    labels = heat_labels(ctx)
    assert labels["neg"].endswith("%") and "stale" not in labels["neg"]
    header, text, tip, brush = time_column(ctx)
    assert header == "Time" and text.endswith("%)") and brush is None
    assert "stale" not in inspector_time(ctx) and "stale" not in panel.status_label.text()

    relaid(qtbot, ctx, lambda: ctx.edits.change_target("relu", "torch.tanh"))
    labels = heat_labels(ctx)
    assert labels["neg"].endswith("(stale)")  # greyed, and saying why on the canvas
    box = next(c for c in ctx.canvas.scene().nodes["neg"].childItems() if "Run" in c.toolTip())
    assert box.pen().color().name() == STALE.darker(115).name()
    header, text, tip, brush = time_column(ctx)
    assert header == "Time (stale)" and text.endswith("%)")
    assert "Run again" in tip and brush.color().name() == "#8c8c8c"
    assert "stale" in inspector_time(ctx)
    assert "stale" in panel.status_label.text() and "Run again" in panel.status_label.text()
    assert "stale" in panel.node_chart.shown_title() and panel.module_chart.stale
    grey = QApplication.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)
    for table in (panel.node_table, panel.compare_table):  # greyed, still readable
        assert table.palette().color(QPalette.ColorRole.Text) == grey
        assert "Run again" in table.toolTip() and table.isEnabled()

    relaid(qtbot, ctx, ctx.session.undo_stack.undo)  # the graph the times are of
    ink = QApplication.palette().color(QPalette.ColorGroup.Active, QPalette.ColorRole.Text)
    assert panel.node_table.palette().color(QPalette.ColorRole.Text) == ink
    assert panel.node_table.toolTip() == ""
    assert "stale" not in heat_labels(ctx)["neg"]
    assert time_column(ctx)[0] == "Time" and time_column(ctx)[3] is None
    assert "stale" not in inspector_time(ctx)
    assert "stale" not in panel.status_label.text()
    assert panel.node_chart.shown_title() == "Top nodes by time"

    relaid(qtbot, ctx, ctx.session.undo_stack.redo)
    assert heat_labels(ctx)["neg"].endswith("(stale)")
    assert time_column(ctx)[0] == "Time (stale)"


def test_a_move_keeps_results_current_and_another_model_clears_them(qtbot, docks):
    ctx = docks("run", "table")
    draw(qtbot, ctx, "examples:negrelu")
    run_per_node(qtbot, ctx)
    move(ctx, {"neg": (40.0, 10.0)})  # the graph is the same: the times are still of it
    assert time_column(ctx)[0] == "Time"
    assert "stale" not in ctx.panels["run"].status_label.text()
    draw(qtbot, ctx, "examples:simple")
    assert time_column(ctx) is None and heat_labels(ctx) == {}
    assert ctx.panels["run"].status_label.text() == "Not run yet."


def test_a_run_the_graph_was_edited_during_is_stale_when_it_ends(qtbot, docks):
    ctx = docks("run", "table")
    draw(qtbot, ctx, "examples:negrelu")
    panel = ctx.panels["run"]
    panel.min_time.setValue(0.05)
    panel.threads.setValue(1)
    with qtbot.waitSignal(panel.finished, timeout=120000):
        panel.run_button.click()  # it times a copy of the graph as it is now...
        ctx.edits.change_target("relu", "torch.tanh")  # ...which this edit leaves behind
    assert "stale" in panel.status_label.text()
    assert time_column(ctx)[0] == "Time (stale)"
    relaid(qtbot, ctx, ctx.session.undo_stack.undo)
    assert "stale" not in panel.status_label.text() and time_column(ctx)[0] == "Time"


def test_a_change_made_straight_on_the_document_makes_results_stale(qtbot, docks):
    """Not through the undo stack (a script, a console statement refused and put back): a
    graph of its own, which no earlier result is of, even after an undo."""
    ctx = docks("run", "table")
    from fxstudio.core import edits

    draw(qtbot, ctx, "examples:negrelu")
    run_per_node(qtbot, ctx)
    edits.set_target(ctx.document, "relu", "torch.tanh")  # not pushed on the undo stack
    qtbot.waitUntil(lambda: time_column(ctx)[0] == "Time (stale)", timeout=10000)
    assert "stale" in ctx.panels["run"].status_label.text()


# -- 2. the status bar -------------------------------------------------------------------------


def test_a_refusal_goes_with_the_next_thing_done(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    bar = window.statusBar()
    window.edits.delete_selection()  # nothing selected
    assert bar.currentMessage() == "Not done: Select the nodes to delete first."
    move(window, {"neg": (40.0, 10.0)})  # a drag on the canvas: done, and it says nothing
    assert bar.currentMessage() == ""
    window.edits.delete_selection()
    window.action("actionFit").trigger()  # any command
    assert bar.currentMessage() == ""
    window.edits.delete_selection()
    window.selection.select(["relu"])
    relaid(qtbot, window, window.action("actionDelete").trigger)
    assert bar.currentMessage() == "Delete relu"
    window.edits.paste()  # nothing copied: a new refusal is shown, not taken away
    assert bar.currentMessage().startswith("Not done: Copy some nodes first")
    relaid(qtbot, window, window.session.undo_stack.undo)
    assert bar.currentMessage() == ""


def test_a_message_about_the_graph_an_edit_left_goes_with_its_undo(qtbot, window):
    from fxstudio.core.edits import set_target

    draw(qtbot, window, "examples:simple")
    # act's own call runs (2x32 -> 2x4); fc2, after it, no longer fits: kept, marked
    relaid(qtbot, window, lambda: window.edits.apply(lambda d: set_target(d, "act", "fc2")))
    assert "shapes no longer fit at fc2" in window.statusBar().currentMessage()
    relaid(qtbot, window, window.session.undo_stack.undo)
    assert window.statusBar().currentMessage() == ""


def test_a_refusal_from_a_dock_goes_with_the_next_edit(qtbot, window, tmp_path):
    draw(qtbot, window, "examples:negrelu")
    assert not window.panels["run"].export("json", tmp_path / "r.json")  # nothing run yet
    assert window.statusBar().currentMessage() == (
        "Not done: Nothing to export yet: run the model first."
    )
    move(window, {"neg": (40.0, 10.0)})
    assert window.statusBar().currentMessage() == ""


# -- 3. the Step dock counts the graph it will step ---------------------------------------------


def test_the_step_dock_counts_the_graph_as_edited(qtbot, docks):
    ctx = docks("step")
    draw(qtbot, ctx, "examples:resnet")
    panel = ctx.panels["step"]
    before = len(ctx.document)
    assert panel.where.text() == f"Before the first node (0 of {before} run). Step (F11) to begin."
    ctx.selection.select(["stem_1"])  # a BatchNorm: deleting it makes a shorter graph
    relaid(qtbot, ctx, ctx.edits.delete_selection)  # (Edit ▸ Delete)
    after = len(ctx.document)
    assert after == before - 1
    assert panel.where.text() == f"Before the first node (0 of {after} run). Step (F11) to begin."
    assert panel.slider.maximum() == after
    with qtbot.waitSignal(panel.moved, timeout=60000):
        panel.into_action.trigger()
    assert panel.where.text().startswith(f"Node 1 of {after} run")


def test_an_edit_clears_the_step_card_and_a_move_under_way_is_dropped(qtbot, docks):
    ctx = docks("step")
    draw(qtbot, ctx, "examples:negrelu")
    panel = ctx.panels["step"]
    for _ in range(4):
        with qtbot.waitSignal(panel.moved, timeout=60000):
            panel.into_action.trigger()
    assert panel.heading.text().startswith("neg") and panel.stats["value"].text()
    relaid(qtbot, ctx, lambda: ctx.edits.change_target("relu", "torch.tanh"))
    assert panel.heading.text() == "" and panel.stats["value"].text() == "not run yet"
    assert "edited" in panel.status_label.text()
    assert panel.where.text().startswith(f"Before the first node (0 of {len(ctx.document)}")
    with qtbot.waitSignal(panel.moved, timeout=60000):
        panel.continue_action.trigger()  # runs a copy of the graph in a worker...
        ctx.selection.select(["relu"])
        ctx.edits.delete_selection()  # ...which this edit leaves behind
    assert panel.stepper is None and "changed while it ran" in panel.status_label.text()
    assert panel.where.text().startswith(f"Before the first node (0 of {len(ctx.document)}")


# -- 4. commands enabled only when they can act ---------------------------------------------

#: The commands that act with no model open.
WITHOUT_A_MODEL = {
    "File ▸ Open model…",
    "File ▸ Quit",
    "View ▸ Command palette…",
    "View ▸ Overview map",  # a setting, kept for the next model
    "View ▸ Reset layout",
    "View ▸ Layout ▸ Edit",  # the docks can be arranged with nothing open
    "View ▸ Layout ▸ Rewrite",
    "View ▸ Layout ▸ Profile",
    "View ▸ Layout ▸ Learn",
    "View ▸ Theme ▸ Follow the system",
    "View ▸ Theme ▸ Light",
    "View ▸ Theme ▸ Dark",
    "Help ▸ Learn FX",  # opens its own example
    "Help ▸ Keyboard shortcuts",
    "Help ▸ About fxstudio",
} | {
    f"View ▸ {title}"
    for title in (
        "Generated code",
        "Inspector",
        "History",
        "Patterns",
        "Run",
        "Step",
        "Nodes",
        "Python console",
        "Learn FX",
        "Compile",
        "Memory",
    )
}


def enabled(window):
    return {
        f"{path} ▸ {a.text().replace('&', '')}"
        for path, a in menu_actions(window.menuBar())
        if a.isEnabled()
    }


def test_with_no_model_only_commands_that_can_act_are_enabled(qtbot, window):
    assert enabled(window) == WITHOUT_A_MODEL
    toolbar = window.findChild(QToolBar, "mainToolBar")
    on = [a.objectName() for a in toolbar.actions() if a.isEnabled() and not a.isSeparator()]
    assert on == ["actionOpen"]
    palette = CommandPalette(window)
    items = [palette.list.item(i) for i in range(palette.list.count())]
    shown = {i.text().split("    — ")[0] for i in items if i.flags() & Qt.ItemFlag.ItemIsEnabled}
    assert shown == {name.rpartition(" ▸ ")[2] for name in WITHOUT_A_MODEL} - {"Command palette…"}
    palette.close()
    step = window.panels["step"]
    assert not step.slider.isEnabled() and not step.into_action.isEnabled()


def test_commands_follow_the_document_selection_clipboard_and_lock(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    now = enabled(window)
    for name in (
        "File ▸ Reload",
        "File ▸ Save session",
        "File ▸ Save as Python module…",
        "File ▸ Export picture (PNG, SVG, PDF)…",
        "File ▸ Close model",
        "Edit ▸ Insert node…",
        "Edit ▸ Add input…",
        "Edit ▸ Find node…",
        "View ▸ Fit to window",
        "View ▸ Zoom in",
        "View ▸ Relayout",
        "Step ▸ Step ▶",
        "Step ▸ Continue ⇥",
    ):
        assert name in now, name
    for name in (  # need a selection, something copied, a step run, a collapsed module
        "Edit ▸ Delete",
        "Edit ▸ Copy nodes",
        "Edit ▸ Paste nodes",
        "Edit ▸ Rename node…",
        "Edit ▸ Move input earlier",
        "Step ▸ ◀ Back",
        "Step ▸ ↺ Restart",
        "Step ▸ To selected",
        "Step ▸ ● Breakpoint",
        "View ▸ Expand all modules",
        "Edit ▸ Undo",
    ):
        assert name not in now, name
    window.selection.select(["x"])  # the first input: it can move later, not earlier
    now = enabled(window)
    assert {"Edit ▸ Delete", "Edit ▸ Copy nodes", "Step ▸ To selected"} <= now
    assert "Edit ▸ Move input later" in now and "Edit ▸ Move input earlier" not in now
    window.selection.select(["neg"])
    assert "Edit ▸ Move input later" not in enabled(window)
    window.action("actionCopy").trigger()
    assert "Edit ▸ Paste nodes" in enabled(window)
    step = window.panels["step"]
    with qtbot.waitSignal(step.moved, timeout=60000):
        step.continue_action.trigger()
    now = enabled(window)
    assert "Step ▸ ◀ Back" in now and "Step ▸ Step ▶" not in now  # at the end
    window.session.lock("A save is reading the graph.")
    now = enabled(window)
    assert not {"Edit ▸ Insert node…", "Edit ▸ Delete", "Edit ▸ Paste nodes"} & now
    assert "File ▸ Save as Python module…" in now  # (reading the graph is fine)
    window.session.unlock()
    assert "Edit ▸ Delete" in enabled(window)
    window.session.close()
    assert enabled(window) == WITHOUT_A_MODEL


def test_expand_all_is_enabled_once_a_module_is_collapsed(qtbot, window):
    draw(qtbot, window, "examples:resnet")
    window.document.set_collapsed_groups(())
    assert "View ▸ Expand all modules" not in enabled(window)
    relaid(qtbot, window, lambda: window.document.set_collapsed("layer1", True))
    assert "View ▸ Expand all modules" in enabled(window)
    relaid(qtbot, window, window.action("actionExpandAll").trigger)
    assert not window.document.collapsed and not window.action("actionExpandAll").isEnabled()
