"""Edit latency: one-node edits on 1,000 and 10,000-node graphs, with their undo, against the
plain torch.fx costs an edit has to pay or work around (recompile, lint, symbolic_trace),
measured in the same run."""

from __future__ import annotations

import statistics
import time

import torch.fx as fx

from fxstudio.core import edits
from fxstudio.core.edits import Ref, catchup
from fxstudio.core.model.loading import load_model
from fxstudio.core.sessions.documents import open_document
from tests.bench.bench_layout import ROOT
from tests.bench.stalls import StallMeter

SYNTHETIC = ROOT / "tests" / "bench" / "synthetic.py"


def bench_edits(emit, timed) -> None:
    for nodes in (1000, 10000):
        spec = f"{SYNTHETIC}:deep_{nodes}"
        doc = open_document(spec)
        gm = doc.graph_module
        module = load_model(spec).module
        common = {"bench": "edits", "nodes": len(doc)}
        repeats = 5
        base = {
            "recompile": timed(gm.recompile, repeats),
            "lint": timed(gm.graph.lint, repeats),
            "symbolic_trace": timed(lambda m=module: fx.symbolic_trace(m), 3),
        }
        for what, runs in base.items():
            emit(
                **common,
                what=f"baseline: torch.fx {what}",
                median_s=round(statistics.median(runs), 4),
            )
        middle = doc.node_names()[len(doc) // 2]
        user = doc.users(middle)[0]
        cases = {
            "change target (relu -> gelu)": lambda d=doc: edits.set_target(
                d, _first(d, "relu"), "torch.nn.functional.gelu"
            ),
            "insert a node": lambda d=doc, m=middle: edits.insert(
                d, "call_function", "torch.sigmoid", [Ref(m)]
            ),
            "splice onto an edge": lambda d=doc, m=middle, u=user: edits.splice(
                d, m, u, "call_function", "torch.tanh"
            ),
            "rename": lambda d=doc, m=middle: edits.rename(d, m, "renamed_node"),
        }
        recompile = statistics.median(base["recompile"])
        for what, make in cases.items():
            do, undo, redo = [], [], []
            for _ in range(repeats):
                t0 = time.perf_counter()
                edit = make()
                t1 = time.perf_counter()
                edit.undo()
                t2 = time.perf_counter()
                edit.redo()
                t3 = time.perf_counter()
                edit.undo()
                do.append(t1 - t0)
                undo.append(t2 - t1)
                redo.append(t3 - t2)
            emit(
                **common,
                what=f"edit: {what} (checks, recompile, shapes)",
                do_s=round(statistics.median(do), 4),
                undo_s=round(statistics.median(undo), 4),
                redo_s=round(statistics.median(redo), 4),
                do_vs_recompile=round(statistics.median(do) / recompile, 2),
            )


def _first(doc, prefix: str) -> str:
    return next(n for n in doc.node_names() if n.startswith(prefix))


def bench_window_edits(emit) -> None:
    """The same edit made in the window at 10,000 nodes: how long each view takes to show it
    (the core edit, then canvas, table, code view and inspector, all on the GUI thread)."""
    import os
    import time

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from fxstudio.core.graph.catalogue import catalogue
    from fxstudio.core.graph.request import OpenRequest
    from fxstudio.qt.window.main_window import MainWindow

    QApplication.instance() or QApplication([])
    window = MainWindow(interactive=False)
    window.resize(1600, 1000)
    window.show()
    loop = QEventLoop()
    window.layoutShown.connect(lambda *_: loop.quit())
    window.session.open(OpenRequest(str(SYNTHETIC) + ":deep_10000"))
    loop.exec()
    spent: dict[str, list[float]] = {}

    def timed_view(name, fn):
        def wrapper(event):
            t0 = time.perf_counter()
            fn(event)
            spent.setdefault(name, []).append(time.perf_counter() - t0)

        return wrapper

    window.canvas_controller.on_document_changed = timed_view(
        "canvas", window.canvas_controller.on_document_changed
    )
    window.panels["table"].model.on_document_changed = timed_view(
        "table", window.panels["table"].model.on_document_changed
    )
    window.panels["code"].on_change = timed_view("code view", window.panels["code"].on_change)
    window.panels["inspector"].on_change = timed_view(
        "inspector", window.panels["inspector"].on_change
    )
    entry = next(e for e in catalogue(window.document) if e.text == "torch.sigmoid")
    node = window.document.node_names()[len(window.document) // 2]
    meter = StallMeter()  # the event loop's longest wait from an edit to caught up
    shown, caught, undone, stalls = [], [], [], []
    done = QEventLoop()
    window.session.caughtUp.connect(done.quit)
    for make in (lambda: window.edits.insert(entry), window.session.undo_stack.undo):  # warm-up
        window.selection.select([node])
        make()
        done.exec()
    for _ in range(5):
        for into, make in (
            (shown, lambda: window.edits.insert(entry)),
            (undone, window.session.undo_stack.undo),
        ):
            window.selection.select([node])
            meter.start()
            t0 = time.perf_counter()
            make()  # returns once the canvas, table and inspector show it
            t1 = time.perf_counter()
            done.exec()  # code, rows and shapes from the worker
            t2 = time.perf_counter()
            meter.stop()
            into.append(t1 - t0)
            caught.append(t2 - t0)
            stalls.append(meter.longest)
    # Baseline, same run: the same catch-up done on the GUI thread.
    sync = []
    runner = window.session.catch_up
    window.session.catch_up = _Idle()
    for _ in range(3):
        window.selection.select([node])
        window.edits.insert(entry)
        t0 = time.perf_counter()
        catchup.catch_up(window.document)
        sync.append(time.perf_counter() - t0)
        window.session.undo_stack.undo()
        catchup.catch_up(window.document)
    window.session.catch_up = runner
    emit(
        bench="edits",
        nodes=len(window.document),
        what="window: insert a node and undo it; shown / caught up / longest stall",
        shown_s=round(statistics.median(shown), 4),
        undo_shown_s=round(statistics.median(undone), 4),
        caught_up_s=round(statistics.median(caught), 4),
        longest_stall_ms_median=round(statistics.median(stalls) * 1000, 1),
        longest_stall_ms_max=round(max(stalls) * 1000, 1),
        stalls_ms=[round(s * 1000) for s in stalls],
        baseline_catch_up_on_gui_thread_s=round(statistics.median(sync), 4),
        **{f"{k}_s": round(statistics.median(v), 4) for k, v in spent.items()},
    )
    window.close()


class _Idle:
    """Stands in for the window's catch-up runner while the baseline is measured."""

    def schedule(self) -> None:
        pass

    def set_document(self, _doc) -> None:
        pass
