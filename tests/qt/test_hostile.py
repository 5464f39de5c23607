"""Hostile model files in the window: the message is shown, the window stays usable, a
runaway model is located and stopped with Cancel, and the next model opens."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

import fxstudio.qt.window.status as status
from fxstudio.core.errors import LoadError
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.process.guard import OutOfMemory
from tests.conftest import run_fxstudio
from tests.qt.conftest import open_and_wait

LOOPING = "import torch\nprint('spinning')\nwhile True:\n    pass\n"


def test_sys_exit_in_a_model_file_is_shown_and_the_next_model_opens(
    qtbot, interactive, write_model
):
    doc = open_and_wait(qtbot, interactive, "examples:simple")
    path = write_model("import sys\nsys.exit(3)\n")
    failed = open_and_wait(qtbot, interactive, f"{path}:Net", signal="loadFailed")
    assert isinstance(failed, LoadError) and "sys.exit(3)" in str(failed)
    assert interactive.document is doc  # nothing was lost
    box = interactive.findChild(QMessageBox)
    assert box is not None and box.isVisible()
    assert box.text() == f"Running model.py called sys.exit(3) at {path}:2"
    assert "must not exit" in box.informativeText()
    box.close()
    assert open_and_wait(qtbot, interactive, "examples:negrelu").node_names()


def test_out_of_memory_input_is_shown(qtbot, window):
    failed = open_and_wait(
        qtbot, window, "examples:simple", signal="loadFailed", inputs=("100000x100000x100",)
    )
    assert isinstance(failed, OutOfMemory) and "smaller --input" in str(failed)
    assert open_and_wait(qtbot, window, "examples:simple").node_names()


@pytest.mark.parametrize(
    "source",
    [
        LOOPING,  # an import that never returns
        "import torch\n"  # a forward that loops forever
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        while True:\n"
        "            x = x + 1\n"
        "def example_inputs():\n    return (torch.randn(2),)\n",
    ],
    ids=["import", "forward"],
)
def test_a_runaway_model_is_located_and_cancel_stops_it(
    qtbot, window, write_model, monkeypatch, source
):
    monkeypatch.setattr(status, "WHERE_AFTER_S", 0.0)
    doc = open_and_wait(qtbot, window, "examples:simple")
    path = write_model(source)
    window.session.open(OpenRequest(f"{path}:Net"))
    task = window.session.open_task
    loop_lines = {n for n, line in enumerate(source.splitlines(), 1) if "while" in line}
    loop_lines |= {n + 1 for n in loop_lines}
    qtbot.waitUntil(
        lambda: (loc := task.where(str(path))) and loc.lineno in loop_lines, timeout=60000
    )
    qtbot.waitUntil(
        lambda: "running model.py:" in window.statusBar().currentMessage(), timeout=5000
    )
    assert window.status.cancel.isVisible()
    qtbot.mouseClick(window.status.cancel, Qt.MouseButton.LeftButton)
    assert task.join(60)  # the model's code was stopped, not only abandoned
    assert "cancelled" in window.statusBar().currentMessage()
    assert window.document is doc and not window.status.cancel.isVisible()
    assert open_and_wait(qtbot, window, "examples:negrelu").node_names()


def test_screenshot_of_a_model_that_exits_reports_and_ends(write_model, tmp_path):
    """It used to wait for ever for a load that had silently ended."""
    path = write_model("import sys\nsys.exit(3)\n")
    result = run_fxstudio(f"{path}:Net", "--screenshot", str(tmp_path / "shot.png"))
    assert result.returncode == 2
    assert "called sys.exit(3)" in result.stderr
    assert not (tmp_path / "shot.png").exists()


CRASHING = "import faulthandler\nfaulthandler._sigsegv()  # as a broken C extension would\n"


def test_a_crash_leaves_a_log_and_the_next_start_says_where(qtbot, write_model, tmp_path):
    """A model whose code kills the process (a segmentation fault in an extension): the
    window dies, its crash log holds every thread's stack, and the next window says that
    fxstudio closed unexpectedly and where the log is."""
    import os
    import subprocess
    import sys

    from fxstudio.core.process.crashlog import CrashLog
    from fxstudio.qt.window.main_window import MainWindow
    from tests.conftest import ROOT

    path = write_model(CRASHING, name="crashing.py")
    recovery = tmp_path / "state" / "recovery"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", FXSTUDIO_RECOVERY_DIR=str(recovery))
    proc = subprocess.run(
        [sys.executable, "-m", "fxstudio", f"{path}:Net"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode < 0  # killed by its signal
    (log,) = (tmp_path / "state").glob("crash-*.log")
    text = log.read_text()
    assert "Fatal Python error: Segmentation fault" in text and "crashing.py" in text
    assert text.count("hread 0x") >= 2  # the worker that crashed ("Current thread") and the GUI

    window = MainWindow(interactive=False, autosave_s=0, recovery=recovery)
    qtbot.addWidget(window)
    assert not window.offer_recovery(CrashLog(recovery.parent).collect())
    said = window.statusBar().currentMessage()
    assert "closed unexpectedly" in said and "Segmentation fault" in said
    (kept,) = (tmp_path / "state").glob("crashed-*.log")
    assert str(kept) in said and kept.read_text() == text
