"""The garbage a big document leaves behind is collected when the window is idle: after
:data:`IDLE_S` seconds with no input, no change of the document and no worker running, one
full collection (:func:`fxstudio.core.collector.collect`) -- a pause nobody is waiting on,
instead of many during the work (see :mod:`fxstudio.core.collector`)."""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

from fxstudio.core import collector
from fxstudio.qt import workers

log = logging.getLogger(__name__)

IDLE_S = 8.0
#: Objects moved out of the collector's sight since its last full run, worth collecting for.
WORTH = 200_000
_INPUT = {
    QEvent.Type.MouseButtonPress,
    QEvent.Type.MouseMove,
    QEvent.Type.Wheel,
    QEvent.Type.KeyPress,
}


class IdleCollector(QObject):
    """Collects when ``session`` has been idle a while (installed on the application)."""

    def __init__(self, session: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(int(IDLE_S * 1000))
        self.timer.timeout.connect(self._idle)
        session.changed.connect(self._busy)
        session.busy.connect(self._busy)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)
        self.timer.start()

    def _busy(self, *_args: Any) -> None:
        self.timer.start()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() in _INPUT:
            self.timer.start()
        return False

    def _idle(self) -> None:
        if workers.running():
            self.timer.start()
            return
        if collector.backlog() >= WORTH:
            freed = collector.collect()
            log.info("collected %d objects while idle", freed)
