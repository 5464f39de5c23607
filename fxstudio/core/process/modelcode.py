"""Model code takes turns: loading a model (its file, the packages it imports) and capturing
it run in one thread at a time (:func:`one_turn`; an open holds it from load to capture).
Captures must: torch.fx's tracer patches ``nn.Module.__call__`` (and the functions
it wraps) for the whole process while it traces, so a model run or traced in another thread
meanwhile goes through that tracer ("module is not installed as a submodule").  And the
first capture of a process is made on a tiny model, one thread at a time: it imports some
1,200 modules torch loads lazily (sympy, torch._dynamo, torch.export, ...), and two threads
importing them at once -- a user opening a model before the last one finished -- can each be
handed the other's half-made modules (Python's way out of an import deadlock between
threads: "module 'sympy' has no attribute 'core'").  Loading must too: a model's imports
(timm, transformers, the example's ``torch.nn``) pull in the same lazy modules, and a window
closed while its first open was warming up let the next window's open load its model beside
it ("module 'torch._dynamo' has no attribute 'guards'", for every capture after).

Example::

    >>> made = []  # the first captures made, by frontend (here a made-up one)
    >>> with one_capture_at_a_time("example", made.append):
    ...     with one_capture_at_a_time("example", made.append):  # the same thread, again
    ...         made
    ['example']
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from torch import Tensor, nn
from torch.nn.modules.module import (
    register_module_forward_pre_hook,
    register_module_parameter_registration_hook,
)

from fxstudio.core.errors import CaptureError
from fxstudio.core.process import budget
from fxstudio.core.process.guard import Stopped, cancel_requested

__all__ = ["WAIT_FOR_CAPTURE_S", "Tiny", "one_capture_at_a_time", "one_turn", "stoppable"]

_CAPTURING = threading.RLock()
_held = threading.local()  # depth: turns this thread holds, one inside another; bound: any is
WAIT_FOR_CAPTURE_S = 300.0
_WARMING = threading.Lock()
_warm: set[str] = set()


class Tiny(nn.Module):
    """The model of the first capture."""

    def forward(self, x: Tensor) -> Tensor:
        return x.relu() + 1


@contextlib.contextmanager
def one_capture_at_a_time(frontend: str, first_capture: Callable[[str], None]) -> Iterator[None]:
    """Hold the turn (:func:`one_turn`: not bound, a capture is watched),
    ``first_capture(frontend)`` made once per process first."""
    with one_turn(bound=False):
        _warm_up(frontend, first_capture)
        if cancel_requested():
            raise Stopped()
        yield


@contextlib.contextmanager
def one_turn(bound: bool = True) -> Iterator[None]:
    """Hold the turn to run model code (again in the same thread: at once); while waiting, a
    thread whose work is no longer wanted (:func:`~fxstudio.core.process.guard.cancel_requested`)
    gives up with ``Stopped``.  A run (``bound``) may take no more memory than was available
    when it began (:func:`~fxstudio.core.process.budget.bounded`): past it, an allocation
    fails with an out-of-memory error instead of the kernel killing the process -- a run
    inside an open's turn too.  An open and a capture are not so bound (they are sized and
    watched instead, :mod:`fxstudio.core.model.sizing`: the bound counts address space,
    and a structure-only build leaves much of it mapped and unused)."""
    depth = getattr(_held, "depth", 0)
    if depth:  # this thread's own turn again
        tighter = bound and not _held.bound
        _held.depth, _held.bound = depth + 1, _held.bound or bound
        try:
            with budget.bounded() if tighter else contextlib.nullcontext():
                yield
        finally:
            _held.depth = depth
            if tighter:
                _held.bound = False
        return
    waited = 0.0
    while not _CAPTURING.acquire(timeout=0.05):
        waited += 0.05
        if cancel_requested():
            raise Stopped()
        if waited > WAIT_FOR_CAPTURE_S:
            raise CaptureError(
                f"Another model has been capturing for over {WAIT_FOR_CAPTURE_S:.0f} s (code "
                "that could not be stopped, or a very large model), and torch.fx traces one "
                "model at a time. Wait for it and open again, or restart fxstudio."
            )
    _held.depth, _held.bound = 1, bound
    try:
        with budget.bounded() if bound else contextlib.nullcontext():
            yield
    finally:
        _held.depth, _held.bound = 0, False
        _CAPTURING.release()


def _warm_up(frontend: str, first_capture: Callable[[str], None]) -> None:
    """Run ``first_capture(frontend)`` once per process and frontend, one thread at a time."""
    if frontend in _warm:
        return
    with _WARMING:
        if frontend not in _warm:
            first_capture(frontend)
            _warm.add(frontend)


@contextlib.contextmanager
def stoppable() -> Iterator[None]:
    """Let a thread whose work is no longer wanted (Cancel) stop inside library code too: a
    model built from a configuration (each parameter it registers) and ``torch.export``
    (each module it calls) raise :class:`~fxstudio.core.process.guard.Stopped` there --
    between two modules, where stopping leaves nothing half-done -- instead of running on
    for minutes in the background.  The hooks are global (torch has no other), but ask
    only the thread that set a cancel check; a module call anywhere pays a dictionary
    look-up while they are in place."""

    def check(*_: object) -> None:
        if cancel_requested():
            raise Stopped()

    on_call = register_module_forward_pre_hook(check)
    on_parameter = register_module_parameter_registration_hook(check)
    try:
        yield
    finally:
        on_call.remove()
        on_parameter.remove()
