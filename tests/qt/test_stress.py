"""A quick user: opens started before the previous one finished (each supersedes the one
before), with cancels between and the collector run on the GUI thread meanwhile -- the
window crashed so once (the garbage collector on the GUI thread while an open's thread ran
the model's code).  No crash, the last open wins, no worker left running."""

import gc

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.sessions.documents import open_document
from fxstudio.qt import workers

OPENS = 50

#: Slow to import (Python lines: stoppable anywhere) and to trace (a few hundred nodes).
MODEL = """
import torch
from torch import nn

ID = {i}
_warm = 0
for _k in range({spin}):
    _warm += _k % 7


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(8, 8) for _ in range({depth}))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x)) + x * 0.5
        return x


def example_inputs():
    return (torch.randn(2, 8),)
"""


def test_fifty_superseding_opens_with_cancels_and_collections(qtbot, window, tmp_path):
    paths = []
    for i in range(OPENS):
        path = tmp_path / f"model_{i}.py"  # each a file of its own: nothing cached
        path.write_text(MODEL.format(i=i, spin=20_000 + 3_000 * (i % 5), depth=20 + i % 7))
        paths.append(path)
    session = window.session
    loaded: list[str] = []
    failed: list[BaseException] = []
    session.loaded.connect(lambda doc: loaded.append(doc.request.spec))
    session.loadFailed.connect(failed.append)
    before = workers.running()
    for i, path in enumerate(paths):
        session.open(OpenRequest(f"{path}:Net"))
        task = session.open_task
        # let it get into the model's code (importing or tracing it), then collect there
        qtbot.waitUntil(lambda t=task: t.where() is not None or not t.running(), timeout=60000)
        gc.collect()
        if i % 9 == 4 and i < OPENS - 1:
            session.cancel_open()
            gc.collect()
    last = f"{paths[-1]}:Net"
    qtbot.waitUntil(lambda: session.open_task is None, timeout=120000)  # loaded, or failed
    assert failed == [], "".join(__import__("traceback").format_exception(failed[0].__cause__))
    assert window.document is not None and window.document.request.spec == last
    assert loaded[-1] == last and all(spec != last for spec in loaded[:-1])
    qtbot.waitUntil(lambda: workers.running() == before, timeout=60000)  # stopped, ended
    gc.collect()
    assert window.document.node_names() == open_document(last).node_names()  # all of it


def test_garbage_a_worker_makes_is_collected_on_the_gui_thread(qtbot, window):
    """A collection runs in whichever thread allocates: a worker's (torch.export makes
    millions of objects) would finalize the cycles holding Qt objects there, off the GUI
    thread.  While the window is up, cycles are finalized on the GUI thread only."""
    import threading
    import weakref

    where: list[str] = []

    class Holder:
        pass

    def work():
        for _ in range(50):
            holder = Holder()
            holder.me = holder  # a cycle: only the collector frees it
            weakref.finalize(holder, lambda: where.append(threading.current_thread().name))
            del holder
            alive = [[] for _ in range(5 * gc.get_threshold()[0])]  # would set off collections
            del alive

    thread = threading.Thread(target=work, name="worker")
    thread.start()
    thread.join()
    qtbot.waitUntil(lambda: len(where) == 50, timeout=10000)
    assert set(where) == {"MainThread"}
