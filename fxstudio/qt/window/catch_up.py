"""Runs :mod:`fxstudio.core.edits.catchup` for the window's document in a worker thread."""

from __future__ import annotations

import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from fxstudio.core.flows.edit import catchup
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.copies import OnCopy, run_on_copy

log = logging.getLogger(__name__)


class CatchUpRunner(QObject):
    """After edits to a big graph, brings its code, rows and shapes up to date.

    ``schedule()`` after each edit: ``delay_ms`` after the last one (the canvas has been
    painted by then), the graph is snapshotted on the GUI thread and worked on in a thread;
    a result for a graph that has changed since is dropped and the work starts again.
    """

    caughtUp = Signal()  # noqa: N815 - the document's code, rows and shapes are current
    failed = Signal(str)

    def __init__(self, delay_ms: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._document: GraphDocument | None = None
        self._task: OnCopy[catchup.CatchUp] | None = None
        self._waiting: list[Callable[[], None]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(delay_ms)
        self._timer.timeout.connect(self._start)

    @property
    def document(self) -> GraphDocument | None:
        """The document it keeps up to date."""
        return self._document

    def set_document(self, document: GraphDocument | None) -> None:
        self._document = document
        self._timer.stop()
        if self._task is not None:
            self._task.cancel()  # its result belongs to the old document
            self._task = None
        self._release()

    def schedule(self) -> None:
        doc = self._document
        if doc is not None and catchup.needed(doc):
            self._timer.start()  # a later edit pushes it back

    def busy(self) -> bool:
        return self._timer.isActive() or self._task is not None

    def when_idle(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once nothing is left to catch up (at once if nothing is)."""
        if self.busy():
            self._waiting.append(fn)
        else:
            fn()

    def _start(self) -> None:
        doc = self._document
        if self._task is not None:  # it starts again when the running one is done
            return
        if doc is None or not catchup.needed(doc):
            self._release()
            return
        job: OnCopy[catchup.CatchUp] = run_on_copy(
            self,
            lambda copy: catchup.compute(copy.snapshot),
            lambda result: self._done(job, doc, result),
            stale=lambda _result: self._moved_on(job),  # edited in the meantime: once more
            failed=lambda exc: self._failed(job, exc),
            modules=False,  # (views and shapes: the live module's submodules, read as they run)
            parent=self,
        )
        self._task = job

    def _done(
        self, job: OnCopy[catchup.CatchUp], doc: GraphDocument, result: catchup.CatchUp
    ) -> None:
        if job is not self._task:
            return
        self._task = None
        if not catchup.apply(doc, result):  # (at the version read: taken)
            self._again()
            return
        if not self._timer.isActive():
            self.caughtUp.emit()
            self._release()

    def _moved_on(self, job: OnCopy[catchup.CatchUp]) -> None:
        if job is not self._task:
            return
        self._task = None
        self._again()

    def _again(self) -> None:
        if not self._timer.isActive():
            self._start()

    def _failed(self, job: OnCopy[catchup.CatchUp], exc: BaseException) -> None:
        if job is not self._task:
            return
        self._task = None
        if not job.current():  # read while it changed: start again
            self._start()
            return
        log.error("could not bring the code and shapes up to date", exc_info=exc)
        self.failed.emit(f"Could not bring the code and shapes up to date: {exc}")
        self._release()

    def _release(self) -> None:
        waiting, self._waiting = self._waiting, []
        for fn in waiting:
            fn()
