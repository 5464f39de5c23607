"""A model whose ``forward`` prints (one of the commonest graph breaks) prints on every call:
thousands of lines while it is timed.  :func:`muted_stdout` drops them and counts them.

The swap of ``sys.stdout`` is process-wide, and another thread may swap it too meanwhile (the
window's console does): the sink is put back only if it is still in place, and once the
block has ended it passes whatever it still gets on to the stream it replaced -- so stdout
is never left muted.

Example:
    >>> with muted_stdout() as sink:
    ...     print("h is", (2, 4))
    >>> sink.lines
    1
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO


class Sink:
    """Where ``sys.stdout`` writes while muted: nothing kept, lines counted."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.active = True
        self.lines = 0

    def write(self, text: str) -> int:
        if not self.active:
            return self.stream.write(text)
        self.lines += text.count("\n")
        return len(text)

    def flush(self) -> None:
        if not self.active:
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno...
        return getattr(self.stream, name)


@contextlib.contextmanager
def muted_stdout() -> Iterator[Sink]:
    """Inside, what is printed to ``sys.stdout`` is dropped (``sink.lines`` counts it)."""
    before = sys.stdout
    sink = Sink(before)
    sys.stdout = sink
    try:
        yield sink
    finally:
        sink.active = False
        if sys.stdout is sink:
            sys.stdout = before


def printed_note(lines: int) -> list[str]:
    """What to tell the user when the model printed while it ran muted."""
    if not lines:
        return []
    return [
        f"The model's forward prints ({lines} line{'s' if lines != 1 else ''} while fxstudio "
        "ran it, dropped): the print runs on every call, compiled or not, and costs time on "
        "both sides."
    ]
