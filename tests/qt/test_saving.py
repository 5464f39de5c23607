import json
import os
import select
import signal
import subprocess
import sys
import time

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox

from fxstudio.core.edits import rename
from fxstudio.core.patterns.builtins import run_builtin
from fxstudio.core.saving.export import onnx_available
from fxstudio.core.saving.verify import run_standalone
from fxstudio.core.sessions.documents import open_document
from fxstudio.core.sessions.sessionfile import save_session
from fxstudio.qt.window.autosave import find_recoveries
from fxstudio.qt.window.main_window import MainWindow
from tests.conftest import ROOT
from tests.core.test_export import original_outputs
from tests.qt.conftest import move, open_and_wait
from tests.qt.test_open_dialog import shown_open_dialog


def test_save_session_then_reopen_restores_the_view(qtbot, window, tmp_path):
    open_and_wait(qtbot, window, "examples:resnet")
    assert not window.session.modified
    move(window, {"add": (12.0, 34.0)})
    assert window.session.modified and window.windowTitle().startswith("examples:resnet*")
    path = tmp_path / "r.fxstudio"
    with qtbot.waitSignal(window.session.saved):
        assert window.saving.save_session(path)
    assert not window.session.modified and window.session.path == path
    assert window.windowTitle().startswith("r.fxstudio")
    again = open_and_wait(qtbot, window, str(path))
    assert again.positions == {"add": (12.0, 34.0)}
    assert window.session.path == path and not window.session.modified


def test_close_with_unsaved_changes_asks(qtbot, window, monkeypatch):
    doc = open_and_wait(qtbot, window, "examples:simple")
    move(window, {"fc1": (1.0, 1.0)})
    window.interactive = True
    answers = [QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Discard]
    asked = []
    monkeypatch.setattr(
        window.saving, "ask_save_changes", lambda: asked.append(1) or answers.pop(0)
    )
    assert not window.close()  # Cancel keeps the window and the document
    assert window.isVisible() and window.document is doc
    assert window.close()  # Discard lets it go
    assert len(asked) == 2


def test_save_as_python_from_the_window(qtbot, window, tmp_path):
    open_and_wait(qtbot, window, "examples:transformer")
    out = tmp_path / "t.py"
    with qtbot.waitSignal(window.saving.exported, timeout=60000) as blocker:
        window.saving.export_to(out, "py")
    assert [p.name for p in blocker.args[0].paths] == ["t.safetensors", "t.py"]
    inputs, expected = original_outputs("examples:transformer")
    assert run_standalone(out, inputs, expected).bitwise_equal


@pytest.mark.parametrize("fmt, name", [("code", "f.py"), ("torchscript", "m.pt"), ("pt2", "m.pt2")])
def test_other_formats_from_the_window(qtbot, window, tmp_path, fmt, name):
    open_and_wait(qtbot, window, "examples:simple")
    with qtbot.waitSignal(window.saving.exported, timeout=60000):
        window.saving.export_to(tmp_path / name, fmt)
    assert (tmp_path / name).stat().st_size > 0


def test_a_failed_export_says_so_and_writes_nothing(qtbot, window, tmp_path, monkeypatch):
    import fxstudio.core.saving.export as ex

    open_and_wait(qtbot, window, "examples:simple")
    monkeypatch.setattr(ex, "onnx_available", lambda: False)
    with qtbot.waitSignal(window.saving.exportFailed, timeout=60000) as blocker:
        window.saving.export_to(tmp_path / "m.onnx", "onnx")
    assert "pip install onnx" in str(blocker.args[0])
    assert not (tmp_path / "m.onnx").exists()
    assert "Could not save" in window.statusBar().currentMessage()


@pytest.mark.skipif(not onnx_available(), reason="onnx is not installed")
def test_onnx_from_the_window(qtbot, window, tmp_path):
    open_and_wait(qtbot, window, "examples:simple")
    with qtbot.waitSignal(window.saving.exported, timeout=120000):
        window.saving.export_to(tmp_path / "m.onnx", "onnx")
    assert (tmp_path / "m.onnx").stat().st_size > 0


def test_autosave_writes_a_recovery_file_and_a_clean_close_removes_it(qtbot, window):
    doc = open_and_wait(qtbot, window, "examples:simple")
    with qtbot.waitSignal(window.session.autosaver.saved) as blocker:
        assert window.session.autosaver.save_now()
    path = blocker.args[0]
    assert json.loads(open(path).read())["recovery"]["pid"] == os.getpid()
    assert not window.session.autosaver.save_now()  # nothing new to save
    doc.set_positions({"fc2": (3.0, 4.0)})
    assert window.session.autosaver.save_now()
    assert find_recoveries(window.session.autosaver.directory) == []  # this process is alive
    window.close()
    assert not os.path.exists(path)


def _wait_for_line(proc, needle, timeout):
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], deadline - time.monotonic())
        if not ready:
            break
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if needle in line:
            return line
    raise AssertionError(f"no '{needle}' from fxstudio; it said: {''.join(seen)}")


def test_crash_then_restore(qtbot, tmp_path):
    recovery = tmp_path / "recovery"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", FXSTUDIO_RECOVERY_DIR=str(recovery))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "fxstudio",
            "examples:negrelu",
            "--frontend",
            "export",
            "--autosave",
            "0.2",
            "--verbose",
        ],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = _wait_for_line(proc, "autosaved to", timeout=120)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    path = line.split("autosaved to", 1)[1].strip()
    assert find_recoveries(recovery) == [type(recovery)(path)]

    window = MainWindow(interactive=False, autosave_s=0, recovery=recovery)
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.session.loaded, timeout=60000):
        window.session.restore(find_recoveries(recovery)[0])
    doc = window.document
    assert doc.request.spec == "examples:negrelu" and doc.request.frontend == "export"
    assert window.session.modified and window.session.path is None  # restored work is still unsaved
    assert find_recoveries(recovery) == []  # restored, so the old file is gone


def _history(window):
    """The lines of the History dock, as the user reads them."""
    view = window.panels["history"].view
    return [view.model().index(i, 0).data() for i in range(view.model().rowCount())]


def test_an_opened_session_shows_its_edits_in_history_and_undo_undoes_them(qtbot, window, tmp_path):
    doc = open_document("examples:resnet")  # a rename and a fold, as the CLI makes them
    rename(doc, "pool", "avgpool")
    run_builtin(doc, "fold-conv-bn")
    path = tmp_path / "folded.fxstudio"
    save_session(doc, path)
    open_and_wait(qtbot, window, str(path))
    assert "bn1" not in window.document.code()
    assert _history(window) == ["<opened>", "Rename pool to avgpool", "fold-conv-bn (15 matches)"]
    undo = window.findChild(QAction, "actionUndo")
    assert undo.isEnabled() and "fold-conv-bn" in undo.text()
    assert not window.session.modified  # as saved
    undo.trigger()  # the restored rewrite undone: the BatchNorms are back
    assert "layer1_0_bn1" in window.document.code() and window.session.modified
    assert window.panels["code"].view.toPlainText() == window.document.code()
    # The Open dialog offers the session's model, not the session file
    assert shown_open_dialog(window)[0] == "examples:resnet"


def test_a_restored_recovery_file_keeps_its_history_and_its_model(qtbot, window, tmp_path):
    crashed = MainWindow(interactive=False, autosave_s=0, recovery=tmp_path / "other")
    qtbot.addWidget(crashed)
    open_and_wait(qtbot, crashed, "examples:negrelu", inputs=("3x4", "3x4", "3x4"))
    crashed.edits.change_target("relu", "torch.tanh")
    assert crashed.session.autosaver.save_now()
    (recovered,) = (tmp_path / "other").glob("recovery-*.fxstudio")
    with qtbot.waitSignal(window.session.loaded, timeout=60000):
        window.session.restore(recovered)
    assert "torch.tanh" in window.document.code()
    assert _history(window) == ["<opened>", "Change relu to torch.tanh"]
    assert window.session.modified  # the restored work is not in a session file yet
    assert shown_open_dialog(window)[::2] == ("examples:negrelu", "3x4 3x4 3x4")
    window.findChild(QAction, "actionUndo").trigger()
    assert "torch.tanh" not in window.document.code() and "relu" in window.document.code()
    with qtbot.waitSignal(window.session.loaded, timeout=60000):  # Reload: the model again
        window.findChild(QAction, "actionReload").trigger()
    assert window.document.request.spec == "examples:negrelu"


def test_closing_a_non_interactive_window_keeps_unsaved_work(qtbot, window):
    open_and_wait(qtbot, window, "examples:simple")
    move(window, {"fc1": (5.0, 6.0)})
    assert window.close()  # nobody to ask: the work goes to the recovery file
    (path,) = window.session.autosaver.directory.glob("recovery-*.fxstudio")
    assert json.loads(path.read_text())["view"]["positions"] == {"fc1": [5.0, 6.0]}


def test_every_command_that_replaces_the_document_asks_to_save_it_first(
    qtbot, window, tmp_path, monkeypatch
):
    """File ▸ Reload, Open Recent, a session file dropped on the window, the welcome page's
    lists and the failed trace's *Open with the export frontend* each ask the question Open
    and Quit ask: Cancel keeps the edited document and its undo history; Discard opens."""
    from fxstudio.core.errors import CaptureError
    from fxstudio.core.graph.request import OpenRequest

    dropped = tmp_path / "negrelu.fxstudio"
    save_session(open_document("examples:negrelu"), dropped)
    open_and_wait(qtbot, window, "examples:negrelu")  # (in Open Recent)
    doc = open_and_wait(qtbot, window, "examples:simple")
    move(window, {"fc1": (1.0, 1.0)})
    window.interactive = True
    asked, answer = [], [QMessageBox.StandardButton.Cancel]
    monkeypatch.setattr(window.saving, "ask_save_changes", lambda: asked.append(1) or answer[0])
    failed = CaptureError("symbolic tracing failed")
    failed.alternative = OpenRequest("examples:simple", frontend="export")
    window.window_state.fill_recent()
    recent = next(a for a in window.window_state.recent_menu.actions() if "negrelu" in a.text())

    def export_offer():
        window.show_error("Could not open the model", failed)
        box = window.findChildren(QMessageBox)[-1]
        return next(b for b in box.buttons() if b.text() == "Open with the export frontend")

    ways = {
        "File ▸ Reload": window.findChild(QAction, "actionReload").trigger,
        "File ▸ Open Recent": recent.trigger,
        "a drop": lambda: window.drops.open(str(dropped)),
        "the welcome page": lambda: window.welcome.openRequested.emit(
            OpenRequest("examples:negrelu")
        ),
        "Open with the export frontend": lambda: export_offer().click(),
    }
    for i, (way, act) in enumerate(ways.items(), 1):
        act()
        assert len(asked) == i, f"{way} did not ask"
        assert window.session.opening is None and window.document is doc, way  # Cancel: kept
        assert window.session.modified and window.session.undo_stack.count() == 1, way
    answer[0] = QMessageBox.StandardButton.Discard
    with qtbot.waitSignal(window.session.loaded, timeout=60000) as loaded:
        recent.trigger()
    assert loaded.args[0].request.spec == "examples:negrelu" and not window.session.modified
