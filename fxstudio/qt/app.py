"""Start the GUI: ``fxstudio [MODEL] [--screenshot OUT.png]``."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from fxstudio.core.errors import UserError
from fxstudio.core.flows.save import CrashLog
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.process.guard import EXIT_OK, EXIT_USAGE, report_error
from fxstudio.qt.startup import (
    START_SIZE,
    FirstPictureWindow,
    application,
    take_first_picture,
)
from fxstudio.qt.window.autosave import DEFAULT_INTERVAL_S, find_recoveries, recovery_dir

__all__ = ["application", "run_gui"]

#: The main window replaces a ``.pt2``'s first picture once its canvas is drawn, or this
#: late at the latest (it then shows its progress, with Cancel).
REPLACE_WITHIN_MS = 15_000


def run_gui(
    request: OpenRequest | None,
    screenshot: str | None = None,
    debug: bool = False,
    autosave_s: float | None = None,
) -> int:
    """Open the window on ``request`` (None: the welcome page); with ``screenshot``, write a
    PNG once shown and exit.

    Unless taking a screenshot, the window keeps a crash log (:mod:`fxstudio.core.process.crashlog`,
    beside the recovery folder), says so when the last run crashed, and offers a recovery
    file left by a crashed fxstudio first.
    """
    if screenshot and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = application()
    from fxstudio.qt.window.main_window import MainWindow

    interval = DEFAULT_INTERVAL_S if autosave_s is None else autosave_s
    crash_log = CrashLog(recovery_dir().parent)
    crash = None if screenshot else crash_log.start()
    window = MainWindow(interactive=screenshot is None, autosave_s=0 if screenshot else interval)
    window.window_state.start_size(*START_SIZE)  # a later run: as it was left
    first = take_first_picture()
    if first is not None and (crash or find_recoveries(window.session.autosaver.directory)):
        first.hand_over()  # what the last run left is asked about over the main window
        first = None
    if first is None:
        window.show()
    else:
        _replace_when_drawn(window, first)
    status = {"code": EXIT_OK}

    if screenshot:

        def shoot(_layout: object) -> None:
            # Let the views lay themselves out and paint once before grabbing.
            QTimer.singleShot(50, lambda: _save_and_quit(window, screenshot, status, app))

        def fail(exc: BaseException) -> None:
            status["code"] = report_error(exc, debug)
            app.quit()

        window.layoutShown.connect(shoot)  # the canvas is drawn: the window is complete
        window.session.loadFailed.connect(fail)
        window.canvas_controller.layoutFailed.connect(fail)  # no picture will come
    else:
        window.session.loadFailed.connect(lambda exc: _log_failure(exc, debug))

    if screenshot and request is None:  # the welcome page, once painted
        QTimer.singleShot(200, lambda: _save_and_quit(window, screenshot, status, app))
    elif screenshot or not window.offer_recovery(crash):
        if request is not None:
            window.session.open(request)
    app.exec()
    crash_log.end()
    return status["code"]


def _replace_when_drawn(window, first: FirstPictureWindow) -> None:
    """The main window replaces a ``.pt2``'s first picture once its canvas is drawn, the
    open failed (its message shown over it) or :data:`REPLACE_WITHIN_MS` passed."""

    def replace(*_: object) -> None:
        if not first.handed_over:
            window.show()
            first.hand_over()

    window.layoutShown.connect(replace)
    window.session.loadFailed.connect(replace)
    window.canvas_controller.layoutFailed.connect(replace)
    QTimer.singleShot(REPLACE_WITHIN_MS, replace)  # never left on the picture alone


def _save_and_quit(window, path: str, status: dict[str, int], app: QApplication) -> None:
    # Show a node selected, as a user would see it: the first function call.
    doc = window.document
    first = (
        next((n.name for n in doc.graph.nodes if n.op == "call_function"), None) if doc else None
    )
    if first is not None:
        window.selection.select([first])
    QApplication.processEvents()
    pixmap = window.grab()
    if not pixmap.save(path, "PNG"):
        print(
            f"fxstudio: error: cannot write the screenshot to {path}; check that the folder "
            "exists and is writable.",
            file=sys.stderr,
        )
        status["code"] = EXIT_USAGE
    app.quit()


def _log_failure(exc: BaseException, debug: bool) -> None:
    if debug or not isinstance(exc, UserError):
        report_error(exc, debug)
