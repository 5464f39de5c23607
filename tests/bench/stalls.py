"""How long the window's event loop is held up: the largest gap of a 5 ms timer."""

from __future__ import annotations

import time


class StallMeter:
    """``start()``, do something with the event loop running, ``stop()``; then ``gaps``
    holds the timer's intervals and ``longest`` the largest (the rule is 100 ms)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.gaps: list[float] = []
        self._last = 0.0
        self._timer = QTimer()
        self._timer.setInterval(5)
        self._timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        self.gaps.append(now - self._last)
        self._last = now

    def start(self) -> None:
        self.gaps.clear()
        self._last = time.perf_counter()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._tick()  # the wait up to now counts too

    @property
    def longest(self) -> float:
        return max(self.gaps, default=0.0)
