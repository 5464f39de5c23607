"""Opening shows what runs now in the status bar -- tracing, shapes with their count -- and
the bar fills once a stage has a count."""

import threading

from PySide6.QtWidgets import QApplication

from fxstudio.core.model.request import OpenRequest

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
            assert bar.currentMessage().startswith(f"Opening {path}:Net (auto) — Tracing forward")
            assert window.status.progress.maximum() == 0  # no count yet: the bar runs
        finally:
            GATE.set()
    QApplication.processEvents()
    assert ("Tracing forward", 0) in told
    assert not window.status.progress.isVisible()
    assert bar.currentMessage().startswith("Opened in ")
    assert f"s: {path}:Net" in bar.currentMessage()
