import pytest

from fxstudio.core.opening import OpenRequest
from fxstudio.qt.main_window import MainWindow


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


def open_and_wait(qtbot, window, spec, signal="documentLoaded", **kw):
    """Open ``spec`` and wait for the window's ``signal``; returns what it carried."""
    with qtbot.waitSignal(getattr(window, signal), timeout=60000) as blocker:
        window.open_model(OpenRequest(spec, **kw))
    return blocker.args[0]
