"""Learn FX driven on the window, as a newcomer would: every step's check passes on the
learner's own actions (clicks in the docks, edits, the Step and Run docks), and the lesson
state comes back with the session."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QTextCursor
from PySide6.QtWidgets import QLabel, QPushButton, QRadioButton, QSlider

from fxstudio.core.flows import open_document
from fxstudio.core.graph.catalogue import Entry
from fxstudio.core.lesson.syllabus import STEPS
from tests.qt.conftest import open_and_wait


def _click(panel, name):
    widget = panel.extra.findChild(QPushButton, name) or panel.dock.findChild(QPushButton, name)
    assert widget is not None, name
    widget.click()


def _next(qtbot, lesson, expect_id):
    assert lesson.recheck().ok, lesson.verdict.text()
    lesson.next_button.click()
    assert lesson.step.id == expect_id


def test_a_newcomer_goes_through_the_whole_lesson_on_the_window(qtbot, window, tmp_path):
    lesson = window.panels["lesson"]
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.findChild(QAction, "actionLearnFx").trigger()
    assert lesson.dock.isVisible() and window.document.request.spec == "examples:fxdocs"
    assert lesson.step.id == "pick"
    _next(qtbot, lesson, "trace")
    # 2: the trace replayed node by node, each with the user's line
    assert not lesson.recheck().ok
    lesson.replayer.ms = 60000  # first look at the canvas after one node
    _click(lesson, "lessonReplay")
    nodes = window.canvas.scene().nodes
    assert nodes["x"].opacity() == 1.0 and nodes["clamp"].opacity() < 0.5  # not created yet
    with qtbot.waitSignal(lesson.replayed, timeout=10000):
        lesson.replayer.timer.setInterval(1)
    assert nodes["clamp"].opacity() == 1.0
    assert "generated: return clamp" in lesson.replayer.label.text()  # the last node: output
    _next(qtbot, lesson, "ir")
    # 3: the quiz, a wrong answer first
    lesson.extra.findChild(QRadioButton, "lessonAnswer_opcode_call_method").click()
    lesson.extra.findChild(QRadioButton, "lessonAnswer_leaf_leaf").click()
    assert "Not quite" in lesson.verdict.text()
    lesson.extra.findChild(QRadioButton, "lessonAnswer_opcode_call_function").click()
    _next(qtbot, lesson, "code")
    # 4: a click on line 4 of the generated code selects its node
    block = window.panels["code"].view.document().findBlockByNumber(3)
    window.panels["code"].view.setTextCursor(QTextCursor(block))
    assert window.selection.current == "linear" and lesson.recheck().ok
    _next(qtbot, lesson, "interpret")
    # 5: the Step dock to the end
    with qtbot.waitSignal(window.panels["step"].moved, timeout=60000):
        window.panels["step"].continue_action.trigger()
    assert "agrees with the eager model" in lesson.verdict.text()
    _next(qtbot, lesson, "surgery")
    # 6: add -> mul in the inspector's edit path, then a relu from the insert palette's entry
    assert "recompile()" in lesson.text.toPlainText()  # the stale-code demonstration
    window.edits.change_target("add", "operator.mul")
    window.selection.select(["add"])
    window.edits.insert(Entry("torch.relu", "call_function", "torch.relu", "torch"))
    assert "operator.add → operator.mul" in lesson.verdict.text()
    _next(qtbot, lesson, "pattern")
    # 7: the deliberate miss, its reason, then the learner's fix and the Replace button
    patterns = window.panels["patterns"]
    with qtbot.waitSignal(patterns.explained, timeout=60000):
        _click(lesson, "lessonTryPattern")
    assert "6.0" in patterns.explanation.toPlainText()
    assert "It missed" in lesson.verdict.text()
    text = patterns.pattern_code.toPlainText().replace("6.0", "1.0")
    patterns.pattern_code.setPlainText(text)
    with qtbot.waitSignal(patterns.found, timeout=60000) as found:
        patterns.find_button.click()
    assert len(found.args[0].matches) == 1
    with qtbot.waitSignal(patterns.rewritten, timeout=60000):
        patterns.replace_button.click()
    _next(qtbot, lesson, "failures")
    # 8: each trap opened, explained at its line, fixed with one click (a re-capture)
    for cid, spec, _label in [
        (s[0], s[1], s[2])
        for s in __import__("fxstudio.core.lesson.syllabus", fromlist=["TRAPS"]).TRAPS
    ]:
        with qtbot.waitSignal(lesson.diagnosed, timeout=120000) as got:
            _click(lesson, f"lessonOpen_{cid}")
        assert got.args[0].location is not None
        assert spec.split(":")[1] in lesson.diagnosis_view.toPlainText()
        with qtbot.waitSignal(window.session.loaded, timeout=60000):
            lesson.fix_row.findChild(QPushButton, "lessonFix0").click()
        assert cid in lesson.state.facts["fixed"]
    _next(qtbot, lesson, "pass")
    # 9: the ResNet opens; pin, fold, compare in the Run and Patterns docks
    qtbot.waitUntil(lambda: window.document.request.spec == "examples:resnet", timeout=60000)
    run = window.panels["run"]
    run.pin_button.click()
    with qtbot.waitSignal(patterns.found, timeout=60000):  # the preview of its places
        window.action("actionRewrite_fold-conv-bn").trigger()
    with qtbot.waitSignal(patterns.rewritten, timeout=60000):
        patterns.replace_button.click()
    run.min_time.setValue(0.05)
    run.threads.setValue(1)
    with qtbot.waitSignal(run.finished, timeout=300000):
        run.compare_button.click()
    # the lesson hears of the run through its own (queued) connection to the Run dock
    qtbot.waitUntil(lambda: "95 % CI" in lesson.verdict.text(), timeout=30000)
    folded = len(window.document)  # 39 nodes; a fresh trace of the ResNet has 54
    _next(qtbot, lesson, "export")
    # 10: the same model through torch.export, beside a fresh trace's count (not the fold's)
    with qtbot.waitSignal(window.session.loaded, timeout=120000):
        _click(lesson, "lessonOpenExport")
    assert lesson.recheck().ok and "ATen calls" in lesson.verdict.text()
    traced = len(open_document("examples:resnet"))
    qtbot.waitUntil(
        lambda: f"symbolic tracing gives {traced}" in lesson.verdict.text(), timeout=60000
    )
    assert f"the fx graph you had open has {folded} after 1 edit" in lesson.verdict.text()
    assert lesson.next_button.text() == "Done ✓"
    assert set(lesson.state.done) == {s.id for s in STEPS}
    # the lesson saves in the session and resumes with it
    path = tmp_path / "lesson.fxstudio"
    assert window.saving.save_session(path)
    lesson.active = False
    lesson.state = type(lesson.state)()
    from fxstudio.core.graph.request import OpenRequest

    with qtbot.waitSignal(window.session.loaded, timeout=120000):
        window.session.open(OpenRequest(str(path)))
    assert lesson.active and lesson.step.id == "export" and len(lesson.state.done) == 10


def test_the_trace_replay_goes_faster_skips_and_says_when_the_graph_was_edited(qtbot, docks):
    """The lesson on the learner's own 54-node ResNet: at the slowest speed the replay would
    take half a minute; the slider speeds it up while it runs, Skip shows the end at once,
    and after an edit the replay says it shows the graph as it is now."""
    ctx = docks("lesson")
    ctx.open("examples:resnet")
    lesson = ctx.panels["lesson"]
    lesson.start()  # what Help ▸ Learn FX starts (the Learn layout is the window's)
    _next(qtbot, lesson, "trace")
    speed = lesson.extra.findChild(QSlider, "lessonReplaySpeed")
    readout = lesson.extra.findChild(QLabel, "lessonReplaySpeedLabel")
    note = lesson.extra.findChild(QLabel, "lessonReplayNote")
    speed.setValue(speed.minimum())
    assert readout.text() == "600 ms a node"
    _click(lesson, "lessonReplay")
    assert "Node 1 of 54" in lesson.replayer.label.text()
    assert note.isHidden()  # the graph as tracing made it: nothing to say
    nodes = ctx.canvas.scene().nodes
    assert nodes["fc"].opacity() < 0.5
    with qtbot.waitSignal(lesson.replayed, timeout=20000):  # 53 x 600 ms would be 32 s
        speed.setValue(speed.maximum())
    assert readout.text() == "10 ms a node" and "Node 54 of 54" in lesson.replayer.label.text()
    assert lesson.recheck().ok and "in the order tracing created them" in lesson.verdict.text()

    ctx.edits.rename("pool", "avgpool")  # the graph is no longer the trace
    speed.setValue(speed.minimum())
    _click(lesson, "lessonReplay")
    assert note.isVisible() and "edited since it was traced (1 edit)" in note.text()
    assert "as it is now, not as tracing made it" in note.text()
    with qtbot.waitSignal(lesson.replayed, timeout=2000):
        _click(lesson, "lessonReplaySkip")
    assert all(item.opacity() == 1.0 for item in nodes.values())
    assert "Node 54 of 54" in lesson.replayer.label.text()
    assert lesson.recheck().ok and "as it is now (edited)" in lesson.verdict.text()


def test_start_says_it_works_on_the_open_model_and_the_facts_stay_with_their_model(
    qtbot, window, tmp_path
):
    """Start keeps the learner's model and says so; what the lesson saw on one model (the
    node picked) is not saved with another; a saved lesson resumes in the Learn layout."""
    import json

    from fxstudio.core.graph.request import OpenRequest

    open_and_wait(qtbot, window, "examples:simple", signal="layoutShown")
    lesson = window.panels["lesson"]
    said = lesson.text.toPlainText()
    assert "works on the model open now (examples:simple)" in said
    assert "opens the lesson's own" not in said
    window.learn()
    assert window.document.request.spec == "examples:simple"  # kept, as it said
    window.selection.select(["fc1"])
    assert lesson.state.facts["selected"] == "fc1"
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    assert lesson.state.facts.get("selected") is None
    assert lesson.state.facts_of == "examples:negrelu"
    path = tmp_path / "other.fxstudio"
    assert window.saving.save_session(path)
    saved = json.loads(path.read_text())
    facts = json.dumps(saved)
    assert '"fc1"' not in facts and '"examples:negrelu"' in facts
    # opened again in the Edit layout: the lesson resumes in the Learn layout
    window.layouts.use("edit")
    lesson.active = False
    with qtbot.waitSignal(window.session.loaded, timeout=120000):
        window.session.open(OpenRequest(str(path)))
    assert lesson.active and window.layouts.current == "learn"


def test_the_lessons_open_buttons_ask_before_an_edited_document_goes(qtbot, window, monkeypatch):
    """The traps' Open and Fix (step 8) and Open with torch.export (step 10) replace the
    document: with unsaved edits they ask as File ▸ Open does -- Cancel keeps the edits and
    their undo history, Discard opens the other model."""
    from PySide6.QtWidgets import QMessageBox

    from fxstudio.core.lesson.syllabus import step_index

    lesson = window.panels["lesson"]
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.learn()  # the docs' module
    lesson.go(step_index("failures"))
    with qtbot.waitSignal(lesson.diagnosed, timeout=120000):  # nothing edited: no question
        _click(lesson, "lessonOpen_trap_if")
    window.interactive = True
    asked, answer = [], [QMessageBox.StandardButton.Cancel]
    monkeypatch.setattr(window.saving, "ask_save_changes", lambda: asked.append(1) or answer[0])
    assert asked == []
    doc, stack = window.document, window.session.undo_stack
    window.edits.rename("add", "added")
    for button in ("lessonFix0", "lessonOpen_trap_len"):
        _click(lesson, button)
        assert len(asked) == 1 and window.session.opening is None, button
        asked.clear()
        assert window.document is doc and "added" in doc and stack.canUndo()
        assert window.session.modified and stack.undoText() == "Rename add to added"
    lesson.go(step_index("export"))
    _click(lesson, "lessonOpenExport")
    assert asked == [1] and window.session.opening is None and window.document is doc
    stack.undo()  # the undo history is whole
    assert "add" in window.document and "added" not in window.document
    stack.redo()
    answer[0] = QMessageBox.StandardButton.Discard
    with qtbot.waitSignal(window.session.loaded, timeout=120000) as loaded:
        _click(lesson, "lessonOpenExport")
    assert loaded.args[0].request.frontend == "export" and not window.session.modified
    assert lesson.recheck().ok


def _lesson_texts():
    """Everything the lesson can say, as written in its modules: each string (an f-string
    with ``{}`` where a value goes), so that a verdict shown only on a rare path is read too."""
    import ast
    from pathlib import Path

    import fxstudio

    root = Path(fxstudio.__file__).parent
    files = [*sorted((root / "core" / "lesson").glob("*.py"))]
    files += [*sorted((root / "qt" / "panels").glob("lesson*.py"))]
    texts = []
    for path in files:
        tree = ast.parse(path.read_text())
        docstrings = {
            id(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
        }
        for node in ast.walk(tree):
            if id(node) in docstrings:
                continue
            if isinstance(node, ast.JoinedStr):
                texts.append(
                    "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts.append(node.value)
    return texts


MENU_PATH = r"\b([A-Z][a-z]+(?: ▸ [^,.;:()\n▸{}]+?)+)(?=[,.;:)\n]| and | then | \(|$)"
DOCK = r"\b[Tt]he (?:\*\*)?([A-Z]\w*(?: [A-Za-z]\w*)?)(?:\*\*)? dock\b"
PRESS = (
    r"\b[Pp]ress ([A-Z](?:[^,.:;(){}\n]|\.(?=\S))*?)"
    r"(?: in the (?:\*\*)?([A-Z]\w*(?: [A-Za-z]\w*)?)(?:\*\*)? dock)?"
    r"(?=\s*[(),;:]|\.(?:\s|$)| and | then |$)"
)
KEY = r"\(((?:F\d+|(?:Ctrl|Shift|Alt)\+[\w+]+))\)"


def test_every_menu_dock_button_and_key_the_lesson_names_is_in_the_window(qtbot, window):
    """The lesson's text names places of the window ("Edit ▸ Insert node…", "press Pin
    baseline in the Run dock", "(F11)"): each is there, under that name -- no *Run ▸* menu
    that does not exist, no *Replace* that is called *Replace accepted*."""
    import re

    from fxstudio.qt.window.desktop import menu_actions, typed_keys

    texts = _lesson_texts()
    menus = {
        f"{path} ▸ {action.text().replace('&', '')}"
        for path, action in menu_actions(window.menuBar())
    }
    keys = {k for _, action in menu_actions(window.menuBar()) for k in typed_keys(action)}
    docks = {p.dock.windowTitle(): p for p in window.panels.values()}

    def buttons(widget):
        return {re.sub(r"^\W+", "", b.text()).strip() for b in widget.findChildren(QPushButton)}

    lesson = window.panels["lesson"]
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.learn()
    shown = {title: buttons(p.dock) for title, p in docks.items()}
    for i in range(len(STEPS)):  # each step's own buttons
        lesson.go(i)
        shown["Learn FX"] |= buttons(lesson.dock)
    with qtbot.waitSignal(window.panels["patterns"].found, timeout=60000):
        window.action("actionRewrite_fold-conv-bn").trigger()  # a built-in's button: Replace
    shown["Patterns"] |= buttons(window.panels["patterns"].dock)
    anywhere = set().union(*shown.values())

    named = {"menus": set(), "docks": set(), "presses": set(), "keys": set()}
    for text in texts:
        named["menus"] |= set(re.findall(MENU_PATH, text))
        named["docks"] |= set(re.findall(DOCK, text))
        named["presses"] |= set(re.findall(PRESS, text))
        named["keys"] |= set(re.findall(KEY, text))
    assert {"File ▸ Open model…", "Edit ▸ Insert node…"} <= named["menus"]  # (the scan works)
    assert {"Patterns", "Run", "Step"} <= named["docks"]
    assert ("Replace accepted", "Patterns") in named["presses"]
    missing = [m for m in named["menus"] if m not in menus]
    missing += [f"the {d} dock" for d in named["docks"] if d not in docks]
    missing += [
        f"press {name}" + (f" in the {dock} dock" if dock else "")
        for name, dock in named["presses"]
        if name not in (shown.get(dock, set()) if dock else anywhere)
    ]
    missing += [f"({k})" for k in named["keys"] if k not in keys]
    assert not missing, f"the lesson names what the window does not have: {missing}"


def test_step_7_keeps_the_patterns_dock_usable_and_says_what_is_left(qtbot, window):
    """At 1000×700 in the Learn layout the Patterns dock comes in front with room (not
    squeezed under the code): the why of the miss, then *Replace accepted* once the fixed
    pattern is found, are in sight and work; the verdict moves on from "It missed"."""
    from fxstudio.core.lesson.syllabus import step_index

    window.resize(1000, 700)
    lesson, patterns = window.panels["lesson"], window.panels["patterns"]
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.learn()
    lesson.go(step_index("pattern"))
    with qtbot.waitSignal(patterns.explained, timeout=60000):
        _click(lesson, "lessonTryPattern")
    dock = patterns.dock
    assert dock.isVisible() and dock.height() >= window.height() // 2
    qtbot.waitUntil(lambda: not patterns.explanation.visibleRegion().isEmpty())
    assert lesson.verdict.text().startswith("… It missed")
    with qtbot.waitSignal(patterns.found, timeout=60000):
        _click(lesson, "lessonFixPattern")
    said = lesson.verdict.text()
    assert "It missed" not in said and "Press Replace accepted in the Patterns dock" in said
    replace = patterns.replace_button
    assert replace.text() == "Replace accepted" and replace.isEnabled()
    qtbot.waitUntil(lambda: not replace.visibleRegion().isEmpty())
    with qtbot.waitSignal(patterns.rewritten, timeout=60000):
        qtbot.mouseClick(replace, Qt.MouseButton.LeftButton)
    assert lesson.recheck().ok
