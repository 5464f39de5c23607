"""The Python console dock: edits and direct changes reach the undo stack; refusals say why."""

from PySide6.QtCore import Qt


def test_console_edits_are_undo_steps_in_the_window(qtbot, docks):
    ctx = docks("console", "code")
    ctx.open("examples:negrelu")
    console = ctx.panels["console"]
    qtbot.keyClicks(console.input, "edits.set_target('relu', 'torch.sigmoid')")
    qtbot.keyClick(console.input, Qt.Key.Key_Return)
    assert ctx.session.undo_stack.count() == 1 and "torch.sigmoid(y)" in ctx.document.code()
    assert "<Edit 'Change relu to torch.sigmoid'>" in console.output.toPlainText()
    console.run("next(n for n in graph.nodes if n.name == 'add').target = operator.sub")
    assert ctx.session.undo_stack.undoText() == "Console edit"
    assert "neg - relu" in ctx.panels["code"].view.toPlainText()  # the views follow
    ctx.session.undo_stack.undo()
    assert "neg + relu" in ctx.document.code()
    ctx.session.undo_stack.undo()
    assert "torch.relu(y)" in ctx.document.code()
    # a broken change is put back, with the reason in the console
    console.run("nodes = {n.name: n for n in graph.nodes}")
    result = console.run("nodes['add'].args = (nodes['mul'], nodes['relu'])")
    assert result.refused and "refused and undone" in console.output.toPlainText()
    assert (
        ctx.session.undo_stack.count() == 2
        and ctx.document.graph_module(*ctx.document.example_inputs) is not None
    )
    # history and completion
    qtbot.keyClick(console.input, Qt.Key.Key_Up)
    assert console.input.text().startswith("nodes['add'].args")
    assert "edits.set_target(" in console.complete("edits.set_t")


def test_console_waits_while_edits_wait(qtbot, docks):
    """While a worker reads the graph (a save, the Patterns dock) the console runs nothing:
    it says why, its input is disabled, and it runs again once the lock is lifted."""
    ctx = docks("console")
    ctx.open("examples:negrelu")
    console = ctx.panels["console"]
    before = ctx.document.code()
    ctx.session.lock("Saving model.py: edits wait until it is written.")
    assert not console.input.isEnabled()
    assert "Saving model.py" in console.input.placeholderText()
    with qtbot.waitSignal(console.message) as said:
        assert console.run("edits.set_target('relu', 'torch.sigmoid')") is None
    assert "Saving model.py" in said.args[0]
    assert "# not run: Saving model.py" in console.output.toPlainText()
    assert ctx.document.code() == before and ctx.session.undo_stack.count() == 0
    ctx.session.unlock()
    assert console.input.isEnabled()
    console.run("edits.set_target('relu', 'torch.sigmoid')")
    assert ctx.session.undo_stack.count() == 1 and "torch.sigmoid(y)" in ctx.document.code()
