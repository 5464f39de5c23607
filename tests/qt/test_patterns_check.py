"""The Patterns dock never applies what the user did not ask for (#36 items 1 and 7): an empty
replacement box is no replacement, a rewrite whose check fails is held back until the user
applies it anyway, and what the dock and the status bar say after a replace is of the graph
as it is now."""

from tests.qt.test_patterns_dock import click, draw

RESIDUAL = ["add_1", "layer1_1_relu_1"]  # resnet's add + relu: a two-input pattern


def boxed(qtbot, window):
    draw(qtbot, window, "examples:resnet")
    panel = window.panels["patterns"]
    window.selection.select(RESIDUAL)
    click(qtbot, panel.make_button, panel.found)
    assert panel.summary.text().startswith("6 matches"), panel.summary.text()
    return panel


def test_an_empty_replacement_replaces_nothing(qtbot, window):
    panel = boxed(qtbot, window)
    code = window.document.code()
    assert panel.replacement_code.toPlainText() == ""  # an example is a placeholder only
    assert "def replacement" in panel.replacement_code.placeholderText()
    assert not panel.replace_button.isEnabled()
    assert "Write the replacement first" in panel.replace_button.toolTip()
    said: list[str] = []
    panel.message.connect(said.append)
    panel.replace_button.click()
    assert panel.replace_accepted() is False  # (called, not clicked: refused in words)
    assert said and said[-1].startswith("Write the replacement first")
    assert window.session.undo_stack.count() == 0 and window.document.code() == code
    panel.replacement_code.setPlainText("def replacement(x, y):\n    return x + y\n")
    assert panel.replace_button.isEnabled()


def test_a_rewrite_whose_check_fails_is_held_back_until_applied_anyway(qtbot, window):
    panel = boxed(qtbot, window)
    code = window.document.code()
    # every skip connection dropped: the model computes something else
    panel.replacement_code.setPlainText("def replacement(x, y):\n    return torch.relu(x)\n")
    report = click(qtbot, panel.replace_button, panel.withheld)
    assert report.check_failed and len(report.result.replaced) == 6
    assert window.session.undo_stack.count() == 0 and window.document.code() == code
    text = panel.check_label.text()
    assert "Check FAILED" in text and "Not applied: the model would compute other values" in text
    assert not panel.form.apply_button.isHidden() and panel.form.undo_button.isHidden()
    assert panel.summary.text().endswith("(6 matches): held back.")
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        click(qtbot, panel.form.apply_button, panel.rewritten)
    assert window.session.undo_stack.count() == 1 and window.document.code() != code
    assert "applied although the check found other values" in panel.check_label.text()
    assert panel.form.apply_button.isHidden() and not panel.form.undo_button.isHidden()
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        panel.form.undo_button.click()
    assert window.document.code() == code


def test_a_rewrite_held_back_is_dropped_when_the_graph_changes(qtbot, window):
    panel = boxed(qtbot, window)
    panel.replacement_code.setPlainText("def replacement(x, y):\n    return torch.relu(x)\n")
    click(qtbot, panel.replace_button, panel.withheld)
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.edits.change_target("add", "torch.sub")
    assert panel.check.held is None and panel.form.apply_button.isHidden()
    assert "dropped" in panel.check_label.text()
    assert panel.check.apply_anyway() is False
    assert window.session.undo_stack.count() == 1  # the edit only


def test_after_a_replace_the_status_and_your_pattern_say_nothing_stale(qtbot, window):
    draw(qtbot, window, "examples:resnet")
    panel = window.panels["patterns"]
    bar = window.statusBar()
    with qtbot.waitSignal(panel.found, timeout=60000):
        panel.choose_rewrite("fold-conv-bn")
    panel.step(2)
    assert bar.currentMessage().startswith("Place 3 of 15: replaces")
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        click(qtbot, panel.replace_button, panel.rewritten)
    assert not bar.currentMessage().startswith("Place"), bar.currentMessage()
    assert bar.currentMessage().startswith("fold-conv-bn (15 matches)")
    assert "Check passed" in panel.check_label.text()
    qtbot.waitUntil(
        lambda: panel.rewrites.previewed is not None and not panel.busy(), timeout=60000
    )
    panel.rewrite_list.setCurrentRow(0)  # Your pattern: nothing of the built-in's shows
    assert panel.check_label.text() == "" and panel.check_label.isHidden()
    assert panel.summary.text() == "" and panel.match_list.count() == 0
    assert panel.form.report_button.isHidden()


def test_why_not_here_is_told_from_the_node_asked_about_and_keeps_it_selected(qtbot, window):
    draw(qtbot, window, "examples:resnet")
    panel = window.panels["patterns"]
    window.selection.select(["layer1_1_conv1", "layer1_1_bn1", "layer1_1_relu"])
    click(qtbot, panel.make_button, panel.found)
    window.selection.select(["layer1_0_conv2"])
    click(qtbot, panel.why_button, panel.explained)
    assert panel.explanation.toPlainText().startswith(
        "Here: layer1_0_conv2 matches the pattern's Conv2d (layer1_1_conv1)"
    )
    assert window.selection.current == "layer1_0_conv2"  # not the first match's nodes
    assert panel.marks.culprit == "add"
    assert panel.marks.partial == ["layer1_0_conv2", "layer1_0_bn2"]
