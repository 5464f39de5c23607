"""Retake the README's screenshots of the window: the real window, driven as a user would,
each picture taken once what it shows is on screen (waiting on the window's signals).

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python packaging/screenshots.py [NAME ...]

writes ``packaging/screenshots/NAME.png`` (all of them without NAMEs; ``--size 1000x700``
for a smaller window, ``--out DIR`` elsewhere).  Each window gets a fresh settings and
recovery folder, so it starts as a new user's does.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
HOME = Path(tempfile.mkdtemp(prefix="fxstudio-shots-"))  # each window's settings and recovery
os.environ["XDG_DATA_HOME"] = str(HOME / "data")  # the recent models: not the user's

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from fxstudio.core.opening import OpenRequest  # noqa: E402
from fxstudio.qt.window.main_window import MainWindow  # noqa: E402

TIMEOUT_MS = 180_000


def wait(signal, start: Callable[[], object] | None = None) -> None:
    """Run ``start()`` and the event loop until ``signal`` (or the timeout: then exit 1)."""
    loop = QEventLoop()
    signal.connect(loop.quit)
    timer = QTimer(singleShot=True, interval=TIMEOUT_MS)
    timer.timeout.connect(lambda: (print(f"timed out waiting for {signal}"), os._exit(1)))
    timer.start()
    if start is not None:
        start()
    loop.exec()
    timer.stop()
    signal.disconnect(loop.quit)


def settle(window: MainWindow, ms: int = 500) -> None:
    """Until the views show the graph as it is (layout drawn, code caught up), and ``ms``
    more for what is drawn on a timer (the overview map, repaints)."""
    app = QApplication.instance()
    while window.session.catch_up.busy() or window.canvas_controller.busy():
        app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 50)
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def open_model(window: MainWindow, spec: str) -> None:
    wait(window.layoutShown, lambda: window.session.open(OpenRequest(spec)))
    settle(window)


def welcome(window: MainWindow) -> None:
    settle(window)


def main_window(window: MainWindow) -> None:
    open_model(window, "examples:resnet")
    window.selection.select(["add"])
    settle(window)


def dock(window: MainWindow, spec: str, panel_id: str):
    """Open ``spec`` and bring the panel's dock to the front; the panel."""
    open_model(window, spec)
    panel = window.panels[panel_id]
    panel.dock.show()
    panel.dock.raise_()
    return panel


def pattern_matches(window: MainWindow) -> None:
    panel = dock(window, "examples:resnet", "patterns")
    window.selection.select(["layer1_0_conv1", "layer1_0_bn1", "layer1_0_relu"])
    wait(panel.found, panel.make_button.click)
    settle(window)


def run_dock(window: MainWindow) -> None:
    panel = dock(window, "examples:resnet", "run")
    panel.min_time.setValue(0.05)
    wait(panel.finished, panel.run_button.click)
    panel.tabs.setCurrentIndex(2)  # Top: the nodes and modules that take the time
    window.selection.select(["layer1_0_conv2"])
    settle(window)


def step_dock(window: MainWindow) -> None:
    panel = dock(window, "examples:resnet", "step")
    window.selection.select(["layer1_0_conv2"])
    wait(panel.moved, panel.run_to_selected)
    settle(window)


def console(window: MainWindow) -> None:
    panel = dock(window, "examples:negrelu", "console")
    panel.run("edits.set_target('relu', 'torch.sigmoid')")
    panel.run("next(n for n in graph.nodes if n.name == 'add').target = operator.sub")
    settle(window)


def inspector(window: MainWindow) -> None:
    """A conv selected: the inspector's class, constructor and source; the zoom; the find
    bar on its first match."""
    panel = dock(window, "examples:resnet", "inspector")
    window.search.show()
    window.search.edit.setText("conv1")
    panel.refresh()
    settle(window)


def long_names(window: MainWindow) -> None:
    """Node boxes as wide as their labels; past the limit, elided in the middle."""
    open_model(window, "tests/models/long_names.py:Model")
    window.canvas.actual_size()
    window.canvas.centerOn(window.canvas.scene().nodes["stages_0_depthwise_convolution"])
    settle(window)


def dark_theme(window: MainWindow) -> None:
    window.theme.choose("dark")
    open_model(window, "examples:resnet")


SHOTS: dict[str, Callable[[MainWindow], None]] = {
    "welcome": welcome,
    "main-window": main_window,
    "pattern-matches": pattern_matches,
    "run-dock": run_dock,
    "step-dock": step_dock,
    "console": console,
    "dark-theme": dark_theme,
    "inspector": inspector,
    "long-names": long_names,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", choices=[[], *SHOTS], metavar="NAME")
    parser.add_argument("--size", default="1600x1000", help="the window's size, WxH")
    parser.add_argument("--out", type=Path, default=ROOT / "packaging" / "screenshots")
    parser.add_argument("--suffix", default="", help="added to each file name")
    ns = parser.parse_args()
    width, height = (int(v) for v in ns.size.split("x"))
    app = QApplication.instance() or QApplication(sys.argv)
    ns.out.mkdir(parents=True, exist_ok=True)
    for name in ns.names or list(SHOTS):
        window = MainWindow(interactive=False, autosave_s=0, recovery=HOME / name / "recovery")
        window.resize(width, height)
        window.show()
        SHOTS[name](window)
        path = ns.out / f"{name}{ns.suffix}.png"
        window.grab().save(str(path))
        print(path, flush=True)
        window.session.undo_stack.setClean()  # nothing to ask about
        window.close()
        window.deleteLater()
        app.processEvents()


if __name__ == "__main__":
    main()
