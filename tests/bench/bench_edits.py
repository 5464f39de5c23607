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
