"""The cycle collector kept to one thread while a window is up: no automatic collection
(it would run in whichever thread allocates), young generations collected when asked, and
automatic collection back as it was once released -- pauses nested inside or around."""

import gc
import weakref

from fxstudio.core.process import collector


def _cycle():
    """A garbage cycle with a finalizer that says it ran; returns the flag list."""
    freed: list[bool] = []
    a: list = []
    a.append(a)
    weakref.finalize(_Holder(a), freed.append, True)
    return freed


class _Holder:
    def __init__(self, cycle):
        self.cycle = cycle
        cycle.append(self)


def test_on_this_thread_turns_automatic_collection_off_until_released():
    was = gc.isenabled()
    token = collector.on_this_thread()
    try:
        assert not gc.isenabled()
        with collector.paused():  # a pause inside changes nothing after it
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        collector.release(token)
    assert gc.isenabled() == was
    collector.release(token)  # twice: nothing
    assert gc.isenabled() == was


def test_a_pause_around_keeps_collection_off_until_both_end():
    was = gc.isenabled()
    pause = collector.pause()
    token = collector.on_this_thread()
    collector.resume(pause)
    assert not gc.isenabled()  # the window still owns it
    collector.release(token)
    assert gc.isenabled() == was


def test_young_collects_young_garbage_only_when_not_paused():
    token = collector.on_this_thread()
    try:
        gc.collect()
        freed = _cycle()
        alive = [[] for _ in range(gc.get_threshold()[0] + 10)]  # enough for a collection
        with collector.paused(keep_after=False):
            assert collector.young() == 0 and not freed
        assert gc.get_count()[0] >= gc.get_threshold()[0]
        assert collector.young() > 0
        assert freed == [True]
        assert collector.young() == 0  # nothing new since
        del alive
    finally:
        collector.release(token)
