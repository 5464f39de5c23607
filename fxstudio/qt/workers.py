"""Run slow work (loading, tracing, shape propagation) off the GUI thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal

from fxstudio.core.errors import SourceLocation
from fxstudio.core.guard import Stopped, clear_stop, stop_thread, where_is


class Task(QThread):
    """Runs ``fn()`` in a thread; emits ``succeeded(result)`` or ``failed(exception)``.

    The signals are delivered on the thread that owns the task (the GUI thread).  A task
    cannot stop torch mid-trace: :meth:`cancel` makes the task drop its result instead.
    """

    succeeded = Signal(object)
    failed = Signal(object)
    progress = Signal(int, int)  # done, total: emitted by fn through report()
    stage = Signal(str)  # what runs now: emitted by fn through say()

    def __init__(self, fn: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def report(self, done: int, total: int) -> None:
        """For ``fn`` to call from the worker thread; delivered on the GUI thread."""
        self.progress.emit(done, total)

    def say(self, text: str) -> None:
        """For ``fn`` to call from the worker thread: what it does now."""
        if not self.cancelled:
            self.stage.emit(text)

    def run(self) -> None:
        try:
            result = self._fn()
        except BaseException as exc:  # noqa: BLE001 - reported to the user by whoever listens
            if not self.cancelled:
                self.failed.emit(exc)
            return
        if not self.cancelled:
            self.succeeded.emit(result)


class UserCodeTask(QObject):
    """Runs ``fn()`` -- code that runs the user's model code -- in a daemon Python thread.

    Unlike :class:`Task` it can be stopped: :meth:`stop` raises
    :class:`~fxstudio.core.guard.Stopped` into the thread at the next Python line it runs (a
    ``while True:`` in a model file, a trace that never ends).  Code blocked in one long C
    call cannot be stopped so; it is abandoned, its result dropped, and as a daemon thread it
    never keeps the application from quitting (a running ``QThread`` would abort it).
    :meth:`where` tells which line of the user's code the thread is on now.
    """

    succeeded = Signal(object)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, fn: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self._lock = threading.Lock()
        self._ident: int | None = None  # set while fn runs: stopping is allowed then only
        self.cancelled = False
        self._thread = threading.Thread(target=self._run, name="fxstudio-open", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread (tests); True when it has ended."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self) -> None:
        """Drop the result, and stop the user's code if it is still running."""
        self.cancelled = True
        with self._lock:
            if self._ident is not None:
                stop_thread(self._ident)

    def where(self, prefer_file: str | None = None) -> SourceLocation | None:
        ident = self._ident
        return where_is(ident, prefer_file) if ident is not None else None

    def _run(self) -> None:
        try:
            try:
                self._ident = threading.get_ident()
                result = self._fn()
            finally:
                with self._lock:
                    self._ident = None
                    clear_stop(threading.get_ident())  # one sent as fn returned
        except Stopped:  # (it may land in the finally above, before the lock is taken)
            with self._lock:
                self._ident = None
            result, error = None, None
        except BaseException as exc:  # noqa: BLE001 - reported to the user by whoever listens
            result, error = None, exc
        else:
            error = None
        try:
            if not self.cancelled:
                if error is not None:
                    self.failed.emit(error)
                elif result is not None:
                    self.succeeded.emit(result)
            self.finished.emit()
        except RuntimeError:  # an abandoned task whose window is gone: nobody to tell
            pass
