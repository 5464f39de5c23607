"""Running the user's code: however it fails, the user reads one message, and the editor lives.

Opening a model runs code fxstudio does not control: the model file at import, its
constructor, ``example_inputs()``, ``forward`` under tracing, export and shape propagation.
Besides ordinary exceptions, that code may call ``sys.exit``, raise ``KeyboardInterrupt``,
run out of memory, recurse without end, or never return.  Each becomes a
:class:`~fxstudio.core.errors.UserError` naming the user's file and line and what to do:

>>> err = user_error("Running model.py", SystemExit(3))
>>> print(err)  # doctest: +ELLIPSIS
Running model.py called sys.exit(3).
The code fxstudio runs to open a model must not exit: raise an exception instead, ...

Stopping code that runs away is the caller's choice of thread: headless, Ctrl+C raises
``KeyboardInterrupt`` in it (:func:`install_interrupt_handler` notes that the user asked);
in the window the load runs in a worker thread and :func:`stop_thread` raises
:class:`Stopped` into it.  Both land at the next Python line the code runs; code blocked in
one long C call (``time.sleep``, a huge kernel) is abandoned instead, and its result dropped.
"""

from __future__ import annotations

import ctypes
import os
import re
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from types import FrameType

from fxstudio.core.errors import LoadError, SourceLocation, UserError, is_library_file, user_frame
from fxstudio.core.process.budget import available_memory, format_bytes

#: Exit statuses of the command line (and ``--screenshot``): 2 is bad input, 1 a bug.
EXIT_OK, EXIT_BUG, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class Stopped(BaseException):
    """Raised into a thread running the user's code when the user cancels it (Cancel in the
    window).  A ``BaseException``, so that ``except Exception`` in the user's code or in
    torch does not swallow it."""


class Overbudget(BaseException):
    """Raised into a model's build when the tensors it makes would take more memory than
    it may (:func:`fxstudio.core.fxcompat.within_bytes`): not a failure of the user's code
    -- the caller builds it again without weights.  A ``BaseException``, so that ``except
    Exception`` in the model's code does not swallow it."""

    def __init__(self, made: int, limit: int) -> None:
        super().__init__(made, limit)
        self.made, self.limit = made, limit


class WontFit(UserError):
    """A run refused before it starts: what it would take is more than is available."""

    def __init__(self, message: str, need: int, available: int):
        super().__init__(message)
        self.need, self.available = need, available


class Interrupted(UserError):
    """The user pressed Ctrl+C while their code ran (headless)."""


class OutOfMemory(UserError):
    """An allocation failed: the message says how much was asked for."""

    def __init__(self, message: str, location: SourceLocation | None, requested: int | None):
        super().__init__(message, location)
        self.requested = requested


_interrupted = threading.Event()


def install_interrupt_handler() -> None:
    """Ctrl+C raises ``KeyboardInterrupt`` as usual, and records that the user pressed it (so
    it is told apart from a ``KeyboardInterrupt`` the model's code raises itself)."""
    _interrupted.clear()

    def handler(_signum: int, _frame: FrameType | None) -> None:
        _interrupted.set()
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)


def interrupted_by_user() -> bool:
    return _interrupted.is_set()


def error_report(exc: BaseException) -> tuple[int, str]:
    """How a failure is told to a person headless: the exit status and the message (2 and
    the message for bad input, 130 for Ctrl+C, 1 and a request to report it for a bug).

    >>> error_report(UserError("No such file: m.py."))
    (2, 'fxstudio: error: No such file: m.py.')
    """
    if isinstance(exc, Interrupted):
        return EXIT_INTERRUPTED, f"fxstudio: {exc}"
    if isinstance(exc, UserError):
        return EXIT_USAGE, f"fxstudio: error: {exc}"
    return EXIT_BUG, (
        f"fxstudio: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in fxstudio. Run again with --debug for the traceback and report it."
    )


def report_error(exc: BaseException, debug: bool = False) -> int:
    """Print :func:`error_report`'s message on stderr (with the traceback when ``debug``);
    return the exit status."""
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    code, text = error_report(exc)
    print(text, file=sys.stderr)
    return code


# --- sizes and memory ------------------------------------------------------------------------


_CPU_ALLOC = re.compile(r"tried to allocate (\d+) bytes")
_CUDA_ALLOC = re.compile(r"Tried to allocate ([\d.]+) (B|KiB|MiB|GiB|TiB)")
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def allocation_failure(exc: BaseException) -> tuple[bool, int | None]:
    """Whether ``exc`` is an out-of-memory failure, and how many bytes were asked for."""
    text = str(exc)
    if isinstance(exc, MemoryError):
        return True, None
    oom_type = getattr(__import__("torch"), "OutOfMemoryError", ())
    if not (isinstance(exc, RuntimeError) or (oom_type and isinstance(exc, oom_type))):
        return False, None
    if m := _CPU_ALLOC.search(text):
        return True, int(m.group(1))
    if m := _CUDA_ALLOC.search(text):
        return True, int(float(m.group(1)) * _UNITS[m.group(2)])
    if "out of memory" in text.lower() or "can't allocate memory" in text:
        return True, None
    return False, None


SMALLER_INPUT = (
    "Use a smaller --input (a batch of 1, a shorter sequence, a smaller image), or a smaller "
    "model configuration."
)
SMALLER_MODEL = "Build a smaller model (fewer or narrower layers, a smaller vocabulary)."


def out_of_memory(
    what: str, requested: int | None, loc: SourceLocation | None, hint: str = SMALLER_INPUT
) -> OutOfMemory:
    """``Out of memory while WHAT: it asked for N (M is available).``, where, and ``hint``."""
    asked = f": it asked for {format_bytes(requested)}" if requested else ""
    avail = available_memory()
    have = f" ({format_bytes(avail)} is available)" if avail else ""
    at = f"\nAt {loc.describe()}" if loc else ""
    return OutOfMemory(
        f"Out of memory while {what[0].lower() + what[1:]}{asked}{have}.{at}\n{hint}",
        loc,
        requested,
    )


def wont_fit(
    what: str, need: int, hint: str, details: str = "", available: int | None = None
) -> None:
    """Refuse (:class:`WontFit`) a run of ``need`` bytes when less is ``available``
    (default: the machine's memory): ``WHAT would take about N (DETAILS); M is available.``
    and ``hint``.  The kernel grants memory lazily: a run past what is available is not
    refused by it, but killed halfway, with the window."""
    avail = available_memory() if available is None else available
    if avail is None or need <= avail:
        return
    more = f" ({details})" if details else ""
    raise WontFit(
        f"{what} would take about {format_bytes(need)}{more}; {format_bytes(avail)} is "
        f"available, so it was not started.\n{hint}",
        need,
        avail,
    )


# --- classifying failures ---------------------------------------------------------------------


def _head(sentence: str, loc: SourceLocation | None) -> str:
    """``SENTENCE at file:line`` and the line's text, or ``SENTENCE.``; then a new line."""
    return f"{sentence} at {loc.describe()}\n" if loc else f"{sentence}.\n"


def special_failure(
    what: str, exc: BaseException, source_file: str | None = None, oom_hint: str = SMALLER_INPUT
) -> UserError | None:
    """The message for a failure that is not an ordinary exception of the user's code --
    ``sys.exit``, ``KeyboardInterrupt``, out of memory, runaway recursion -- or ``None`` for
    an ordinary one (the caller words those).  :class:`Stopped` is raised again."""
    if isinstance(exc, (Stopped, Overbudget)):
        raise exc
    if isinstance(exc, UserError):
        return exc
    loc = user_frame(exc.__traceback__, prefer_file=source_file)
    if isinstance(exc, SystemExit):
        call = "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"
        return LoadError(
            f"{_head(f'{what} called {call}', loc)}The code fxstudio runs to open a model "
            "must not exit: raise an exception instead, and keep script code under "
            'if __name__ == "__main__".',
            loc,
        )
    if isinstance(exc, KeyboardInterrupt):
        if interrupted_by_user():
            stage = what[0].lower() + what[1:]
            return Interrupted(_head(f"Stopped (Ctrl+C) while {stage}", loc).rstrip(), loc)
        return LoadError(
            f"{_head(f'{what} raised KeyboardInterrupt', loc)}Only Ctrl+C should raise it; "
            "raise an ordinary exception instead.",
            loc,
        )
    oom, requested = allocation_failure(exc)
    if oom:
        return out_of_memory(what, requested, loc, oom_hint)
    if isinstance(exc, RecursionError):
        return LoadError(
            f"{_head(f'{what} recursed without end', loc)}Python stops at "
            f"{sys.getrecursionlimit()} nested calls: check that recursion for a missing base "
            "case.",
            loc,
        )
    return None


def user_error(
    what: str,
    exc: BaseException,
    source_file: str | None = None,
    cls: type[UserError] = LoadError,
    oom_hint: str = SMALLER_INPUT,
) -> UserError:
    """One message for any failure of the user's code: ``what failed at file:line`` and the
    exception, or the special wording of :func:`special_failure`."""
    special = special_failure(what, exc, source_file, oom_hint)
    if special is not None:
        return special
    loc = user_frame(exc.__traceback__, prefer_file=source_file)
    where = f" at {loc.describe()}" if loc else ""
    return cls(f"{what} failed{where}\n{type(exc).__name__}: {exc}", loc)


# --- stopping a thread, and seeing where it is ------------------------------------------------


def _users(filename: str) -> bool:
    """A file of the user's code: not torch, fxstudio, the standard library or another
    installed package -- and a file on disk: PySide6 hooks every import in every thread
    through ``shibokensupport/signature/loader.py`` (a name, not a file), and a stop sent
    there lands inside the import under way (a window closed as its first open warmed up
    left ``torch._dynamo`` without ``guards`` for every capture after)."""
    return not (
        not (os.path.isabs(filename) and os.path.isfile(filename))
        or is_library_file(filename)
        or "importlib" in filename
        or filename.startswith(sys.prefix)
        or filename.startswith(sys.base_prefix)
    )


#: PyThreadState_SetAsyncExc(thread, exception), its argument types bound once
_SEND = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)
_USERS: dict[str, bool] = {}  # file name -> _users(it), so that the look costs nothing


def stop_thread(ident: int) -> bool:
    """Raise :class:`Stopped` in the thread ``ident`` at the next Python line it runs -- if
    it is in the user's own code now; otherwise nothing is sent and the answer is False (ask
    again a moment later).  True: sent.

    An exception raised into a thread lands at its next instruction boundary; inside a
    library that may be between a lock taken and the ``try`` that gives it back (the import
    system's module locks, logging's lock) or halfway through an import, and the lock stays
    held for ever -- every later import of that module, every log call, waits (the window
    hung so after quick opens, each stopping the one before).  From the user's line it
    lands there or at the entry of what that line calls, where nothing is held yet.  The
    look and the raise follow each other with no Python call between (where the thread
    could be let run on): a file not seen before is classified first, and looked at again.
    """
    for _ in range(2):
        frame = sys._current_frames().get(ident)
        if frame is None:
            return False
        users = _USERS.get(frame.f_code.co_filename)
        if users:
            return bool(_SEND(ident, Stopped) == 1)
        if users is False:
            return False
        _USERS[frame.f_code.co_filename] = _users(frame.f_code.co_filename)
    return False


_here = threading.local()  # per thread: how to tell that its work is no longer wanted


def set_cancel_check(check: Callable[[], bool] | None) -> None:
    """For a worker thread: ``check()`` says whether its result is still wanted."""
    _here.check = check


def cancel_requested() -> bool:
    """Whether the work on this thread is no longer wanted (its own code may end there, by
    raising :class:`Stopped`, at a place where that is safe)."""
    check = getattr(_here, "check", None)
    return bool(check is not None and check())


def clear_stop(ident: int) -> None:
    """Withdraw a :func:`stop_thread` that has not landed yet."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), None)  # None: NULL


def where_is(ident: int, prefer_file: str | None = None) -> SourceLocation | None:
    """The line of the user's code the thread ``ident`` is running now (innermost frame in
    ``prefer_file``, else outside torch and fxstudio), or ``None``."""
    frame = sys._current_frames().get(ident)
    if frame is None:
        return None
    stack = traceback.extract_stack(frame)
    chosen = None
    if prefer_file:
        target = os.path.abspath(prefer_file)
        chosen = next((f for f in reversed(stack) if os.path.abspath(f.filename) == target), None)
    if chosen is None:
        chosen = next((f for f in reversed(stack) if _users(f.filename)), None)
    if chosen is None or chosen.lineno is None:
        return None
    return SourceLocation(chosen.filename, chosen.lineno, (chosen.line or "").strip())
