"""``Turns``: work that can wait a moment, run one piece per turn of the event loop.

A change to a big graph reaches every view in the turn it is made (the canvas, the table,
the code, the Step dock): each view's share is tens of milliseconds at 20,000 nodes, and
together they held the window for a fifth of a second.  A view that can be a moment late
queues its share here instead; the queue runs one piece per turn, so the window paints and
hears the user between them.

Example::

    turns = Turns(parent)
    turns.soon(table.reload)  # (queued twice before it ran: it runs once)
    turns.soon(code.refresh)  # a turn after the table's
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


class Turns(QObject):
    """A queue of calls, one run per turn of the event loop, each queued once."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue: list[Callable[[], None]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._run_one)

    def soon(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` in a turn of its own, after what is queued (not again if queued)."""
        if fn not in self._queue:
            self._queue.append(fn)
        self._timer.start()

    def busy(self) -> bool:
        return bool(self._queue)

    def _run_one(self) -> None:
        if not self._queue:
            return
        fn = self._queue.pop(0)
        if self._queue:
            self._timer.start()  # (a timer started as timers fire waits for the next turn)
        fn()
