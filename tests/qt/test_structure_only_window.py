"""Structure-only documents in the window (issue 38): a model opened without its weights says
so where the user looks -- the title, the status bar, the inspector -- the Open dialog's
*Structure only* round-trips through a request and the recent list, what needs values says
the core's message in the window's words (no fake-tensor traceback), and a rewrite says it
was not checked rather than that its check failed."""

from fxstudio.core.graph.request import OpenRequest
from fxstudio.qt.panels.inspector import NO_WEIGHTS
from fxstudio.qt.window import open_dialog
from fxstudio.qt.window.compare_flow import compare_with_request
from fxstudio.qt.window.open_dialog import OpenDialog
from fxstudio.qt.window.status import STRUCTURE_ONLY
from fxstudio.qt.windows.compare import CompareWindow
from tests.core.test_structure_only import SMALL_LLAMA
from tests.qt.conftest import open_and_wait

NEEDS = "needs the model's weights, and this document holds its structure only"


def draw(qtbot, window, spec, **kw):
    return open_and_wait(qtbot, window, spec, signal="layoutShown", **kw)


def in_window_words(text: str) -> bool:
    """Said as the window says it: no command-line option, no traceback."""
    return "--" not in text and "Traceback" not in text and "FakeTensor" not in text


def test_the_title_status_bar_and_inspector_say_structure_only(qtbot, window):
    draw(qtbot, window, "examples:resnet", weights=False)
    assert window.windowTitle() == "examples:resnet (structure only) — fxstudio"
    note = window.status.structure
    assert note.isVisible() and note.text() == STRUCTURE_ONLY
    # a module's parameters: no values, their shapes and dtypes; the node's shape as ever
    window.selection.select(["layer1_0_conv1"])
    props = dict(window.panels["inspector"].properties())
    assert props["weights"] == f"{NO_WEIGHTS}\nweight: 16x16x3x3 float32"
    assert props["shape"] == "1x16x32x32" and props["dtype"] == "float32"
    window.selection.select(["x"])  # a node that holds no weights says nothing of them
    assert "weights" not in dict(window.panels["inspector"].properties())
    # the same model with its weights: no note, no weights row
    draw(qtbot, window, "examples:resnet")
    assert window.windowTitle() == "examples:resnet — fxstudio"
    assert not note.isVisible()
    window.selection.select(["layer1_0_conv1"])
    assert "weights" not in dict(window.panels["inspector"].properties())


def test_run_step_compile_compare_and_export_say_there_are_no_weights(qtbot, window, tmp_path):
    draw(qtbot, window, "examples:resnet", weights=False)
    run = window.panels["run"]
    assert "structure only" in run.run_button.toolTip()
    with qtbot.waitSignal(run.finished, timeout=60000) as done:
        run.run_button.click()
    said = run.status_label.text()  # a refusal: the dock's notice, all of it, nothing else
    assert isinstance(done.args[0], Exception) and NEEDS in said and "failed" not in said
    assert said.startswith("Running and timing the model needs") and not run.result.toPlainText()
    assert "untick Structure only in the Open dialog" in said and in_window_words(said)
    step = window.panels["step"]
    with qtbot.waitSignal(step.failed, timeout=60000) as failed:
        step.into_action.trigger()
    assert NEEDS in failed.args[0] and in_window_words(failed.args[0])
    kernels = window.panels["compile"].kernels
    with qtbot.waitSignal(kernels.failed, timeout=60000) as failed:
        kernels.button.click()
    assert NEEDS in failed.args[0] and in_window_words(failed.args[0])
    with qtbot.waitSignal(window.saving.exportFailed, timeout=60000) as failed:
        window.saving.export_to(tmp_path / "model.pt2", "pt2")
    assert NEEDS in str(failed.args[0]) and not (tmp_path / "model.pt2").exists()
    # the other side has its weights: shapes compared, values and times not
    compare_with_request(window, OpenRequest("examples:resnet"))
    qtbot.waitUntil(lambda: window.findChild(CompareWindow) is not None, timeout=60000)
    compared = window.findChild(CompareWindow)
    qtbot.waitUntil(lambda: compared.diff is not None, timeout=60000)
    summary = compared.summary.text()
    assert "54 pairs" in summary and "Values not compared" in summary and NEEDS in summary
    assert in_window_words(summary) and not compared.measure.isEnabled()


def test_the_open_dialogs_structure_only_round_trips(qtbot, window):
    dialog = OpenDialog(window, OpenRequest("examples:resnet", weights=False))
    qtbot.addWidget(dialog)
    assert dialog.structure_check.isChecked() and dialog.request().weights is False
    assert "run" in dialog.structure_check.toolTip()
    dialog.structure_check.click()
    assert dialog.request() == OpenRequest("examples:resnet")
    # a recent model comes back as it was opened; another model with its weights
    recent = [OpenRequest("examples:simple", weights=False), OpenRequest("examples:resnet")]
    dialog = OpenDialog(window, None, recent)
    qtbot.addWidget(dialog)
    dialog.spec_edit.setText("examples:simple")
    assert dialog.structure_check.isChecked()
    dialog.spec_edit.setText("examples:resnet")
    assert not dialog.structure_check.isChecked()
    dialog.structure_check.click()  # chosen here: it stays whatever is typed
    dialog.spec_edit.setText("examples:simple")
    dialog.spec_edit.setText("examples:negrelu")
    assert dialog.request() == OpenRequest("examples:negrelu", weights=False)
    # the window's recent list remembers it, and the dialog opens with it
    draw(qtbot, window, "examples:simple", weights=False)
    assert window.session.recent.load()[0] == OpenRequest("examples:simple", weights=False)
    dialog = OpenDialog(window, window.session.dialog_request(), window.session.recent.load())
    qtbot.addWidget(dialog)
    assert dialog.structure_check.isChecked()
    # (the dialogs read the zoos' names in the model code's turn: over before the next open)
    qtbot.waitUntil(lambda: "task" not in open_dialog._zoo, timeout=120000)


def test_a_rewrite_without_weights_says_not_checked_not_failed(qtbot, window):
    draw(qtbot, window, SMALL_LLAMA, weights=False)
    panel = window.panels["patterns"]
    with qtbot.waitSignal(panel.found, timeout=60000):
        panel.choose_rewrite("fuse-attention")
    with qtbot.waitSignal(panel.rewritten, timeout=120000) as done:
        panel.replace_button.click()
    report = done.args[0]
    assert report.check is None and report.unchecked and report.result.replaced
    text = panel.check_label.text()
    assert "Not checked: the document holds the model's structure only" in text
    assert panel.check_label.isVisible() and "color" not in panel.check_label.styleSheet()
    assert not panel.form.apply_button.isVisible()  # nothing held back
    assert window.session.undo_stack.count() == 1


def test_why_a_model_has_no_weights_is_readable_whole_at_1000_pixels(qtbot, interactive):
    """The status bar cut the open's note -- the reason there are no weights -- at the
    window's width: the *Structure only* note's tooltip holds it whole, and a click on it
    shows it in a message."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtWidgets import QMessageBox

    window = interactive
    window.resize(1000, 700)
    draw(qtbot, window, SMALL_LLAMA, weights=False)
    (reason,) = [n for n in window.document.notes if "structure only" in n]
    assert window.status.shown_message().endswith("…")  # the bar's line: cut
    note = window.status.structure
    assert note.isVisible() and reason in note.toolTip().replace("&quot;", '"')
    qtbot.mouseClick(note, Qt.MouseButton.LeftButton, pos=QPoint(2, 2))
    box = window.findChild(QMessageBox)
    assert box is not None and box.isVisible()
    assert reason in box.informativeText().replace("&quot;", '"')
    assert "open it again without Structure only" in box.informativeText()
    box.close()
