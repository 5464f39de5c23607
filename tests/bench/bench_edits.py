"""Edit latency: one-node edits on 1,000 and 10,000-node graphs, with their undo, against the
plain torch.fx costs an edit has to pay or work around (recompile, lint, symbolic_trace),
measured in the same run."""

from __future__ import annotations

import statistics
import time

import torch.fx as fx

from fxstudio.core import edits
from fxstudio.core.edits import Ref
from fxstudio.core.loading import load_model
from fxstudio.core.session import open_document
from tests.bench.bench_layout import ROOT

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

    from fxstudio.core.catalogue import catalogue
    from fxstudio.core.session import OpenRequest
    from fxstudio.qt.main_window import MainWindow

    QApplication.instance() or QApplication([])
    window = MainWindow(interactive=False)
    window.resize(1600, 1000)
    window.show()
    loop = QEventLoop()
    window.layoutShown.connect(lambda *_: loop.quit())
    window.open_model(OpenRequest(str(SYNTHETIC) + ":deep_10000"))
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
    window.table_model.on_document_changed = timed_view(
        "table", window.table_model.on_document_changed
    )
    window.code.on_document_changed = timed_view("code view", window.code.on_document_changed)
    window.inspector.on_document_changed = timed_view(
        "inspector", window.inspector.on_document_changed
    )
    entry = next(e for e in catalogue(window.document) if e.text == "torch.sigmoid")
    node = window.document.node_names()[len(window.document) // 2]
    shown, caught, undone = [], [], []
    done = QEventLoop()
    window.caughtUp.connect(done.quit)
    for _ in range(5):
        window.selection.select([node])
        t0 = time.perf_counter()
        window.edits.insert(entry)  # returns once the canvas and inspector show it
        t1 = time.perf_counter()
        done.exec()  # recompile, shapes, table and code view
        t2 = time.perf_counter()
        window.undo_stack.undo()
        t3 = time.perf_counter()
        done.exec()
        shown.append(t1 - t0)
        caught.append(t2 - t0)
        undone.append(t3 - t2)
    emit(
        bench="edits",
        nodes=len(window.document),
        what="window: insert a node; canvas + inspector show it / everything caught up",
        shown_s=round(statistics.median(shown), 4),
        caught_up_s=round(statistics.median(caught), 4),
        undo_shown_s=round(statistics.median(undone), 4),
        **{f"{k}_s": round(statistics.median(v), 4) for k, v in spent.items()},
    )
    window.close()
