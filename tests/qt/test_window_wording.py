"""What the window says of a failure names its own places, never a command-line option:
core's messages say ``--input``, ``--frontend export``, ``--device cpu`` (the command line
shows them so), and the window shows the Open dialog's Inputs, Capture with, the Run dock's
Device instead."""

import pytest
import torch
from PySide6.QtWidgets import QMessageBox

from fxstudio.core.wording import flags_in
from tests.qt.conftest import open_and_wait

LINEAR = (
    "import torch\nclass Net(torch.nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.fc = torch.nn.Linear(8, 4)\n"
    "    def forward(self, x):\n        return self.fc(x)\n"
)
BRANCHY = (
    "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
    "        if x.sum() > 0:\n            return x + 1\n        return x - 1\n"
)


def _box_says(qtbot, window) -> str:
    qtbot.waitUntil(lambda: window.findChild(QMessageBox) is not None)
    box = window.findChild(QMessageBox)
    said = f"{box.text()}\n{box.informativeText()}"
    box.close()
    return said


def _failed_open(qtbot, window, tmp_path, source, **kw) -> str:
    path = tmp_path / "model.py"
    path.write_text(source)
    open_and_wait(qtbot, window, f"{path}:Net", signal="loadFailed", **kw)
    return _box_says(qtbot, window) + "\n" + window.statusBar().currentMessage()


@pytest.mark.parametrize(
    ("source", "kw", "what"),
    [
        (LINEAR, {"inputs": ("1x5",)}, "Inputs"),  # a wrong input shape
        (LINEAR, {"frontend": "export"}, "Inputs"),  # no inputs, and export runs the model
        (BRANCHY, {"inputs": ("1x3",)}, "Capture with"),  # symbolic tracing cannot follow it
    ],
    ids=["wrong-input-shape", "missing-inputs", "untraceable"],
)
def test_a_failed_open_names_the_windows_places(qtbot, interactive, tmp_path, source, kw, what):
    said = _failed_open(qtbot, interactive, tmp_path, source, **kw)
    assert what in said and not flags_in(said), said


def test_opened_without_inputs_the_note_names_the_open_dialog(qtbot, window, tmp_path):
    path = tmp_path / "model.py"
    path.write_text(LINEAR)
    open_and_wait(qtbot, window, f"{path}:Net", signal="layoutShown")
    assert any("example inputs" in n for n in window.document.notes)
    said = window.statusBar().currentMessage()
    assert "Inputs" in said and not flags_in(said), said


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a CUDA device")
def test_a_run_on_a_missing_device_names_the_run_docks_device(qtbot, docks):
    ctx = docks("run")
    ctx.open("examples:negrelu")
    panel = ctx.panels["run"]
    panel.device.addItem("cuda — gone", "cuda")  # (as a GPU that went away)
    panel.device.setCurrentIndex(panel.device.count() - 1)
    with qtbot.waitSignal(panel.finished, timeout=60000):
        panel.run_button.click()
    said = panel.status_label.text()  # a refusal: the dock's notice
    assert "no CUDA device" in said and "Device" in said and not flags_in(said), said
