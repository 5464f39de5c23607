"""Opening shows what runs now in the status bar -- tracing, shapes with their count -- and
the bar fills once a stage has a count; a long spec is shortened so that the stage is seen;
Cancel keeps the model open before, even where the open's code runs on to its end."""

import threading

from PySide6.QtWidgets import QApplication

from fxstudio.core.graph.request import OpenRequest
from fxstudio.qt.window.session import open_stage, shortened
from tests.core.test_structure_only import SMALL_LLAMA
from tests.qt.conftest import open_and_wait

GATE = threading.Event()  # the model's forward waits on it while it is traced

SLOW_TRACE = """
import sys
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        y = x + 1
        sys.modules["tests.qt.test_open_progress"].GATE.wait(60)
        return y * 2


def example_inputs():
    return (torch.randn(2, 3),)
"""


def test_the_status_bar_says_what_the_open_runs(qtbot, window, write_model):
    path = write_model(SLOW_TRACE)
    GATE.clear()
    told = []
    window.session.openProgress.connect(lambda stage, done, total: told.append((stage, total)))
    bar = window.statusBar()
    with qtbot.waitSignal(window.session.loaded, timeout=60000):
        try:
            window.session.open(OpenRequest(f"{path}:Net"))
            qtbot.waitUntil(lambda: "Tracing forward" in bar.currentMessage(), timeout=60000)
            said = bar.currentMessage()  # (the spec shortened: the stage is seen)
            assert said.startswith(f"Opening {shortened(f'{path}:Net')} (auto) — Tracing forward")
            assert "model.py:Net" in said
            assert window.status.progress.maximum() == 0  # no count yet: the bar runs
        finally:
            GATE.set()
    QApplication.processEvents()
    assert ("Tracing forward", 0) in told
    assert not window.status.progress.isVisible()
    assert bar.currentMessage().startswith("Opened in ")
    assert f"s: {path}:Net" in bar.currentMessage()


BIG = (
    "hf:llama(num_hidden_layers=126, hidden_size=16384, intermediate_size=53248, "
    "num_attention_heads=128, num_key_value_heads=8, vocab_size=128256)"
)


def test_a_long_spec_is_shortened_and_loading_not_said_with_it_again():
    said = shortened(BIG)
    assert len(said) == 60 and said.startswith("hf:llama(num_hidden_layers=126, ")
    assert said.endswith("vocab_size=128256)") and "…" in said
    assert shortened("examples:resnet") == "examples:resnet"
    bare, full = OpenRequest(BIG, weights=False), OpenRequest(BIG)
    assert open_stage(bare, f"Loading {BIG}") == "Building the model without weights"
    assert open_stage(full, f"Loading {BIG}") == "Loading the model"
    assert open_stage(bare, "Exporting (torch.export)") == "Exporting (torch.export)"


def test_cancel_keeps_the_model_open_before(qtbot, window):
    old = open_and_wait(qtbot, window, "examples:negrelu")
    session, bar = window.session, window.statusBar()
    loaded = []
    session.loaded.connect(loaded.append)
    session.open(OpenRequest(SMALL_LLAMA, weights=False))  # a library's code: not stoppable
    task = session.open_task
    assert window.status.cancel.isVisible()
    with qtbot.waitSignal(task.finished, timeout=60000):  # its code ends, its result dropped
        window.status.cancel.click()
        assert bar.currentMessage() == "Opening cancelled; the model open before stays."
        assert not window.status.cancel.isVisible() and session.opening is None
    QApplication.processEvents()
    assert loaded == [] and window.document is old and session.lingering is None
    assert set(window.canvas_controller.scene.nodes) <= set(old.node_names())
    assert "negrelu" in window.windowTitle()
    assert open_and_wait(qtbot, window, "examples:simple") is window.document  # usable
