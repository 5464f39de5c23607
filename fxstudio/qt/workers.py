"""Run slow work (loading, tracing, shape propagation, layout, profiling) off the GUI thread.

Two kinds:

* :class:`Task` -- a ``QThread`` for fxstudio's own work (layout, profiling, rewrites); it
  reports progress as it goes and can be told to drop its result.
* :class:`UserCodeTask` -- a daemon Python thread for work that runs the *user's* code
  (opening a model), which may run away and must be stoppable.  Its thread never touches a
  Qt object: it leaves its outcome in a plain attribute and a timer on the GUI thread picks it
  up and emits the signals there.  (A Qt signal emitted from a Python thread on an object the
  GUI thread may delete meanwhile -- the task of an open that a newer open superseded -- is a
  use-after-free in Qt's signal code; the window crashed that way under a quick user.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, QTimer, Signal

from fxstudio.core.errors import SourceLocation
from fxstudio.core.guard import Stopped, clear_stop, stop_thread, where_is


class Task(QThread):
    """Runs ``fn()`` in a thread; emits ``succeeded(result)`` or ``failed(exception)``.

    The signals are delivered on the thread that owns the task (the GUI thread).  A task
    cannot stop torch mid-call: :meth:`cancel` makes the task drop its result instead.  Once
    its thread has ended the task deletes itself (after ``QThread.finished``).
    """

    succeeded = Signal(object)
    failed = Signal(object)
    progress = Signal(int, int)  # done, total: emitted by fn through report()
    stage = Signal(str)  # what runs now: emitted by fn through say()

    def __init__(self, fn: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self.cancelled = False
        self.finished.connect(self._ended)

    def cancel(self) -> None:
        self.cancelled = True

    def report(self, done: int, total: int) -> None:
        """For ``fn`` to call from the worker thread; delivered on the GUI thread."""
        if not self.cancelled:
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

    def _ended(self) -> None:
        self.wait()  # (finished is emitted just before the thread ends: let it end first)
        self.deleteLater()


class UserCodeTask(QObject):
    """Runs ``fn()`` -- code that runs the user's model code -- in a daemon Python thread.

    It can be stopped: :meth:`stop` raises :class:`~fxstudio.core.guard.Stopped` into the
    thread at the next Python line it runs (a ``while True:`` in a model file, a trace that
    never ends).  Code blocked in one long C call cannot be stopped so; it is abandoned, its
    result dropped, and as a daemon thread it never keeps the application from quitting.
    :meth:`where` tells which line of the user's code the thread is on now.

    ``succeeded(result)`` or ``failed(exception)``, then ``finished()``, are emitted on the
    GUI thread by a timer that watches the worker (every :data:`POLL_MS`): the worker itself
    never touches this object's Qt side.
    """

    POLL_MS = 15

    succeeded = Signal(object)
    failed = Signal(object)
    finished = Signal()

    def __init__(self, fn: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self._lock = threading.Lock()
        self._ident: int | None = None  # set while fn runs: stopping is allowed then only
        self._outcome: tuple[Any, BaseException | None] | None = None  # set by the worker
        self.cancelled = False
        self._thread = threading.Thread(target=self._run, name="fxstudio-open", daemon=True)
        self._poll = QTimer(self)
        self._poll.setInterval(self.POLL_MS)
        self._poll.timeout.connect(self._check)

    def start(self) -> None:
        self._poll.start()
        self._thread.start()

    def running(self) -> bool:
        """The worker thread has not ended yet (a stopped or abandoned one may still run)."""
        return self._thread.is_alive()

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
        """The worker thread: plain Python only (no Qt)."""
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
            self._outcome = (None, None)
        except BaseException as exc:  # noqa: BLE001 - reported to the user by whoever listens
            self._outcome = (None, exc)
        else:
            self._outcome = (result, None)

    def _check(self) -> None:
        """The GUI thread: deliver the outcome once the worker has left one."""
        outcome = self._outcome
        if outcome is None:
            return
        self._poll.stop()
        self._outcome = None
        result, error = outcome
        if not self.cancelled:
            if error is not None:
                self.failed.emit(error)
            elif result is not None:
                self.succeeded.emit(result)
        self.finished.emit()
