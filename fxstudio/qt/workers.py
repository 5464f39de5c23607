"""Run slow work (loading, tracing, shape propagation, layout, profiling) off the GUI thread.

Two kinds, one mechanism:

* :class:`Task` -- fxstudio's own work (layout, profiling, rewrites, saving); it reports
  progress as it goes and can be told to drop its result.
* :class:`UserCodeTask` -- work that runs the *user's* code (opening a model), which may run
  away: it can also be stopped.

The work runs in a daemon Python thread that never touches a Qt object: it leaves its
progress and outcome in plain attributes, and a timer on the GUI thread picks them up and
emits the signals there.  So nothing Qt owns depends on the thread's lifetime: the task (a
``QObject`` child of whoever started it) may be deleted while its thread still runs -- a
window closed mid-layout, a panel gone -- and the thread just finishes into nothing; a
``QThread`` deleted while running aborts the process, and a signal emitted from a thread on
an object the GUI thread deletes meanwhile is a use-after-free.  (Both crashed the window.)
A daemon thread never keeps the application from quitting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from fxstudio.core.errors import SourceLocation
from fxstudio.core.process import progress
from fxstudio.core.process.guard import (
    Stopped,
    clear_stop,
    set_cancel_check,
    stop_thread,
    where_is,
)

_running: set[int] = set()  # ids of the workers whose threads run now


def running() -> int:
    """How many workers are running now."""
    return len(_running)


class Task(QObject):
    """Runs ``fn()`` in a thread; then emits ``succeeded(result)`` or ``failed(exception)``,
    and ``finished()``, all on the GUI thread.

    ``fn`` reports through :meth:`report` (``progress(done, total)``) and :meth:`say`
    (``stage(text)``), or as core code does, through :func:`fxstudio.core.process.progress.tell`
    (``stage`` with the count in words, ``progress`` with the count: ``(0, 0)`` while the
    total is not known).  A task cannot stop torch mid-call: :meth:`cancel` makes it drop its
    result instead (and what it reports meanwhile).  It deletes itself once finished.
    """

    POLL_MS = 15  # how often the GUI thread looks at what the worker left
    NAME = "fxstudio-worker"

    succeeded = Signal(object)
    failed = Signal(object)
    finished = Signal()
    progress = Signal(int, int)  # done, total: reported by fn through report()
    stage = Signal(str)  # what runs now: reported by fn through say()

    def __init__(self, fn: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self.cancelled = False
        # left by the worker, read by the GUI thread (plain attributes: assignments are atomic)
        self._outcome: tuple[Any, BaseException | None] | None = None
        self._progress: tuple[int, int] | None = None
        self._stage: str | None = None
        self._thread = threading.Thread(target=self._work, name=self.NAME, daemon=True)
        self._poll = QTimer(self)
        self._poll.setInterval(self.POLL_MS)
        self._poll.timeout.connect(self._check)
        key = id(self)
        self.destroyed.connect(lambda *_: _running.discard(key))

    def start(self) -> None:
        _running.add(id(self))
        self._poll.start()
        self._thread.start()

    def cancel(self) -> None:
        """Drop the result (the work itself runs on to its end)."""
        self.cancelled = True

    def running(self) -> bool:
        """The worker thread has not ended yet (a cancelled one may still run)."""
        return self._thread.is_alive()

    def wait(self, timeout_ms: int | None = None) -> bool:
        """Block until the thread has ended (or ``timeout_ms`` passed); True if it has."""
        if self._thread.ident is not None:
            self._thread.join(None if timeout_ms is None else timeout_ms / 1000)
        return not self._thread.is_alive()

    def report(self, done: int, total: int) -> None:
        """For ``fn`` to call from the worker thread."""
        self._progress = (done, total)

    def say(self, text: str) -> None:
        """For ``fn`` to call from the worker thread: what it does now."""
        self._stage = text

    def _hear(self, stage: str, done: int, total: int | None) -> None:
        """What the core code ``fn`` runs tells (:mod:`fxstudio.core.process.progress`)."""
        self._stage = progress.describe(stage, done, total)
        self._progress = (done, total) if total else (0, 0)

    def _work(self) -> None:
        """The worker thread: plain Python only (no Qt)."""
        try:
            with progress.listening(self._hear):
                result = self._call()
        except BaseException as exc:  # noqa: BLE001 - reported to the user by whoever listens
            self._outcome = (None, exc)
        else:
            self._outcome = (result, None)

    def _call(self) -> Any:
        return self._fn()

    def _check(self) -> None:
        """The GUI thread: pass on what the worker left since the last look."""
        progress, self._progress = self._progress, None
        stage, self._stage = self._stage, None
        if not self.cancelled:
            if stage is not None:
                self.stage.emit(stage)
            if progress is not None:
                self.progress.emit(*progress)
        outcome = self._outcome
        if outcome is None:
            return
        self._poll.stop()
        self._outcome = None
        self._thread.join()  # it has left its outcome: it ends now
        _running.discard(id(self))
        result, error = outcome
        if not self.cancelled:
            if error is not None:
                self.failed.emit(error)
            elif result is not STOPPED:
                self.succeeded.emit(result)
        self.finished.emit()
        self.deleteLater()


STOPPED = object()  # the outcome of user code that was stopped: neither result nor error


class UserCodeTask(Task):
    """A :class:`Task` that runs the user's code, so it can be stopped: :meth:`stop` raises
    :class:`~fxstudio.core.process.guard.Stopped` into the thread at the next Python line it runs
    (a ``while True:`` in a model file, a trace that never ends).  Code blocked in one long
    C call cannot be stopped so; it is abandoned and its result dropped.  :meth:`where`
    tells which line of the user's code the thread is on now.  ``succeeded`` is emitted
    only for a result that is not ``None``."""

    NAME = "fxstudio-open"

    def __init__(self, fn: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(fn, parent)
        self._lock = threading.Lock()
        self._ident: int | None = None  # set while fn runs: stopping is allowed then only
        self._stopper_started = False

    def stop(self) -> None:
        """Drop the result, and stop the user's code if it is still running: now, or as
        soon as the thread is in the user's own lines (a daemon thread asks every
        :data:`STOP_EVERY_S` until then, however long this task object lives)."""
        self.cancelled = True
        with self._lock:
            ident = self._ident
        if ident is not None and not self._stopper_started:
            self._stopper_started = True
            stopper = threading.Thread(
                target=_stop_when_safe, args=(self._thread, ident), daemon=True
            )
            stopper.name = "fxstudio-stop"
            stopper.start()

    def abandon(self, grace_ms: int) -> None:
        """Drop the result; stop the code only if it still runs after ``grace_ms`` (a
        runaway).  Code let run to its end leaves nothing half-done; code stopped while it
        imports a library can leave that library half-imported for everyone after."""
        self.cancelled = True
        QTimer.singleShot(grace_ms, self, self.stop)  # (gone with the task once it ends)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread (tests); True when it has ended."""
        return self.wait(None if timeout is None else int(timeout * 1000))

    def where(self, prefer_file: str | None = None) -> SourceLocation | None:
        ident = self._ident
        return where_is(ident, prefer_file) if ident is not None else None

    def _call(self) -> Any:
        try:
            try:
                self._ident = threading.get_ident()
                set_cancel_check(lambda: self.cancelled)
                result = self._fn()
            finally:
                with self._lock:
                    self._ident = None
                    clear_stop(threading.get_ident())  # one sent as fn returned
        except Stopped:  # (it may land in the finally above, before the lock is taken)
            with self._lock:
                self._ident = None
            return STOPPED
        return STOPPED if result is None else result


STOP_EVERY_S = 0.01


def _stop_when_safe(thread: threading.Thread, ident: int, give_up_s: float = 600.0) -> None:
    """Ask :func:`~fxstudio.core.process.guard.stop_thread` until it sends or the thread ends.  (It
    looks and sends right after this thread wakes and takes the interpreter: the worker
    cannot move on between the look and the send.)"""
    waited = 0.0
    while thread.is_alive() and waited < give_up_s:
        if stop_thread(ident):
            return
        time.sleep(STOP_EVERY_S)
        waited += STOP_EVERY_S
