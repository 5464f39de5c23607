"""Python's cycle collector runs on the GUI thread only while the window is up: the young
generations on a timer (:func:`fxstudio.core.process.collector.young`), so that no worker's
allocations set off a collection that finalizes Qt objects in the worker's thread (#20's
other crash: the main thread faulted in the event loop while an open's worker was in
torch.export).

The garbage a big document leaves behind is collected when the window is idle: after
:data:`IDLE_S` seconds with the pointer still and no button held, no change of the document
and no worker running, one full collection (:func:`fxstudio.core.process.collector.collect`) -- a
pause nobody is waiting on, instead of many during the work (see
:mod:`fxstudio.core.process.collector`).

The pointer is looked at on a timer, not heard through an event filter on the application:
such a filter hands every event's receiver to Python, and PySide6 crashes making a wrapper
for an object Qt is destroying (a completion popup closing as its dialog is accepted: the
window vanished, "Garbage-collecting" on the main thread -- #20's crash).
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QObject, QPoint, QTimer
from PySide6.QtGui import QCursor, QGuiApplication

from fxstudio.core.process import collector
from fxstudio.qt import workers
from fxstudio.qt.window.session import DocumentSession

log = logging.getLogger(__name__)

IDLE_S = 8.0
YOUNG_MS = 100  # how often the young generations are collected (as Python would, but here)
LOOK_S = 1.0  # how often the pointer is looked at
#: Objects moved out of the collector's sight since its last full run, worth collecting for.
WORTH = 200_000


class IdleCollector(QObject):
    """Keeps the collector on the GUI thread while the window is up (young generations every
    :data:`YOUNG_MS`, see :func:`fxstudio.core.process.collector.on_this_thread`), and collects the
    rest when ``session`` has been idle a while."""

    def __init__(self, session: DocumentSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.quiet_s = 0.0  # since the last input, change or worker
        self.pointer = QPoint()
        self.timer = QTimer(self)
        self.timer.setInterval(int(LOOK_S * 1000))
        self.timer.timeout.connect(self._look)
        session.changed.connect(self._busy)
        session.busy.connect(self._busy)
        self.timer.start()
        token = collector.on_this_thread()
        self.destroyed.connect(lambda *_: collector.release(token))
        self.young = QTimer(self)
        self.young.setInterval(YOUNG_MS)
        self.young.timeout.connect(collector.young)
        self.young.start()

    def _busy(self, *_args: object) -> None:
        self.quiet_s = 0.0

    def _look(self) -> None:
        pointer = QCursor.pos()
        if pointer != self.pointer or QGuiApplication.mouseButtons() or workers.running():
            self.pointer = pointer
            self.quiet_s = 0.0
            return
        self.quiet_s += LOOK_S
        if self.quiet_s >= IDLE_S:
            self.quiet_s = 0.0
            self._idle()

    def _idle(self) -> None:
        if collector.backlog() >= WORTH or collector.owed():
            freed = collector.collect()
        else:
            freed = collector.sweep()  # what young() leaves: the old generation in sight
        log.info("collected %d objects while idle", freed)
