"""Errors a user can act on.

Every error that comes from the user's input (a model spec, a model file, an input shape,
an untraceable forward) is a :class:`UserError`: its message says what happened and what to
do, and the CLI prints it without a traceback and exits with status 2.  Anything else that
escapes is an fxstudio bug.
"""

from __future__ import annotations

import linecache
import os
import re
import sys
import traceback
from dataclasses import dataclass
from types import TracebackType

import torch


@dataclass(frozen=True)
class SourceLocation:
    """A place in the user's source: file, line and the text of that line."""

    filename: str
    lineno: int
    text: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"

    def describe(self) -> str:
        """``file:line`` followed by the source text on its own line, when known."""
        text = self.text.strip()
        return f"{self}\n    {text}" if text else str(self)

    def short(self) -> str:
        """``file:line`` with the file as a reader finds it: under the Python path it is
        imported from (``torchvision/models/resnet.py:92``), or the home folder (``~/…``)."""
        return f"{short_path(self.filename)}:{self.lineno}"


def short_path(filename: str) -> str:
    """``filename`` relative to the longest ``sys.path`` folder holding it, else to the home
    folder (``~/models/net.py``), else its folder and name (``…/examples/resnet.py``)."""
    path = os.path.abspath(filename)
    roots = [os.path.abspath(p or os.curdir) for p in sys.path]
    under = [r for r in roots if path.startswith(r.rstrip(os.sep) + os.sep)]
    if under:
        return os.path.relpath(path, max(under, key=len))
    home = os.path.expanduser("~")
    if path.startswith(home.rstrip(os.sep) + os.sep):
        return "~" + os.sep + os.path.relpath(path, home)
    parts = path.split(os.sep)
    return os.sep.join(["…", *parts[-2:]]) if len(parts) > 4 else filename


class UserError(Exception):
    """Bad input from the user: the message says what happened and what to do."""

    def __init__(self, message: str, location: SourceLocation | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.location = location

    def __str__(self) -> str:
        return self.message


class LoadError(UserError):
    """A model spec could not be turned into a module and its inputs."""

    #: the models a file defines, to choose from: its path named none and it has several
    choices: tuple[str, ...] = ()


class EditError(UserError):
    """An edit that would make the graph invalid.  Nothing was changed."""


class ExportError(UserError):
    """The model could not be saved in the chosen format; nothing was written."""


class InputSpecError(UserError):
    """An ``--input`` spec could not be parsed."""


class CaptureError(UserError):
    """A module could not be captured as a graph, or could not run on its example inputs."""

    tracing = False  # symbolic tracing itself failed: another frontend may capture the model
    alternative: object = None  # the OpenRequest that captures it instead, when one was found
    #: which rule of symbolic tracing the model broke: tensor-if, len, iterate, trace (other)
    rule = ""


_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.abspath(p)) + os.sep
    for p in (torch.__file__, os.path.dirname(__file__))
)


def is_library_file(filename: str) -> bool:
    """True for files of torch and fxstudio itself (never the user's code)."""
    path = os.path.abspath(filename)
    return path.startswith(_LIBRARY_DIRS) or filename.startswith("<")


def user_frame(tb: TracebackType | None, prefer_file: str | None = None) -> SourceLocation | None:
    """The innermost traceback frame in the user's code.

    Frames in ``prefer_file`` win (the model file the user opened); otherwise any frame
    outside torch, fxstudio and the standard library's ``importlib``.
    """
    frames = traceback.extract_tb(tb) if tb is not None else []
    chosen = None
    for fs in frames:
        if prefer_file and os.path.abspath(fs.filename) == os.path.abspath(prefer_file):
            chosen = fs
    if chosen is None:
        for fs in frames:
            if not is_library_file(fs.filename) and "importlib" not in fs.filename:
                chosen = fs
    if chosen is None or chosen.lineno is None:
        return None
    text = chosen.line or linecache.getline(chosen.filename, chosen.lineno)
    return SourceLocation(chosen.filename, chosen.lineno, text.strip())


_FRAME_RE = re.compile(
    r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>[^\n]+)\n(?P<text>[^\n]*)'
)


def stack_trace_location(
    stack_trace: str | None, prefer_file: str | None = None
) -> SourceLocation | None:
    """The user's line in a ``node.stack_trace`` (as recorded by tracing or export).

    Frames are listed outermost first; the innermost frame in ``prefer_file`` wins, else the
    innermost frame outside torch and fxstudio.
    """
    if not stack_trace:
        return None
    frames = [
        (m.group("file"), int(m.group("line")), m.group("text").strip())
        for m in _FRAME_RE.finditer(stack_trace)
    ]
    chosen = None
    if prefer_file:
        target = os.path.abspath(prefer_file)
        chosen = next((f for f in reversed(frames) if os.path.abspath(f[0]) == target), None)
    if chosen is None:
        chosen = next((f for f in reversed(frames) if not is_library_file(f[0])), None)
    if chosen is None:
        return None
    text = chosen[2] or linecache.getline(chosen[0], chosen[1]).strip()
    return SourceLocation(chosen[0], chosen[1], text)


def short_location(loc: SourceLocation | None) -> str:
    """``path:line:`` and the source line, ending in a newline, for the start of a message."""
    if loc is None:
        return "an unknown place (no frame of your code was on the stack).\n"
    return f"{loc.filename}:{loc.lineno}:\n    {loc.text}\n"
