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
  :data:`backlog`): a pause nobody is waiting on -- and what a cancelled open took is given
  back to the machine then (:func:`owe`, :func:`give_back`: freed memory otherwise stays in
  the process's heap).

Work on a small graph is left to the collector as usual; a small document replaced goes in
one collection of what is in sight (:func:`sweep`: what was kept is not scanned).

And while a window is up, the collector runs on its thread only (:func:`on_this_thread`,
then :func:`young` on a timer): an automatic collection runs in whichever thread happens to
allocate, and a worker's (torch.export allocates millions of objects) would finalize the
garbage cycles holding Qt objects there -- a canvas item, a widget -- running their C++
destructors off the GUI thread while it paints: the window crashed so.

Example:
    >>> import gc
    >>> before = gc.isenabled()  # off already while a window is up (on_this_thread)
    >>> with paused():
    ...     with paused():
    ...         pass
    ...     gc.isenabled()
    False
    >>> gc.isenabled() == before  # as it was once the last pause ends
    True
    >>> with sparing(10):  # a small graph: nothing paused
    ...     gc.isenabled() == before
    True
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = [
    "BIG",
    "OnThisThread",
    "backlog",
    "batched",
    "collect",
    "give_back",
    "keep",
    "on_this_thread",
    "owe",
    "owed",
    "pause",
    "paused",
    "release",
    "resume",
    "sparing",
    "sweep",
    "young",
]

#: A full collection that freed this many objects gives their memory back to the machine.
TRIM_AFTER = 100_000
#: Nodes: work on a graph this big is spared the collector's automatic scans.
BIG = 5000

_lock = threading.Lock()
_pauses = 0
_owners = 0  # windows collecting on their thread only (on_this_thread)
_was_enabled = True  # automatic collection, before fxstudio turned it off
_survivors = 0  # objects kept out of sight at the last full collection
_owed = False  # memory owed back to the machine (owe)


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


def batched() -> contextlib.AbstractContextManager[None]:
    """:func:`paused` where collection is automatic (the command line, a script): work that
    makes millions of objects at once -- an open -- is not swept again and again as it grows
    (a 50,000-node open's sweeps took 4-6 s of its 13-15): what it made is scanned once
    after, not kept out of sight (a script opening model after model would keep every one's
    garbage for ever); in a window, which collects the young generations on its own thread
    (:func:`on_this_thread`) and keeps or sweeps what an open made once it is shown,
    nothing."""
    return paused(keep_after=False) if _owners == 0 else contextlib.nullcontext()


class Pause:
    """A pause that spans turns of an event loop (a scene made a chunk per turn): ended
    once by :func:`resume`, whatever happens to what it paused for."""

    def __init__(self) -> None:
        self.over = False


def _turn_off() -> None:
    """(Lock held.)  Automatic collection off, remembering whether it was on."""
    global _was_enabled
    if _pauses == 0 and _owners == 0:
        _was_enabled = gc.isenabled()
        gc.disable()


def _turn_back_on() -> None:
    """(Lock held.)  Automatic collection as it was, once nothing keeps it off."""
    if _pauses == 0 and _owners == 0 and _was_enabled:
        gc.enable()


def pause() -> Pause:
    global _pauses
    with _lock:
        _turn_off()
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
            _turn_back_on()


class OnThisThread:
    """The collector kept to its caller's thread (:func:`on_this_thread`), until
    :func:`release`."""

    def __init__(self) -> None:
        self.over = False


def on_this_thread() -> OnThisThread:
    """No automatic collection (it runs in whatever thread allocates) until :func:`release`:
    the caller collects on its own thread by calling :func:`young` often (a GUI timer)."""
    global _owners
    with _lock:
        _turn_off()
        _owners += 1
    return OnThisThread()


def release(token: OnThisThread) -> None:
    """End :func:`on_this_thread` (again: nothing)."""
    global _owners
    with _lock:
        if token.over:
            return
        token.over = True
        _owners -= 1
        _turn_back_on()


def young() -> int:
    """The young collection the automatic collector would make now, made on this thread:
    the youngest generation once its count passed its threshold, the middle one too once
    that passed its own (nothing while paused).  The old generation is left to
    :func:`sweep` and :func:`collect` (an idle window's).  Returns the objects it freed."""
    with _lock:
        if _pauses:
            return 0
        counts, thresholds = gc.get_count(), gc.get_threshold()
        if counts[0] < thresholds[0]:
            return 0
        return gc.collect(1 if counts[1] >= thresholds[1] else 0)


def keep() -> None:
    """What is alive now is out of the collector's sight from now on (cheap: no scan)."""
    gc.freeze()


def backlog() -> int:
    """Objects moved out of sight since the last full collection (some of them garbage)."""
    return max(gc.get_freeze_count() - _survivors, 0)


def owe() -> None:
    """Memory is owed back: the next idle full collection (:func:`collect`) is made however
    small the backlog, and gives the memory back (a cancelled open's half-built model)."""
    global _owed
    _owed = True


def owed() -> bool:
    """Whether :func:`owe` was called since the last full collection."""
    return _owed


def sweep() -> int:
    """One collection of what is in the collector's sight (not what was kept: cheap), e.g.
    once a small document was replaced.  Returns the objects it freed."""
    with _lock:
        return gc.collect() if _pauses == 0 else 0


def collect() -> int:
    """One full collection of everything (the idle window's; a document replaced): the
    survivors are kept out of sight again.  Returns the objects it freed."""
    global _survivors, _owed
    with _lock:
        gc.unfreeze()
        freed = gc.collect()
        gc.freeze()
        _survivors = gc.get_freeze_count()
    if freed >= TRIM_AFTER or _owed:
        _owed = False
        give_back()  # (a cancelled open's million objects: their pages back to the machine)
    return freed


def give_back() -> None:
    """Return freed memory to the machine: glibc's free lists trimmed (``malloc_trim``: a
    cancelled open's millions of small objects, once collected, otherwise stay in the
    process's heap, resident)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):  # (glibc's: not on macOS, Windows)
        ctypes.CDLL(None).malloc_trim(0)
