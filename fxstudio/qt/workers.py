"""Run slow work (loading, tracing, shape propagation) off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, Signal


class Task(QThread):
    """Runs ``fn()`` in a thread; emits ``succeeded(result)`` or ``failed(exception)``.

    The signals are delivered on the thread that owns the task (the GUI thread).  A task
    cannot stop torch mid-trace: :meth:`cancel` makes the task drop its result instead.
    """

    succeeded = Signal(object)
    failed = Signal(object)
    progress = Signal(int, int)  # done, total: emitted by fn through report()

    def __init__(self, fn: Callable[[], Any], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def report(self, done: int, total: int) -> None:
        """For ``fn`` to call from the worker thread; delivered on the GUI thread."""
        self.progress.emit(done, total)

    def run(self) -> None:
        try:
            result = self._fn()
        except Exception as exc:  # reported to the user by whoever listens
            if not self.cancelled:
                self.failed.emit(exc)
            return
        if not self.cancelled:
            self.succeeded.emit(result)
