"""``Turns``: a big graph's views catch up one per turn of the event loop."""

from PySide6.QtCore import QTimer

from fxstudio.qt.turns import Turns


def test_queued_calls_run_once_each_in_turns_of_their_own(qtbot):
    turns, ran, ticks = Turns(), [], []
    tick = QTimer()
    tick.setInterval(0)
    tick.timeout.connect(lambda: ticks.append(len(ran)))
    tick.start()  # counts turns: what had run when each came
    a, b = (lambda: ran.append("a")), (lambda: ran.append("b"))
    turns.soon(a)
    turns.soon(b)
    turns.soon(a)  # queued already: not again
    assert turns.busy() and ran == []  # nothing in the turn that queued them
    qtbot.waitUntil(lambda: not turns.busy())
    qtbot.waitUntil(lambda: len(ticks) > 2 and ticks[-1] == 2)
    tick.stop()
    assert ran == ["a", "b"]
    assert 1 in ticks  # a turn came between them
