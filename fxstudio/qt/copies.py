"""Work on a copy of the open document in a worker, and take its result only if the document
is still as it was read: the window's one way to run :mod:`fxstudio.core.edits.snapshots`'
idiom.

:func:`run_on_copy` reads the document on the GUI thread (:func:`~fxstudio.core.graph.
snapshots.snapshot`: about a microsecond a node), runs ``work(copy)`` in a worker
(:mod:`fxstudio.qt.workers`) -- the work makes its own document of the snapshot where it
needs one (:meth:`Copy.detached`), and takes the model code's turn
(:func:`fxstudio.core.process.modelcode.one_turn`) itself where it runs the model -- and
back on the GUI thread hands the result to one of three callbacks:

- ``then(result)``: the same document is open, at the version read;
- ``stale(result)``: the same document, changed meanwhile (an edit, shapes caught up);
  ``None``: the result is dropped;
- ``gone(result)``: another document (or none) is open now; ``None``: dropped.

A failure goes to ``failed(exc)`` whatever the document did (:meth:`OnCopy.current` tells
the handler whether it still matters).  A cancelled job hands nothing back.

"As read" is the document's version by default: any change since, shapes worked out again
included, makes the result stale.  Given ``states`` (the session: its ``graph_state`` and
``is_current``, :mod:`fxstudio.qt.window.graph_state`) it is the graph instead: a result stays
current while the graph is the one read (an edit undone makes it current again).  ``copy=False``
reads no snapshot: for work that carries what it needs (the Step dock's stepper, made on an
earlier copy).

Example::

    job = run_on_copy(
        self, lambda copy: profile(copy.detached(), options, stage=copy.say),
        self.shown, failed=self.failed, stale=self.shown_stale, parent=self,
    )
    job.task.finished.connect(self.idle)   # (its signals come in later turns)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from PySide6.QtCore import QObject

from fxstudio.core.edits.snapshots import Snapshot, detached, snapshot
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.workers import Task

R = TypeVar("R")


class Opened(Protocol):
    """Whoever says which document is open now (a session, a panel)."""

    @property
    def document(self) -> GraphDocument | None: ...


class States(Protocol):
    """Whoever says which graph the document holds (the session, over its
    :class:`~fxstudio.qt.window.graph_state.GraphStates`)."""

    def graph_state(self) -> object: ...

    def is_current(self, state: object) -> bool: ...


@dataclass(frozen=True)
class Copy:
    """What the worker is given: the snapshot (none with ``copy=False``), and a way to say
    what it does now (the task's ``stage``).  Never the live document."""

    read: Snapshot | None
    say: Callable[[str], None]

    @property
    def snapshot(self) -> Snapshot:
        """The document as read."""
        assert self.read is not None, "run with copy=False: no snapshot was read"
        return self.read

    def detached(self) -> GraphDocument:
        """A document of its own over the snapshot (:func:`~fxstudio.core.edits.snapshots.
        detached`): made in the worker."""
        return detached(self.snapshot)


@dataclass(frozen=True)
class Reading:
    """How :func:`run_on_copy` reads the document: ``held`` (the snapshot keeps the nodes'
    ``meta``), ``copy`` (a snapshot at all), ``modules`` (the snapshot reads what the graph's
    targets name), ``states`` (staleness by graph state)."""

    held: bool = False
    copy: bool = True
    modules: bool = True
    states: States | None = None


class OnCopy(Generic[R]):
    """One run of :func:`run_on_copy`: its :attr:`task` (for ``stage``, ``progress``,
    ``finished``), the document read and, once read, its :attr:`version` and
    :attr:`snapshot`."""

    def __init__(
        self,
        opened: Opened,
        document: GraphDocument,
        work: Callable[[Copy], R],
        then: Callable[[R], None],
        failed: Callable[[BaseException], None],
        stale: Callable[[R], None] | None,
        gone: Callable[[R], None] | None,
        reading: Reading,
        kind: type[Task],
        parent: QObject | None,
    ) -> None:
        self.opened = opened
        self.document = document
        self.reading = reading
        self._read = False
        self._version = -1
        self._state: object = None
        self._snapshot: Snapshot | None = None
        self._work = work
        self._then, self._stale, self._gone, self._failed = then, stale, gone, failed
        self.task: Task = kind(self._run, parent)
        self.task.succeeded.connect(self._succeeded)
        self.task.failed.connect(failed)

    @property
    def snapshot(self) -> Snapshot:
        """The document as read (once :meth:`read`)."""
        assert self._snapshot is not None, "not read yet"
        return self._snapshot

    @property
    def version(self) -> int:
        """The document's version when read (once :meth:`read`)."""
        assert self._read, "not read yet"
        return self._version

    @property
    def started(self) -> bool:
        """Read, and its worker started (not when reading failed, nor before a ``later``
        read)."""
        return self._read

    def read(self) -> None:
        """Read the document (GUI thread) and start the worker; a failure to read is told
        as the work's own.  Nothing once cancelled."""
        if self.task.cancelled:
            return
        states = self.reading.states
        try:
            if self.reading.copy:
                reading = self.reading
                self._snapshot = snapshot(self.document, reading.held, reading.modules)
            self._version = self.document.version
            self._state = states.graph_state() if states is not None else None
        except Exception as exc:  # noqa: BLE001 -- told as the work's own failure
            self._failed(exc)
            return
        self._read = True
        self.task.start()

    def current(self) -> bool:
        """The document read is still open, at the version read (with ``states``: holding
        the graph read)."""
        if not self._read or self.opened.document is not self.document:
            return False
        states = self.reading.states
        if states is not None:
            return states.is_current(self._state)
        return self.document.version == self._version

    def cancel(self) -> None:
        """Hand nothing back (the work itself runs on to its end)."""
        self.task.cancel()

    def _run(self) -> R:  # the worker thread
        return self._work(Copy(self._snapshot, self.task.say))

    def _succeeded(self, result: R) -> None:  # the GUI thread
        if self.current():
            self._then(result)
        elif self.opened.document is self.document:
            if self._stale is not None:
                self._stale(result)
        elif self._gone is not None:
            self._gone(result)


def run_on_copy(
    opened: Opened,
    work: Callable[[Copy], R],
    then: Callable[[R], None],
    *,
    failed: Callable[[BaseException], None],
    stale: Callable[[R], None] | None = None,
    gone: Callable[[R], None] | None = None,
    held: bool = False,
    copy: bool = True,
    modules: bool = True,
    states: States | None = None,
    kind: type[Task] = Task,
    later: Callable[[Callable[[], None]], object] | None = None,
    parent: QObject | None = None,
) -> OnCopy[R]:
    """Read ``opened.document`` now (or, given ``later`` -- ``session.soon`` -- in a turn of
    its own, so a click on a big graph shows first that it began), run ``work(copy)`` in a
    ``kind`` task (:class:`~fxstudio.qt.workers.UserCodeTask` for the model's code) under
    ``parent``, and hand the result back as the module says.  ``held``: the snapshot keeps
    the nodes' ``meta`` as read (a baseline kept while the document goes on); ``copy=False``:
    no snapshot (the work carries what it needs); ``modules=False``: a snapshot of the graph
    alone, not of the submodules and weights it names (views and shapes need no more; a
    :func:`~fxstudio.core.edits.snapshots.detached` copy does); ``states``: the result is
    current while the graph is the one read, not only the version (the module's docstring)."""
    document = opened.document
    assert document is not None, "no document to copy"
    reading = Reading(held=held, copy=copy, modules=modules, states=states)
    job = OnCopy(opened, document, work, then, failed, stale, gone, reading, kind, parent)
    if later is None:
        job.read()
    else:
        later(job.read)
    return job
