"""The Patterns dock: box nodes, see every match, ask why not, replace as one undo step."""

from PySide6.QtCore import Qt

from tests.qt.conftest import open_and_wait


def draw(qtbot, window, spec):
    return open_and_wait(qtbot, window, spec, signal="layoutShown")


def test_box_find_replace_and_undo_gives_the_code_back(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    panel = window.patterns
    code = window.document.code()
    window.selection.select(["neg", "relu", "add"])
    panel.make_button.click()
    assert "def pattern(x, y):" in panel.pattern_code.toPlainText()
    assert panel.summary.text().startswith("1 match")
    assert panel.marks.matches == [["neg", "relu", "add"]]  # in the pattern's order
    assert window.document.pattern_boxes[0].nodes == ("neg", "relu", "add")
    assert len(panel.marks._items) >= 3  # outlined on the canvas
    panel.replacement_code.setPlainText("def replacement(x, y):\n    return torch.relu(y) - x\n")
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        panel.replace_button.click()
    assert "torch.neg" not in window.code_view.toPlainText()
    assert panel.explanation.toPlainText() == ""  # the old match's table is gone with it
    assert window.undo_stack.count() == 1
    assert "Check passed" in panel.check_label.text()
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.undo_stack.undo()
    assert window.document.code() == code


def test_a_near_miss_is_explained_and_marked(qtbot, window):
    draw(qtbot, window, "examples:negrelu")
    panel = window.patterns
    panel.set_rules(__import__("fxstudio.core.patterns.pattern", fromlist=["x"]).FX_RULES)
    panel.pattern_code.setPlainText(
        "def pattern(x, y):\n    return torch.neg(x) + torch.nn.functional.relu(y)\n"
    )
    panel.find_button.click()
    assert panel.summary.text().startswith("0 matches")
    text = panel.explanation.toPlainText()
    assert "target differs -- torch.relu is not F.relu" in text
    assert panel.marks.culprit == "relu" and "add" in panel.marks.partial
    window.selection.select(["relu"])
    panel.why_button.click()
    assert "Here: relu" in panel.explanation.toPlainText()


def test_rejected_matches_are_left_alone(qtbot, window):
    draw(qtbot, window, "examples:resnet")
    panel = window.patterns
    panel.pattern_code.setPlainText("def pattern(x):\n    return torch.relu(x)\n")
    panel.find_button.click()
    count = panel.match_list.count()
    assert count > 1
    panel.match_list.item(0).setCheckState(Qt.CheckState.Unchecked)
    panel.replacement_code.setPlainText(
        "def replacement(x):\n    return torch.nn.functional.relu(x)\n"
    )
    panel.replace_button.click()
    assert window.undo_stack.count() == 1
    assert f"({count - 1} matches)" in window.undo_stack.undoText()


def test_the_inspector_shows_where_a_rewritten_node_came_from(qtbot, window):
    draw(qtbot, window, "examples:resnet")
    panel = window.patterns
    index = panel.replacement_choice.findData("fold-conv-bn")
    panel.replacement_choice.setCurrentIndex(index)
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        panel.replace_button.click()
    assert "Check passed" in panel.check_label.text()
    window.selection.select(["stem_0"])
    props = dict(window.inspector.properties())
    assert "fold conv+bn" in props["rewritten by"] and "stem_1" in props["rewritten by"]


def test_a_pattern_file_saves_and_opens_and_the_cli_reads_it(qtbot, window, tmp_path):
    from fxstudio import cli
    from fxstudio.core.patterns.pattern import FX_RULES

    draw(qtbot, window, "examples:negrelu")
    panel = window.patterns
    window.selection.select(["neg", "relu", "add"])
    panel.make_button.click()
    panel.replacement_code.setPlainText("def replacement(x, y):\n    return torch.relu(y) - x\n")
    panel.set_rules(FX_RULES)
    path = tmp_path / "negrelu_pattern.py"
    assert panel.save_file(str(path))
    panel.pattern_code.clear()
    panel.set_rules(panel.rules().__class__())
    assert panel.open_file(str(path))
    assert (
        panel.rules().module == "name" and "def pattern(x, y):" in panel.pattern_code.toPlainText()
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
    from fxstudio.core.patterns.pattern import FX_RULES

    draw(qtbot, window, "examples:negrelu")
    panel = window.patterns
    panel.set_rules(FX_RULES)
    panel.pattern_code.setPlainText(
        "def pattern(x, y):\n    return torch.neg(x) + torch.nn.functional.relu(y)\n"
    )
    panel.find_button.click()
    assert panel.summary.text().startswith("0 matches")
    panel.scope.setCurrentIndex(panel.scope.findData("relu"))
    panel.rule_boxes["spelling"].setChecked(True)  # only relu may be spelled another way
    assert (
        panel.default_rules.spelling == "exact"
        and panel.node_rules["relu"].spelling == "equivalent"
    )
    panel.find_button.click()
    assert panel.summary.text().startswith("1 match")


def test_a_replacement_box_built_with_the_editing_tools(qtbot, window):
    from fxstudio.core import edits
    from fxstudio.core.edits import Ref

    draw(qtbot, window, "examples:negrelu")
    panel = window.patterns
    doc = window.document
    window.selection.select(["neg", "relu", "add"])
    panel.make_button.click()
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
    panel.box_button.click()
    assert panel.replacement_choice.currentData() == "__box__"
    panel.find_button.click()
    assert panel.summary.text().startswith("1 match"), panel.summary.text()
    with qtbot.waitSignal(panel.rewritten, timeout=10000):
        panel.replace_button.click()
    assert "Check passed" in panel.check_label.text(), panel.check_label.text()
    assert "torch.neg" not in doc.code()
