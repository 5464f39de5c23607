"""Scale: the nested synthetic graph (stages of blocks of modules, four levels deep) at 10k,
20k and 50k nodes, and a LLaMA of 32 small layers captured by torch.export -- each size in a
fresh process (so its peak RSS is its own), each step against the plain torch (or graphviz)
step it wraps, measured in the same process: opening against ``symbolic_trace`` + ``ShapeProp``
(``torch.export.export`` for the LLaMA), the fully expanded layout against one ``dot`` run over
the flat graph (bounded by a timeout).  Slopes are stated as microseconds per node.

The window (offscreen) is measured in a process of its own too: opening the 50k graph until
its first picture is drawn, expanding one stage (a double-click's layout and items), and the
window's peak RSS -- against the same open headless (``open_document``) in that process.

    python tests/bench/bench_scale.py            # every size, one JSON line a measurement
    python tests/bench/bench_scale.py 10000      # one size, in this process
    python tests/bench/bench_scale.py window50000
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SIZES = (10000, 20000, 50000)
SYNTHETIC = ROOT / "tests" / "bench" / "synthetic.py"


def _seconds(fn, repeats: int = 1) -> float:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def one_size(size: str) -> list[dict]:
    import torch
    import torch.fx as fx
    from torch.fx.passes.shape_prop import ShapeProp

    from fxstudio.core.graph.request import OpenRequest
    from fxstudio.core.layout.groups import all_groups, top_level_groups
    from fxstudio.core.layout.placing import LayoutEngine
    from fxstudio.core.model.loading import load_model
    from fxstudio.core.process import collector
    from fxstudio.core.sessions.documents import open_document
    from tests.bench.bench_layout import plain_dot_seconds

    out = []
    repeats = 3 if size == "10000" else 1
    if size == "llama32":
        label, frontend = "LLaMA 32 layers (transformers, export)", "export"
        from tests.bench.synthetic import llama_32

        model = llama_32()
        ids = torch.randint(0, 128, (1, 16))
        base = _seconds(lambda: torch.export.export(model, (ids,)), repeats)
        base_what = "torch.export.export"
        request = OpenRequest(f"{SYNTHETIC}:llama_32", frontend, ("1x16:int64",))
    else:
        label = f"nested synthetic {size}"
        spec = f"{SYNTHETIC}:nested_{size}"
        request = OpenRequest(spec, "fx", ("2x8",))
        loaded = load_model(spec, ("2x8",))

        def baseline() -> None:
            gm = fx.symbolic_trace(loaded.module)
            ShapeProp(gm).propagate(*loaded.example_inputs)

        base = _seconds(baseline, repeats)
        base_what = "symbolic_trace + ShapeProp"
    opened = _seconds(lambda: open_document(request), repeats)
    doc = open_document(request)
    n = len(doc)
    common = {"bench": "scale", "model": label, "nodes": n, "groups": len(all_groups(doc))}
    out.append(
        {
            **common,
            "what": f"open (load, capture, shapes, document) vs {base_what}",
            "median_s": round(opened, 3),
            "baseline_s": round(base, 3),
            "ratio": round(opened / base, 2),
            "us_per_node": round(opened / n * 1e6, 1),
        }
    )

    def laid_out(engine: LayoutEngine, collapsed: set[str]):
        # as the window's layout worker runs it: no cycle collection scanning a big graph
        with collector.sparing(len(doc)):
            return engine.layout(doc, collapsed)

    first = _seconds(lambda: laid_out(LayoutEngine(), top_level_groups(doc)), 3)
    expanded = laid_out(LayoutEngine(), set())
    full = _seconds(lambda: laid_out(LayoutEngine(), set()), 3)
    dot = plain_dot_seconds(doc)
    out.append(
        {**common, "what": "first picture (top level collapsed)", "median_s": round(first, 3)}
    )
    out.append(
        {
            **common,
            "what": "fully expanded layout, cold cache, vs one dot run over the flat graph",
            "median_s": round(full, 3),
            "dot_runs": expanded.dot_runs,
            "us_per_node": round(full / n * 1e6, 1),
            "flat_dot_s": None if dot in (None, float("inf")) else round(dot, 3),
            "flat_dot_timed_out": dot == float("inf"),
        }
    )
    engine = LayoutEngine()
    top = top_level_groups(doc)
    laid_out(engine, top)
    groups = {g.path: g for g in doc.module_tree().walk()}
    biggest = max(top, key=lambda p: len(groups[p].all_nodes()))
    expand = _seconds(lambda: laid_out(engine, top - {biggest}), 1)
    out.append(
        {
            **common,
            "what": f"expand one top-level module ({biggest}) after the first picture",
            "median_s": round(expand, 3),
        }
    )
    out.append({**common, "what": "peak RSS of this process (open + layouts)", "rss_mb": _rss_mb()})
    return out


def in_the_window(size: str) -> list[dict]:
    """The window's open of the nested graph (until its first picture is on the canvas), an
    expand of one stage, and the window's peak RSS, against ``open_document`` here."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from fxstudio.core.graph.request import OpenRequest
    from fxstudio.core.layout.groups import top_level_groups
    from fxstudio.core.sessions.documents import open_document
    from fxstudio.qt.window.main_window import MainWindow

    request = OpenRequest(f"{SYNTHETIC}:nested_{size}", "fx", ("2x8",))
    app = QApplication.instance() or QApplication([])
    window = MainWindow(interactive=False, autosave_s=0)
    window.resize(1600, 1000)
    window.show()

    def until_drawn(start) -> float:
        loop = QEventLoop()
        window.layoutShown.connect(loop.quit)
        t0 = time.perf_counter()
        start()
        loop.exec()
        window.layoutShown.disconnect(loop.quit)
        return time.perf_counter() - t0

    opened = until_drawn(lambda: window.session.open(request))
    # A user looks at the picture before double-clicking: the old scene's teardown and the
    # minimap, which the open leaves to later turns, are done by then.
    pause = QEventLoop()
    QTimer.singleShot(1500, pause.quit)
    pause.exec()
    doc = window.document
    stage = sorted(top_level_groups(doc))[0]
    stages = window.canvas_controller.layout.folds.get(stage)
    expand = until_drawn(lambda: window.canvas_controller.toggle_group(stage))
    rss = _rss_mb()
    app.processEvents()
    headless = _seconds(lambda: open_document(request))
    common = {"bench": "scale", "model": f"nested synthetic {size}", "nodes": len(doc)}
    window.close()
    return [
        {
            **common,
            "what": "window: open until the first picture is drawn vs open_document",
            "median_s": round(opened, 3),
            "baseline_s": round(headless, 3),
            "ratio": round(opened / headless, 2),
            "folded": len(stages or ()),
        },
        {
            **common,
            "what": f"window: expand {stage} (layout and items drawn)",
            "median_s": round(expand, 3),
        },
        {**common, "what": "window: peak RSS after open and expand", "rss_mb": rss},
    ]


#: The window's open and expand are each measured once a process; this many processes.
WINDOW_RUNS = 3


def bench_scale(emit, timed=None) -> None:
    for size in (*map(str, SIZES), "llama32", f"window{SIZES[-1]}"):
        runs = WINDOW_RUNS if size.startswith("window") else 1
        made: list[list[dict]] = []
        for _ in range(runs):
            done = subprocess.run(
                [sys.executable, __file__, size], capture_output=True, text=True, timeout=1800
            )
            lines = [json.loads(line) for line in done.stdout.splitlines() if line[:1] == "{"]
            if done.returncode != 0 or not lines:
                emit(bench="scale", model=size, skipped=(done.stderr.strip() or "no output")[-300:])
                break
            made.append(lines)
        for records in zip(*made, strict=True):  # each measurement: its median over the runs
            emit(**_median_of(list(records)))


def _median_of(records: list[dict]) -> dict:
    out = dict(records[0])
    for key in ("median_s", "baseline_s", "rss_mb"):
        if key in out:
            out[key] = round(statistics.median(r[key] for r in records), 3)
    if len(records) > 1:
        out["runs"] = len(records)
        if "baseline_s" in out:
            out["ratio"] = round(out["median_s"] / out["baseline_s"], 2)
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1:
        arg = sys.argv[1]
        made = in_the_window(arg[len("window") :]) if arg.startswith("window") else one_size(arg)
        for record in made:
            print(json.dumps(record), flush=True)
    else:
        bench_scale(lambda **r: print(json.dumps(r), flush=True))
