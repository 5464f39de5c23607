import pytest

from fxstudio.core.model.request import OpenRequest
from fxstudio.qt.window.main_window import MainWindow


def _window(qtbot, tmp_path, interactive):
    w = MainWindow(interactive=interactive, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    return w


@pytest.fixture
def window(qtbot, tmp_path):
    """A non-interactive main window (no dialogs) with its own recovery folder."""
    return _window(qtbot, tmp_path, interactive=False)


@pytest.fixture
def interactive(qtbot, tmp_path):
    """A window that shows its messages in message boxes, as a user's does."""
    return _window(qtbot, tmp_path, interactive=True)


def open_and_wait(qtbot, window, spec, signal="loaded", **kw):
    """Open ``spec`` and wait for the session's ``signal`` (``loaded``, ``loadFailed``) or the
    window's ``layoutShown``; returns what it carried."""
    source = window if signal == "layoutShown" else window.session
    with qtbot.waitSignal(getattr(source, signal), timeout=60000) as blocker:
        window.session.open(OpenRequest(spec, **kw))
    return blocker.args[0]


def move(window, positions):
    """Move nodes as a drag on the canvas does: one undo step (the session is modified)."""
    from fxstudio.qt.editing.commands import MoveNodesCommand

    doc = window.document
    before = {name: doc.positions.get(name) for name in positions}
    window.session.undo_stack.push(MoveNodesCommand(doc, before, positions))
