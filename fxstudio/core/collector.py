"""Python's cycle collector, kept out of the way of big graphs.

Now and then the collector walks every object it tracks, holding the GIL: with torch loaded
that is 0.1-0.2 s, with a 20,000-node graph (nodes, meta, modules, a canvas of items) more
than a second of frozen window -- whichever thread set it off, a worker's too.  So:

* work on a big graph (:data:`BIG` nodes or more) that allocates a lot at once -- a rewrite
  of thousands of matches on a copy of the graph, a layout, its code and rows -- runs with
  automatic collection paused (:func:`sparing`, :func:`paused`: counted across threads and
  nesting); when the last pause ends, what it left is moved out of the collector's sight
  (``gc.freeze``: no scan) rather than scanned in one long sweep;
* what lives long -- the modules imported at start, a document just opened, a graph a big
  edit just made, a canvas of items -- is moved out of sight the same way (:func:`keep`);
* the garbage that leaves behind (an old document, a rewrite's discarded copy) is collected
  once, in one full collection, when the window has been idle a while (:func:`collect`,
  :data:`backlog`): a pause nobody is waiting on.

Work on a small graph is left to the collector as usual; a small document replaced goes in
one collection of what is in sight (:func:`sweep`: what was kept is not scanned).

Example:
    >>> import gc
    >>> with paused():
    ...     with paused():
    ...         pass
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
    >>> with sparing(10):  # a small graph: nothing paused
    ...     gc.isenabled()
    True
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["BIG", "backlog", "collect", "keep", "pause", "paused", "resume", "sparing", "sweep"]

#: Nodes: work on a graph this big is spared the collector's automatic scans.
BIG = 5000

_lock = threading.Lock()
_pauses = 0
_was_enabled = True
_survivors = 0  # objects kept out of sight at the last full collection


@contextlib.contextmanager
def paused(keep_after: bool = True) -> Iterator[None]:
    """No automatic collection inside (a collection may still be asked for).  When the last
    pause ends, what was allocated meanwhile is kept out of sight (``keep_after``) instead
    of being scanned by the next automatic collection all at once."""
    token = pause()
    try:
        yield
    finally:
        resume(token, keep_after)


def sparing(size: int) -> contextlib.AbstractContextManager[None]:
    """:func:`paused` for work on a graph of ``size`` nodes when it is :data:`BIG`; nothing
    otherwise."""
    return paused() if size >= BIG else contextlib.nullcontext()


class Pause:
    """A pause that spans turns of an event loop (a scene made a chunk per turn): ended
    once by :func:`resume`, whatever happens to what it paused for."""

    def __init__(self) -> None:
        self.over = False


def pause() -> Pause:
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    return Pause()


def resume(token: Pause | None, keep_after: bool = True) -> None:
    """End the pause ``token`` (again, or ``None``: nothing)."""
    global _pauses
    if token is None or token.over:
        return
    with _lock:
        token.over = True
        _pauses -= 1
        if _pauses == 0:
            if keep_after:
                gc.freeze()
            if _was_enabled:
                gc.enable()


def keep() -> None:
    """What is alive now is out of the collector's sight from now on (cheap: no scan)."""
    gc.freeze()


def backlog() -> int:
    """Objects moved out of sight since the last full collection (some of them garbage)."""
    return max(gc.get_freeze_count() - _survivors, 0)


def sweep() -> int:
    """One collection of what is in the collector's sight (not what was kept: cheap), e.g.
    once a small document was replaced.  Returns the objects it freed."""
    with _lock:
        return gc.collect() if _pauses == 0 else 0


def collect() -> int:
    """One full collection of everything (the idle window's; a document replaced): the
    survivors are kept out of sight again.  Returns the objects it freed."""
    global _survivors
    with _lock:
        gc.unfreeze()
        freed = gc.collect()
        gc.freeze()
        _survivors = gc.get_freeze_count()
    return freed
