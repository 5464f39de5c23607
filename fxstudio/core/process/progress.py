"""What a long job is doing now -- loading, tracing (nodes so far), shapes (k of n nodes),
laying out (k of n groups) -- told to whoever listens on the thread that runs it: the
window's status bar (the open's worker), or stderr with ``--progress``.

A job says :func:`tell` at each stage, and counts its loops with a :class:`Counter` (cheap
enough for a loop over 50,000 nodes: it tells every :data:`EVERY` steps).  With nobody
listening both cost next to nothing.

Example:
    >>> seen = []
    >>> with listening(lambda stage, done, total: seen.append((stage, done, total))):
    ...     tell("Loading")
    ...     counter = Counter("Shapes", total=600)
    ...     for _ in range(600):
    ...         counter.step()
    ...     counter.close()
    >>> seen  # doctest: +NORMALIZE_WHITESPACE
    [('Loading', 0, None), ('Shapes', 0, 600), ('Shapes', 256, 600), ('Shapes', 512, 600),
     ('Shapes', 600, 600)]
    >>> describe("Shapes", 512, 600), describe("Tracing forward", 12000, None)
    ('Shapes: 512/600 nodes', 'Tracing forward: 12,000 nodes')
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

__all__ = [
    "EVERY",
    "Counter",
    "Listener",
    "StderrProgress",
    "describe",
    "listening",
    "quiet",
    "tell",
]

#: (stage, done, total): total is None while it is not known (nodes traced so far)
Listener = Callable[[str, int, "int | None"], None]

EVERY = 256  # a counter tells every this many steps

_here = threading.local()


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Hear what jobs run on this thread tell, until the block ends."""
    before = getattr(_here, "listener", None)
    _here.listener = listener
    try:
        yield
    finally:
        _here.listener = before


def quiet() -> contextlib.AbstractContextManager[None]:
    """Work nobody should hear of (a warm-up), until the block ends."""
    return listening(_nobody)


def _nobody(stage: str, done: int, total: int | None) -> None:
    pass


def tell(stage: str, done: int = 0, total: int | None = None) -> None:
    """Say what runs now (and how far it is) to this thread's listener, if any."""
    listener = getattr(_here, "listener", None)
    if listener is not None:
        listener(stage, done, total)


class Counter:
    """Counts the steps of one stage, telling every :data:`EVERY` of them."""

    __slots__ = ("done", "listener", "stage", "total")

    def __init__(self, stage: str, total: int | None = None) -> None:
        self.stage, self.total, self.done = stage, total, 0
        self.listener: Listener | None = getattr(_here, "listener", None)
        if self.listener is not None:
            self.listener(stage, 0, total)

    def step(self) -> None:
        self.done += 1
        if self.listener is not None and self.done % EVERY == 0:
            self.listener(self.stage, self.done, self.total)

    def close(self) -> None:
        """The stage is over: tell the final count."""
        if self.listener is not None and self.done % EVERY:
            self.listener(self.stage, self.done, self.total)


def describe(stage: str, done: int, total: int | None) -> str:
    """``Shapes: 512/600 nodes``; ``Tracing forward: 12,000 nodes``; ``Loading``;
    ``Exporting (torch.export): 1,200/130,006 modules``."""
    unit = (
        "groups"
        if stage.startswith("Laying out")
        else "modules"
        if stage.startswith("Exporting")
        else "nodes"
    )
    if total is not None and total > 0:
        return f"{stage}: {done:,}/{total:,} {unit}"
    if done:
        return f"{stage}: {done:,} {unit}"
    return stage


class StderrProgress:
    """``--progress``: a line per stage and at most one each ``every_s`` within it; on a
    terminal, one line written over in place (:meth:`finish` clears it) -- unless
    ``overwrite`` is False: whole lines, which output written meanwhile cannot garble.
    Nothing is said before ``after_s`` (a quick command says nothing).

    >>> import io
    >>> out = io.StringIO()
    >>> told = StderrProgress(out, overwrite=False)
    >>> told("Shapes", 3, 6); told("Shapes", 6, 6)
    >>> out.getvalue()
    'Shapes: 3/6 nodes\\nShapes: 6/6 nodes\\n'
    >>> quiet = StderrProgress(out, after_s=3600.0)
    >>> quiet("Loading", 0, None); out.getvalue().count("Loading")
    0
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        every_s: float = 0.5,
        after_s: float = 0.0,
        overwrite: bool | None = None,
    ) -> None:
        self.out = stream if stream is not None else sys.stderr
        self.tty = self.out.isatty() if overwrite is None else overwrite
        self.every_s, self.after_s = every_s, after_s
        self.began = time.monotonic()
        self.stage, self.at = "", 0.0

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if now - self.began < self.after_s:
            return
        if stage == self.stage and now - self.at < self.every_s and done != total:
            return
        text = describe(stage, done, total)
        self.out.write(f"\r\x1b[K{text}" if self.tty else f"{text}\n")
        self.out.flush()
        self.stage, self.at = stage, now

    def finish(self) -> None:
        if self.tty and self.stage:
            self.out.write("\r\x1b[K")
            self.out.flush()
