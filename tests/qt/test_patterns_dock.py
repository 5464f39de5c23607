"""The Patterns dock: box nodes, see every match, ask why not, replace as one undo step.

Finding, explaining and replacing run in workers: each test waits for the dock's signal
(``found``, ``explained``, ``rewritten``) as a user waits for the dock to show the result."""

from PySide6.QtCore import QPoint, QRect, Qt

from fxstudio.core.patterns.pattern import FX_RULES
from tests.qt.conftest import open_and_wait


def draw(qtbot, window, spec):
    return open_and_wait(qtbot, window, spec, signal="layoutShown")


def click(qtbot, button, signal, timeout=60000):
    """Click ``button`` and wait for ``signal``; returns what it carried."""
    with qtbot.waitSignal(signal, timeout=timeout) as blocker:
        button.click()
    return blocker.args[0] if blocker.args else None


def test_box_find_replace_and_undo_gives_the_code_back(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    panel = window.panels["patterns"]
    code = window.document.code()
    window.selection.select(["neg", "relu", "add"])
    click(qtbot, panel.make_button, panel.found)
    assert "def pattern(x, y):" in panel.pattern_code.toPlainText()
    assert panel.summary.text().startswith("1 match")
    assert panel.marks.matches == [["neg", "relu", "add"]]  # in the pattern's order
    assert window.document.pattern_boxes[0].nodes == ("neg", "relu", "add")
    assert len(panel.marks._items) >= 3  # outlined on the canvas
    panel.replacement_code.setPlainText("def replacement(x, y):\n    return torch.relu(y) - x\n")
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        click(qtbot, panel.replace_button, panel.rewritten)
    assert "torch.neg" not in window.panels["code"].view.toPlainText()
    assert panel.explanation.toPlainText() == ""  # the old match's table is gone with it
    assert window.session.undo_stack.count() == 1
    assert "Check passed" in panel.check_label.text()
    assert panel.form.report_button.isEnabled()
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.session.undo_stack.undo()
    assert window.document.code() == code
    assert panel.check_label.text() == ""  # the undone rewrite's check is gone with it


def test_editing_waits_while_the_dock_reads_the_graph(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    panel = window.panels["patterns"]
    refused = []
    window.edits.refused.connect(refused.append)
    panel.pattern_code.setPlainText("def pattern(x):\n    return torch.relu(x)\n")
    with qtbot.waitSignal(panel.found, timeout=60000):
        panel.find_button.click()
        window.selection.select(["relu"])
        assert window.edits.delete_selection() is None  # the worker reads the graph: wait
    assert refused and "Finding" in refused[0]
    assert window.edits.delete_selection() is not None  # done: edits go again


def test_a_near_miss_is_explained_and_marked(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    panel = window.panels["patterns"]
    panel.rules.set_rules(FX_RULES)
    panel.pattern_code.setPlainText(
        "def pattern(x, y):\n    return torch.neg(x) + torch.nn.functional.relu(y)\n"
    )
    click(qtbot, panel.find_button, panel.explained)
    assert panel.summary.text().startswith("0 matches")
    text = panel.explanation.toPlainText()
    assert "target differs -- torch.relu is not F.relu" in text
    assert panel.marks.culprit == "relu" and "add" in panel.marks.partial
    window.selection.select(["relu"])
    click(qtbot, panel.why_button, panel.explained)
    assert "Here: relu would be the pattern's relu" in panel.explanation.toPlainText()
    assert window.selection.current == "relu"  # the node asked about stays the one selected


def test_rejected_matches_are_left_alone(qtbot, window):
    draw(qtbot, window, "examples:resnet")
    panel = window.panels["patterns"]
    panel.pattern_code.setPlainText("def pattern(x):\n    return torch.relu(x)\n")
    click(qtbot, panel.find_button, panel.found)
    count = panel.match_list.count()
    assert count > 1
    panel.match_list.item(0).setCheckState(Qt.CheckState.Unchecked)
    panel.replacement_code.setPlainText(
        "def replacement(x):\n    return torch.nn.functional.relu(x)\n"
    )
    click(qtbot, panel.replace_button, panel.rewritten)
    assert window.session.undo_stack.count() == 1
    assert f"({count - 1} matches)" in window.session.undo_stack.undoText()


def test_the_inspector_shows_where_a_rewritten_node_came_from(qtbot, window):
    draw(qtbot, window, "examples:resnet")
    panel = window.panels["patterns"]
    with qtbot.waitSignal(panel.found, timeout=60000):
        panel.choose_rewrite("fold-conv-bn")
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        click(qtbot, panel.replace_button, panel.rewritten)
    assert "Check passed" in panel.check_label.text()
    window.selection.select(["stem_0"])
    props = dict(window.panels["inspector"].properties())
    assert "fold conv+bn" in props["rewritten by"] and "stem_1" in props["rewritten by"]


def test_a_pattern_file_saves_and_opens_and_the_cli_reads_it(qtbot, window, tmp_path):
    from fxstudio import cli

    draw(qtbot, window, "examples:negrelu")
    panel = window.panels["patterns"]
    window.selection.select(["neg", "relu", "add"])
    click(qtbot, panel.make_button, panel.found)
    panel.replacement_code.setPlainText("def replacement(x, y):\n    return torch.relu(y) - x\n")
    panel.rules.set_rules(FX_RULES)
    path = tmp_path / "negrelu_pattern.py"
    assert panel.files.save_file(str(path))
    panel.pattern_code.clear()
    panel.rules.set_rules(panel.rules.shown().__class__())
    with qtbot.waitSignal(panel.found, timeout=60000):
        assert panel.open_file(str(path))
    assert (
        panel.rules.shown().module == "name"
        and "def pattern(x, y):" in panel.pattern_code.toPlainText()
    )
    assert panel.summary.text().startswith("1 match")
    assert "match 1" in panel.explanation.toPlainText()  # the tables side by side
    code = cli.main(
        [
            "rewrite",
            "examples:negrelu",
            "--pattern",
            f"{path}:pattern",
            "--replacement",
            f"{path}:replacement",
        ]
    )
    assert code == 0


def test_rules_for_one_node(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    panel = window.panels["patterns"]
    panel.rules.set_rules(FX_RULES)
    panel.pattern_code.setPlainText(
        "def pattern(x, y):\n    return torch.neg(x) + torch.nn.functional.relu(y)\n"
    )
    click(qtbot, panel.find_button, panel.explained)
    assert panel.summary.text().startswith("0 matches")
    panel.form.scope.setCurrentIndex(panel.form.scope.findData("relu"))
    panel.form.rule_boxes["spelling"].setChecked(True)  # only relu may be spelled another way
    assert (
        panel.rules.default_rules.spelling == "exact"
        and panel.rules.node_rules["relu"].spelling == "equivalent"
    )
    click(qtbot, panel.find_button, panel.found)
    assert panel.summary.text().startswith("1 match")


def test_a_replacement_box_built_with_the_editing_tools(qtbot, window):
    from fxstudio.core import edits
    from fxstudio.core.edits import Ref

    draw(qtbot, window, "examples:negrelu")
    panel = window.panels["patterns"]
    doc = window.document
    window.selection.select(["neg", "relu", "add"])
    click(qtbot, panel.make_button, panel.found)
    # the replacement, built in the graph: sub = relu(y) - x
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        made = window.edits.apply(
            lambda d: edits.insert(d, "call_function", "torch.relu", [Ref("y")])
        ).record["name"]
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        sub = window.edits.apply(
            lambda d: edits.insert(d, "call_function", "operator.sub", [Ref(made), Ref("x")])
        ).record["name"]
    window.selection.select([made, sub])
    panel.form.box_button.click()
    assert panel.replacement_choice.currentData() == "__box__"
    click(qtbot, panel.find_button, panel.found)
    assert panel.summary.text().startswith("1 match"), panel.summary.text()
    click(qtbot, panel.replace_button, panel.rewritten)
    assert "Check passed" in panel.check_label.text(), panel.check_label.text()
    assert "torch.neg" not in doc.code()


def test_a_rewrite_of_a_big_graph_becomes_one_undo_step_made_off_the_gui_thread(qtbot, window):
    """The replacement runs on a copy in a worker; the rewritten graph is adopted as one edit
    (undo gives the very code back at once: each graph keeps the views made of it)."""
    from tests.conftest import ROOT

    draw(qtbot, window, f"{ROOT / 'tests' / 'bench' / 'synthetic.py'}:deep(3000)")
    doc = window.document
    assert doc.defer_heavy  # a big graph: code and shapes come from workers
    panel = window.panels["patterns"]
    panel.pattern_code.setPlainText("def pattern(x):\n    return torch.relu(x)\n")
    panel.replacement_code.setPlainText("def replacement(x):\n    return torch.sigmoid(x)\n")
    code = doc.code()
    # the values change: held back until the user applies it anyway
    held = click(qtbot, panel.replace_button, panel.withheld, timeout=120000)
    assert held.check.ok is False and window.session.undo_stack.count() == 0
    report = click(qtbot, panel.form.apply_button, panel.rewritten, timeout=120000)
    assert len(report.result.replaced) == 999 and report.check.ok is False
    assert doc.code_ready()  # the code came from the worker, made on the copy
    # the table, code and Step dock follow, each in a turn of its own
    qtbot.waitUntil(lambda: not window.session.turns.busy(), timeout=30000)
    table = window.panels["table"].model
    names = doc.node_names()
    assert table.rowCount() == len(names) and "sigmoid" in names
    assert all(table.row_of(name) == i for i, name in enumerate(names))
    assert window.panels["code"].view.toPlainText() == doc.code()
    assert "torch.sigmoid" in doc.code() and "torch.relu" not in doc.code()
    assert window.session.undo_stack.count() == 1 and not doc.shapes_stale
    window.session.undo_stack.undo()
    assert doc.code_ready() and doc.code() == code  # kept with the old graph: not made again
    assert not doc.shapes_stale and not window.session.catch_up.busy()
    window.session.undo_stack.redo()
    assert doc.code_ready() and "torch.sigmoid" in doc.code()


def test_after_a_rewrite_the_preview_above_its_success_reads_as_what_is_left(qtbot, window):
    """The built-in is previewed again on the graph its rewrite made: "nothing to change --
    no candidates" sat above the green success line as if it were stale; it says the
    rewrite is done and nothing is left."""
    draw(qtbot, window, "examples:resnet")
    panel = window.panels["patterns"]
    with qtbot.waitSignal(panel.found, timeout=60000):
        panel.choose_rewrite("fold-conv-bn")
    assert "15 places to change" in panel.summary.text()
    with qtbot.waitSignal(panel.found, timeout=60000):  # the preview again, after it
        click(qtbot, panel.replace_button, panel.rewritten)
    assert panel.check_label.text().startswith("fold-conv-bn (15 matches).")
    assert panel.summary.text() == "Fold conv + BatchNorm: done -- nothing left to change."
    with qtbot.waitSignal(panel.found, timeout=60000):  # undone: a verdict of that graph
        window.session.undo_stack.undo()
    assert "15 places to change" in panel.summary.text() and not panel.check_label.text()
    with qtbot.waitSignal(panel.found, timeout=60000):
        window.session.undo_stack.redo()  # (no rewrite of this dock's last: a plain verdict)
    assert panel.summary.text().startswith("Fold conv + BatchNorm: nothing to change -- no ")


def test_a_long_summary_is_whole_at_1000_pixels(qtbot, window, write_model):
    """A built-in that changes nothing says why, and what it noticed, in several lines: at
    1000x700 the lines past the first few were drawn under the list of places."""
    path = write_model(
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from torch import nn\n"
        "class Net(nn.Module):\n"
        "    def forward(self, q, k, v):\n"
        "        for _ in range(4):\n"
        "            q = F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        "        return q\n"
        "def example_inputs():\n"
        "    return tuple(torch.randn(1, 2, 4, 8) for _ in range(3))\n"
    )
    window.resize(1000, 700)
    draw(qtbot, window, f"{path}:Net")
    window.layouts.use("rewrite")
    panel = window.panels["patterns"]
    with qtbot.waitSignal(panel.found, timeout=60000):
        panel.choose_rewrite("fuse-attention")
    summary = panel.summary
    assert "already fused" in summary.text()

    def whole() -> bool:
        lines = summary.fontMetrics().boundingRect(
            QRect(0, 0, summary.width(), 0), int(Qt.TextFlag.TextWordWrap), summary.text()
        )
        below = panel.match_list.mapTo(panel.dock, QPoint(0, 0)).y()
        bottom = summary.mapTo(panel.dock, QPoint(0, summary.height())).y()
        return summary.height() >= lines.height() > 5 * summary.fontMetrics().height() and (
            below >= bottom
        )

    qtbot.waitUntil(whole, timeout=5000)


def test_a_preview_follows_changes_in_a_row_without_a_refusal(qtbot, window):
    """A built-in chosen, two edits in one turn of the loop: the second change asks for a
    preview while the first one's runs; it is made after it, and nothing is refused."""
    draw(qtbot, window, "examples:resnet")
    panel = window.panels["patterns"]
    with qtbot.waitSignal(panel.found, timeout=60000):
        panel.choose_rewrite("fold-conv-bn")
    said: list[str] = []
    panel.message.connect(said.append)
    window.edits.change_target("add", "torch.sub")
    window.edits.change_target("add_1", "torch.sub")
    assert window.document.code().count("torch.sub(") == 2  # both edits were made
    qtbot.waitUntil(
        lambda: panel.rewrites.previewed is not None and not panel.busy(), timeout=60000
    )
    assert said == []
    assert panel.summary.text().startswith("Fold conv + BatchNorm: 15 places to change")
