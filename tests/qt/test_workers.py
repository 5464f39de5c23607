"""Workers: what they deliver arrives on the GUI thread, a cancelled one delivers nothing,
and whoever started one may go while its thread still runs (a window closed mid-layout):
the thread finishes into nothing.  (A ``QThread`` deleted while running aborts the process:
the suite crashed so, a test's window deleted during the next test while its layout ran.)"""

import gc
import threading

from PySide6.QtCore import QCoreApplication, QObject, QThread

from fxstudio.qt import workers
from fxstudio.qt.workers import Task, UserCodeTask


def test_results_progress_and_stages_arrive_on_the_gui_thread(qtbot):
    seen: list = []
    gui = QThread.currentThread()

    def work():
        task.say("halfway")
        task.report(1, 2)
        return 42

    owner = QObject()
    task = Task(work, owner)
    task.stage.connect(lambda text: seen.append(("stage", text, QThread.currentThread() is gui)))
    task.progress.connect(lambda d, t: seen.append(("progress", d, t)))
    with qtbot.waitSignal(task.finished, timeout=10000):
        with qtbot.waitSignal(task.succeeded, timeout=10000) as got:
            task.start()
    assert got.args == [42]
    assert ("stage", "halfway", True) in seen and ("progress", 1, 2) in seen
    assert not task.running()


def test_a_cancelled_task_delivers_nothing(qtbot):
    go = threading.Event()
    delivered: list = []
    owner = QObject()
    task = Task(lambda: go.wait(10) and "late", owner)
    task.succeeded.connect(delivered.append)
    task.failed.connect(delivered.append)
    task.start()
    task.cancel()
    with qtbot.waitSignal(task.finished, timeout=10000):
        go.set()
    assert delivered == []


def test_failures_are_delivered_as_the_exception(qtbot):
    def work():
        raise ValueError("no such shape")

    owner = QObject()
    task = Task(work, owner)
    with qtbot.waitSignal(task.failed, timeout=10000) as got:
        task.start()
    assert isinstance(got.args[0], ValueError) and "no such shape" in str(got.args[0])


def test_the_owner_may_go_while_the_thread_runs(qtbot):
    """The owner and its task are deleted mid-work, the collector runs meanwhile; the
    thread ends on its own and nothing is delivered to what is gone."""
    import shiboken6

    before = workers.running()
    go, ended = threading.Event(), threading.Event()

    def work():
        go.wait(10)
        task.report(1, 1)  # into a task whose Qt side is gone: plain attributes only
        ended.set()
        return "done"

    owner = QObject()
    task = Task(work, owner)
    delivered: list = []
    task.succeeded.connect(delivered.append)
    task.start()
    assert workers.running() == before + 1
    shiboken6.delete(owner)  # the window closed: its children, the task among them, go
    gc.collect()
    assert not shiboken6.isValid(task) and workers.running() == before
    go.set()
    assert ended.wait(10)
    assert task.wait(10000)
    QCoreApplication.processEvents()  # (what is pending would be delivered now)
    assert delivered == []


def test_user_code_is_stopped_at_its_next_line(qtbot):
    started = threading.Event()

    def runaway():
        started.set()
        while True:
            pass

    owner = QObject()
    task = UserCodeTask(runaway, owner)
    delivered: list = []
    task.succeeded.connect(delivered.append)
    task.failed.connect(delivered.append)
    task.start()
    assert started.wait(10)
    with qtbot.waitSignal(task.finished, timeout=10000):
        task.stop()
    assert delivered == [] and not task.running()
