"""Work on a copy of the open document in a worker, and take its result only if the document
is still as it was read: the window's one way to run :mod:`fxstudio.core.graph.snapshots`'
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

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.snapshots import Snapshot, detached, snapshot
from fxstudio.qt.workers import Task

R = TypeVar("R")


class Opened(Protocol):
    """Whoever says which document is open now (a session, a panel)."""

    @property
    def document(self) -> GraphDocument | None: ...


@dataclass(frozen=True)
class Copy:
    """What the worker is given: the snapshot, and a way to say what it does now (the
    task's ``stage``).  Never the live document."""

    snapshot: Snapshot
    say: Callable[[str], None]

    def detached(self) -> GraphDocument:
        """A document of its own over the snapshot (:func:`~fxstudio.core.graph.snapshots.
        detached`): made in the worker."""
        return detached(self.snapshot)


class OnCopy(Generic[R]):
    """One run of :func:`run_on_copy`: its :attr:`task` (for ``stage``, ``progress``,
    ``finished``), the document read and, once read, its :attr:`snapshot`."""

    def __init__(
        self,
        opened: Opened,
        document: GraphDocument,
        work: Callable[[Copy], R],
        then: Callable[[R], None],
        failed: Callable[[BaseException], None],
        stale: Callable[[R], None] | None,
        gone: Callable[[R], None] | None,
        held: bool,
        kind: type[Task],
        parent: QObject | None,
    ) -> None:
        self.opened = opened
        self.document = document
        self.held = held
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
        return self.snapshot.version

    def read(self) -> None:
        """Read the document (GUI thread) and start the worker; a failure to read is told
        as the work's own.  Nothing once cancelled."""
        if self.task.cancelled:
            return
        try:
            self._snapshot = snapshot(self.document, held=self.held)
        except Exception as exc:  # noqa: BLE001 -- told as the work's own failure
            self._failed(exc)
            return
        self.task.start()

    def current(self) -> bool:
        """The document read is still open, at the version read."""
        snap = self._snapshot
        return (
            snap is not None
            and self.opened.document is self.document
            and self.document.version == snap.version
        )

    def cancel(self) -> None:
        """Hand nothing back (the work itself runs on to its end)."""
        self.task.cancel()

    def _run(self) -> R:  # the worker thread
        return self._work(Copy(self.snapshot, self.task.say))

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
    kind: type[Task] = Task,
    later: Callable[[Callable[[], None]], object] | None = None,
    parent: QObject | None = None,
) -> OnCopy[R]:
    """Read ``opened.document`` now (or, given ``later`` -- ``session.soon`` -- in a turn of
    its own, so a click on a big graph shows first that it began), run ``work(copy)`` in a
    ``kind`` task (:class:`~fxstudio.qt.workers.UserCodeTask` for the model's code) under
    ``parent``, and hand the result back as the module says.  ``held``: the snapshot keeps
    the nodes' ``meta`` as read (a baseline kept while the document goes on)."""
    document = opened.document
    assert document is not None, "no document to copy"
    job = OnCopy(opened, document, work, then, failed, stale, gone, held, kind, parent)
    if later is None:
        job.read()
    else:
        later(job.read)
    return job
