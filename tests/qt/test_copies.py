"""run_on_copy: the worker works on a copy of the document read on the GUI thread; its result
is taken only while the document is still as read, handed to ``stale`` (or dropped) once it
changed, to ``gone`` (or dropped) once another is open; a failure is told.  Given ``states``,
"as read" is the graph, not the version; ``copy=False`` reads no snapshot."""

import threading
from dataclasses import dataclass

import pytest
from PySide6.QtCore import QObject

from fxstudio.core import edits
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.sessions.documents import open_document
from fxstudio.qt.copies import Copy, run_on_copy


@dataclass
class Opened:
    document: GraphDocument | None


@pytest.fixture
def opened():
    return Opened(open_document("examples:negrelu"))


def _targets(graph) -> list[str]:
    return [getattr(n.target, "__name__", str(n.target)) for n in graph.nodes]


def _names(copy: Copy) -> list[str]:  # the targets of the copy's nodes
    return _targets(copy.detached().graph)


def test_the_result_is_taken_while_the_document_is_as_read(qtbot, opened):
    taken, other = [], []
    owner = QObject()
    job = run_on_copy(
        opened, _names, taken.append, stale=other.append, failed=other.append, parent=owner
    )
    qtbot.waitUntil(lambda: bool(taken or other), timeout=10000)
    assert other == [] and taken == [_targets(opened.document.graph)]
    assert job.current() and job.version == opened.document.version


def test_a_result_of_a_document_changed_meanwhile_is_stale_or_dropped(qtbot, opened):
    go = threading.Event()
    taken, stale, failed = [], [], []
    owner = QObject()

    def work(copy: Copy) -> list[str]:
        go.wait(10)
        return _names(copy)

    job = run_on_copy(
        opened, work, taken.append, stale=stale.append, failed=failed.append, parent=owner
    )
    dropped = run_on_copy(opened, work, taken.append, failed=failed.append, parent=owner)
    edits.set_target(opened.document, "relu", "torch.tanh")  # while the workers work
    with qtbot.waitSignal(dropped.task.finished, timeout=10000):
        go.set()
    qtbot.waitUntil(lambda: bool(stale), timeout=10000)
    assert taken == [] and failed == [] and not job.current()
    assert "relu" in stale[0] and "tanh" not in stale[0]  # of the graph as it was read


def test_a_result_of_a_document_no_longer_open_goes_to_gone(qtbot, opened):
    go = threading.Event()
    seen = []
    owner = QObject()
    job = run_on_copy(
        opened,
        lambda copy: go.wait(10) and "done",
        lambda r: seen.append(("then", r)),
        stale=lambda r: seen.append(("stale", r)),
        gone=lambda r: seen.append(("gone", r)),
        failed=seen.append,
        parent=owner,
    )
    opened.document = open_document("examples:negrelu")
    with qtbot.waitSignal(job.task.finished, timeout=10000):
        go.set()
    assert seen == [("gone", "done")]


def test_a_failure_is_told(qtbot, opened):
    taken = []
    owner = QObject()

    def work(copy: Copy) -> None:
        raise ValueError("no such shape")

    with qtbot.waitSignal(
        run_on_copy(opened, work, taken.append, failed=lambda exc: None, parent=owner).task.failed,
        timeout=10000,
    ) as got:
        pass
    assert isinstance(got.args[0], ValueError) and taken == []


def test_read_later_reads_the_document_as_it_is_then(qtbot, opened):
    pending, taken = [], []
    owner = QObject()
    job = run_on_copy(
        opened, _names, taken.append, failed=taken.append, later=pending.append, parent=owner
    )
    assert not job.task.running()  # nothing read, nothing started
    edits.set_target(opened.document, "relu", "torch.tanh")  # before the read: taken
    pending.pop()()
    qtbot.waitUntil(lambda: bool(taken), timeout=10000)
    assert "tanh" in taken[0] and job.current()


class States:
    """A session's graph states, by hand: ``graph`` says which graph the document holds."""

    def __init__(self) -> None:
        self.graph = 0

    def graph_state(self) -> object:
        return self.graph

    def is_current(self, state: object) -> bool:
        return state == self.graph


def test_with_states_the_graph_read_is_current_whatever_the_version(qtbot, opened):
    """Given ``states``, a result is current while the graph is the one read (an edit
    undone: the document's version moved on, the graph is the same) and stale once not."""
    go = threading.Event()
    seen = []
    owner = QObject()
    states = States()

    def start():
        return run_on_copy(
            opened,
            lambda copy: go.wait(10) and _names(copy),
            lambda r: seen.append("then"),
            stale=lambda r: seen.append("stale"),
            failed=seen.append,
            states=states,
            parent=owner,
        )

    job = start()
    edits.set_target(opened.document, "relu", "torch.tanh")  # and back: the same graph
    edits.set_target(opened.document, "relu", "torch.relu")
    assert opened.document.version != job.version
    with qtbot.waitSignal(job.task.finished, timeout=10000):
        go.set()
    assert seen == ["then"] and job.current()
    go.clear()
    job = start()
    states.graph += 1  # another graph, at the same version
    assert opened.document.version == job.version
    with qtbot.waitSignal(job.task.finished, timeout=10000):
        go.set()
    assert seen == ["then", "stale"] and not job.current()


def test_copy_false_reads_no_snapshot(qtbot, opened):
    """``copy=False``: the work gets no snapshot (it carries what it needs); the result is
    still judged against the document as read."""
    taken, failed = [], []
    owner = QObject()
    job = run_on_copy(
        opened,
        lambda copy: (copy.read, copy.say("working")),
        taken.append,
        failed=failed.append,
        copy=False,
        parent=owner,
    )
    assert job.started
    qtbot.waitUntil(lambda: bool(taken or failed), timeout=10000)
    assert failed == [] and taken == [(None, None)]
    assert job.current() and job.version == opened.document.version
    with pytest.raises(AssertionError):
        job.snapshot  # noqa: B018 -- nothing was read
