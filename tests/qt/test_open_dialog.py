"""The Open dialog completes specs (examples, transformers model types, timm names, recent
models); a model symbolic tracing cannot follow opens with the export frontend in one click."""

import importlib.util

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication,
    QDialogButtonBox,
    QFileDialog,
    QMessageBox,
    QPushButton,
)

from fxstudio.core.errors import CaptureError
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.saving.recent import RecentModels
from fxstudio.qt.window import open_dialog
from fxstudio.qt.window.open_dialog import OpenDialog
from tests.conftest import SIZE_BRANCH
from tests.core.test_modelfiles import TWO_MODELS_AND_A_FACTORY
from tests.qt.conftest import open_and_wait


def shown_open_dialog(window, then=None):
    """File ▸ Open as a user triggers it; while the dialog is shown, its fields are read and
    ``then(dialog)`` runs (it may type and accept; otherwise the dialog is cancelled).
    Returns what the fields showed: (Model, frontend, Inputs, seed)."""
    seen = []

    def look():
        dialog = QApplication.activeModalWidget()
        try:
            assert isinstance(dialog, OpenDialog), dialog
            seen.append(
                (
                    dialog.spec_edit.text(),
                    dialog.frontend_combo.currentText(),
                    dialog.inputs_edit.text(),
                    dialog.seed_spin.value(),
                )
            )
            if then is not None:
                then(dialog)
        finally:
            if dialog is not None and dialog.isVisible():
                dialog.reject()

    QTimer.singleShot(0, look)
    window.findChild(QAction, "actionOpen").trigger()
    assert seen, "no Open dialog was shown"
    return seen[0]


def _completions(qtbot, dialog, typed):
    qtbot.waitUntil(lambda: "specs" in open_dialog._zoo, timeout=60000)  # read once a process
    qtbot.waitUntil(lambda: len(dialog.completions.stringList()) > 20, timeout=5000)
    completer = dialog.spec_edit.completer()
    completer.setCompletionPrefix(typed)
    model = completer.completionModel()
    return [model.index(i, 0).data() for i in range(model.rowCount())]


def test_recent_models_are_offered_first(qtbot, window):
    open_and_wait(qtbot, window, "examples:negrelu")
    open_and_wait(qtbot, window, "examples:simple", inputs=("3x16",))
    recent = window.session.recent.load()
    assert [r.spec for r in recent[:2]] == ["examples:simple", "examples:negrelu"]
    dialog = OpenDialog(None, None, recent)
    qtbot.addWidget(dialog)
    assert dialog.example_combo.itemText(1) == "recent: examples:simple"
    dialog.example_combo.setCurrentIndex(1)
    assert dialog.request() == OpenRequest("examples:simple", "auto", ("3x16",), 0)
    assert "examples:resnet" in _completions(qtbot, dialog, "resn")


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="no transformers")
def test_spec_completion_knows_transformers_model_types(qtbot):
    dialog = OpenDialog()
    qtbot.addWidget(dialog)
    found = _completions(qtbot, dialog, "hf:lla")
    assert "hf:llama" in found and all("lla" in f.lower() for f in found)


def _timm_imports() -> bool:
    try:
        import timm  # noqa: F401
    except Exception:  # not installed, or no torchvision built for this torch
        return False
    return True


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(
            "hf:gpt2",
            marks=pytest.mark.skipif(
                importlib.util.find_spec("transformers") is None, reason="no transformers"
            ),
        ),
        pytest.param(
            "timm:convnext_atto",
            marks=pytest.mark.skipif(not _timm_imports(), reason="timm does not import"),
        ),
        "examples:simple",
    ],
)
def test_a_recent_zoo_model_is_completed_once(qtbot, tmp_path, spec):
    """A model opened lately is both recent and a name of its zoo: the list shows it once."""
    recent = RecentModels(tmp_path / "recent.json")
    recent.add(OpenRequest(spec))
    recent.add(OpenRequest(spec, inputs=("1x3x64x64",)))  # the same spec, other inputs
    dialog = OpenDialog(None, None, recent.load())
    qtbot.addWidget(dialog)
    found = _completions(qtbot, dialog, spec.partition(":")[2])
    assert found.count(spec) == 1, found
    every = dialog.completions.stringList()
    assert len(every) == len(set(every))
    assert every[0] == spec  # recent first


def test_fx_failure_offers_the_export_frontend_in_one_click(qtbot, interactive, write_model):
    path = write_model(SIZE_BRANCH)
    failed = open_and_wait(qtbot, interactive, f"{path}:Net", signal="loadFailed", frontend="fx")
    assert isinstance(failed, CaptureError)
    box = interactive.findChild(QMessageBox)
    button = next(b for b in box.buttons() if b.text() == "Open with the export frontend")
    with qtbot.waitSignal(interactive.session.loaded, timeout=60000) as loaded:
        button.click()
    assert loaded.args[0].request.frontend == "export"


def test_after_a_failed_open_the_dialog_shows_what_was_typed(qtbot, interactive, write_model):
    """An open that fails when the model runs (the dialog told what it could before): the
    next File ▸ Open shows the spec, frontend, inputs and seed the user typed, to fix the
    spec rather than type it all again."""
    window = interactive
    broken = write_model(
        "import torch\nclass Net(torch.nn.Module): pass\nraise ValueError('simpel')\n"
    )
    spec = f"{broken}:Net"

    def type_a_typo(dialog):
        dialog.spec_edit.setText(spec)
        dialog.frontend_combo.setCurrentIndex(open_dialog.FRONTENDS.index("export"))
        dialog.inputs_edit.setText("3x16")
        dialog.seed_spin.setValue(7)
        dialog.accept()

    with qtbot.waitSignal(window.session.loadFailed, timeout=60000):
        shown_open_dialog(window, type_a_typo)
    box = window.findChild(QMessageBox)
    assert "simpel" in box.text() + box.informativeText()
    box.close()
    assert shown_open_dialog(window) == (spec, "export (torch.export)", "3x16", 7)

    def fix_it(dialog):
        dialog.spec_edit.setText("examples:simple")
        dialog.accept()

    with qtbot.waitSignal(window.session.loaded, timeout=60000) as loaded:
        shown_open_dialog(window, fix_it)
    assert loaded.args[0].request.inputs == ("3x16",) and loaded.args[0].request.seed == 7
    assert shown_open_dialog(window) == ("examples:simple", "export (torch.export)", "3x16", 7)


# --- the capture follows the model; your own file; errors said in the dialog ------------

NET_AND_BLOCK = """\
import torch
from torch import nn

class Block(nn.Module):
    def forward(self, x):
        return x.relu()

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
    def forward(self, x):
        return self.block(x) + 1

def example_inputs():
    return (torch.randn(2, 4),)
"""


def _shown_dialog(qtbot, *args, **kwargs):
    dialog = OpenDialog(None, *args, **kwargs)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def _type_spec(qtbot, dialog, text):
    dialog.spec_edit.clear()
    qtbot.keyClicks(dialog.spec_edit, text)


def _open_button(dialog):
    return dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Open)


def test_capture_starts_at_auto_for_another_model(qtbot):
    """hf:gpt2 opened with export: typing another model starts it at auto with its own
    inputs; typing gpt2 again brings back its export; a frontend picked here stays."""
    gpt2 = OpenRequest("hf:gpt2", "export", ("1x16:int64",))
    dialog = _shown_dialog(qtbot, gpt2, [gpt2, OpenRequest("examples:simple", "fx", ("3x16",))])
    assert dialog.frontend_combo.currentIndex() == open_dialog.FRONTENDS.index("export")
    _type_spec(qtbot, dialog, "timm:convnext_atto")
    assert dialog.request() == OpenRequest("timm:convnext_atto", "auto", (), 0)
    _type_spec(qtbot, dialog, "examples:simple")  # a recent model: its own settings
    assert dialog.request() == OpenRequest("examples:simple", "fx", ("3x16",), 0)
    _type_spec(qtbot, dialog, "hf:gpt2")
    assert dialog.request() == gpt2
    dialog.frontend_combo.setFocus()
    qtbot.keyClick(dialog.frontend_combo, Qt.Key.Key_Up)  # the user picks fx
    _type_spec(qtbot, dialog, "examples:resnet")
    assert dialog.request().frontend == "fx"


def _choose_file(qtbot, dialog, path):
    """Browse…, and in the file dialog (Qt's own: offscreen has no native one) the file."""

    def choose():
        chooser = QApplication.activeModalWidget()
        assert isinstance(chooser, QFileDialog), chooser
        chooser.selectFile(str(path))
        chooser.accept()

    QTimer.singleShot(0, choose)
    dialog.findChild(QPushButton, "browseButton").click()


def test_browse_offers_the_models_the_file_defines(qtbot, write_model):
    path = write_model(NET_AND_BLOCK)
    dialog = _shown_dialog(qtbot)
    _choose_file(qtbot, dialog, path)
    assert dialog.spec_edit.text() == f"{path}:Net"  # not "Model": the file has none
    combo = dialog.file_model_combo
    assert combo.isVisible() and [combo.itemText(i) for i in range(combo.count())] == [
        "Net",
        "Block",
    ]
    combo.setFocus()
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # the user picks Block
    assert dialog.spec_edit.text() == f"{path}:Block"
    _type_spec(qtbot, dialog, "examples:simple")
    assert not combo.isVisible()


def test_a_bare_model_file_opens_its_one_model(qtbot, window, write_model):
    path = write_model(NET_AND_BLOCK)
    doc = open_and_wait(qtbot, window, str(path))
    assert "add = relu + 1" in doc.code()  # Net's forward, Block's relu traced through


def test_an_error_keeps_the_dialog_and_what_was_typed(qtbot, write_model):
    path = write_model(NET_AND_BLOCK)
    dialog = _shown_dialog(qtbot)
    _type_spec(qtbot, dialog, f"{path}:Model")
    qtbot.keyClicks(dialog.inputs_edit, "2x4")
    qtbot.mouseClick(_open_button(dialog), Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and dialog.result() == 0
    assert "has no 'Model'" in dialog.error_label.text()
    assert "It defines: Net, Block" in dialog.error_label.text()
    assert dialog.request() == OpenRequest(f"{path}:Model", "auto", ("2x4",), 0)
    qtbot.keyClicks(dialog.inputs_edit, "x")  # a bad input: said too
    dialog.spec_edit.setText(f"{path}:Net")
    qtbot.mouseClick(_open_button(dialog), Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and "2x4x" in dialog.error_label.text()
    dialog.inputs_edit.setText("2x4")
    with qtbot.waitSignal(dialog.accepted, timeout=5000):
        qtbot.mouseClick(_open_button(dialog), Qt.MouseButton.LeftButton)


def test_the_completion_list_does_not_take_the_click_on_open(qtbot):
    """The list of completions is open: the first click on Open opens (it went to close
    the list)."""
    dialog = _shown_dialog(qtbot)
    qtbot.keyClicks(dialog.spec_edit, "examples:simple")
    popup = dialog.spec_edit.completer().popup()
    qtbot.waitUntil(popup.isVisible, timeout=5000)
    button = _open_button(dialog)
    at = button.mapTo(dialog, button.rect().center())
    with qtbot.waitSignal(dialog.accepted, timeout=5000):  # through the window, as a mouse
        QTest.mouseClick(dialog.windowHandle(), Qt.MouseButton.LeftButton, pos=at)
    assert not popup.isVisible()


# --- a file with several models: which one is asked; Return on a completion opens it --------


def test_browsing_a_file_with_several_models_asks_which(qtbot, write_model):
    """Browse… chose the file's first model for the user, and Open opened it without a word:
    with several whole models none is chosen, the dialog says so, and Open waits for one."""
    path = write_model(TWO_MODELS_AND_A_FACTORY)
    dialog = _shown_dialog(qtbot)
    _choose_file(qtbot, dialog, path)
    assert dialog.spec_edit.text() == str(path)  # no model named for the user
    combo = dialog.file_model_combo
    assert combo.isVisible() and combo.currentIndex() == -1 and dialog.focusWidget() is combo
    assert [combo.itemText(i) for i in range(combo.count())] == ["small", "tiny", "Wide", "Deep"]
    assert "defines 4 models (small, tiny, Wide, Deep): choose one" in dialog.error_label.text()
    qtbot.mouseClick(_open_button(dialog), Qt.MouseButton.LeftButton)
    assert dialog.isVisible() and "several models" in dialog.error_label.text()
    qtbot.keyClick(combo, Qt.Key.Key_Down)  # the user picks the first
    assert dialog.spec_edit.text() == f"{path}:small" and not dialog.error_label.text()
    with qtbot.waitSignal(dialog.accepted, timeout=5000):
        qtbot.mouseClick(_open_button(dialog), Qt.MouseButton.LeftButton)


def _when_shown(cls, then):
    """Call ``then(widget)`` once a modal ``cls`` shows (a dialog's own event loop runs the
    check), then close it; returns what ``then`` returned, in a list."""
    seen = []

    def look():
        widget = QApplication.activeModalWidget()
        if not isinstance(widget, cls):
            QTimer.singleShot(20, look)
            return
        try:
            seen.append(then(widget))
        finally:
            widget.reject()

    QTimer.singleShot(0, look)
    return seen


def test_a_bare_path_with_several_models_opens_the_dialog_that_offers_them(
    qtbot, interactive, write_model
):
    """``fxstudio model.py``, a drop or a recent bare path: the open names no model, so the
    window shows the Open dialog with the file's models to choose from, not one of them."""
    from fxstudio.core.flows.open import request_for_file

    path = write_model(TWO_MODELS_AND_A_FACTORY)
    request = request_for_file(str(path))  # a drop names none of them
    assert request == OpenRequest(str(path))

    def offered(dialog):
        combo = dialog.file_model_combo
        return (
            dialog.spec_edit.text(),
            [combo.itemText(i) for i in range(combo.count())],
            dialog.error_label.text(),
        )

    seen = _when_shown(OpenDialog, offered)
    failed = open_and_wait(qtbot, interactive, request.spec, signal="loadFailed")
    assert failed.choices == ("small", "tiny", "Wide", "Deep")
    qtbot.waitUntil(lambda: bool(seen), timeout=10000)
    spec, names, problem = seen[0]
    assert spec == str(path) and names == ["small", "tiny", "Wide", "Deep"]
    assert "choose one under Model in file" in problem
    assert interactive.findChild(QMessageBox) is None  # the dialog, not a message to close
    assert interactive.document is None


def test_return_on_a_completion_opens_it(qtbot):
    """The first Return in the completion list only completed (Qt's completer takes it):
    Return opens the completion chosen, or what was typed (the next test)."""
    dialog = _shown_dialog(qtbot)
    _completions(qtbot, dialog, "")  # the zoos read: the list is not refilled under the test
    popup = dialog.spec_edit.completer().popup()
    _type_spec(qtbot, dialog, "examples:simpl")
    qtbot.waitUntil(popup.isVisible, timeout=5000)
    qtbot.keyClick(popup, Qt.Key.Key_Down)
    with qtbot.waitSignal(dialog.accepted, timeout=5000):
        qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert dialog.request().spec == "examples:simple" and not popup.isVisible()


def test_return_with_nothing_chosen_in_the_completion_list_opens_what_was_typed(qtbot):
    dialog = _shown_dialog(qtbot)
    _completions(qtbot, dialog, "")
    popup = dialog.spec_edit.completer().popup()
    qtbot.keyClicks(dialog.spec_edit, "examples:simple")
    qtbot.waitUntil(popup.isVisible, timeout=5000)
    with qtbot.waitSignal(dialog.accepted, timeout=5000):
        qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert dialog.request().spec == "examples:simple"
