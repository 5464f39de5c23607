"""Render benchmark (JSON lines): ``fxstudio render``'s SVG of the 48-layer GPT-2
(transformers from its config, random weights, export frontend) against its layout measured
in the same run -- the layout as the canvas makes it (graphviz by module, what to draw of
it) is the baseline; the target: the SVG within 2 s beyond it.  As the graph opens (top-level
modules collapsed, the 48 blocks one ×48 box) and every module expanded, the latter with a
memory heat; then Qt's PDF and PNG of the expanded SVG, for scale.

    python tests/bench/bench_render.py            # (make bench runs it: run.py render)
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fxstudio.core.flows.layout import canvas_layout  # noqa: E402
from fxstudio.core.flows.memory import MemoryRequest, memory_flow  # noqa: E402
from fxstudio.core.graph.request import OpenRequest  # noqa: E402
from fxstudio.core.layout.placing import LayoutEngine  # noqa: E402
from fxstudio.core.sessions.documents import open_document  # noqa: E402
from fxstudio.core.share.heats import memory_heat  # noqa: E402
from fxstudio.core.share.palette import METRICS  # noqa: E402
from fxstudio.core.share.picturelayout import collapsed_groups  # noqa: E402
from fxstudio.core.share.svg import drawing_svg  # noqa: E402

SPEC = ("tests/models/hf_models.py:gpt2_48", "export")
TARGET_S = 2.0


def _timed(fn, repeats: int) -> list[float]:
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return runs


def _emit(**row) -> None:
    print(json.dumps(row), flush=True)


def bench_render(emit=_emit, timed=_timed, repeats: int = 3) -> None:
    label = "GPT-2 48 layers (transformers, export)"
    try:
        doc = open_document(OpenRequest(str(ROOT / SPEC[0]), SPEC[1]))
    except Exception as exc:  # transformers missing
        emit(bench="render", model=label, skipped=f"{type(exc).__name__}: {exc}"[:200])
        return
    heat = memory_heat(memory_flow(doc, MemoryRequest()).estimate)
    common = {"bench": "render", "model": label, "nodes": len(doc), "repeats": repeats}
    svg = ""
    for view, expanded in (("as opened (top-level collapsed)", False), ("expanded", True)):
        shown = collapsed_groups(doc, expanded=expanded)
        with_heat = heat if expanded else None

        def layout(s=shown):  # the baseline: the canvas's layout and what to draw of it
            return canvas_layout(LayoutEngine(metrics=METRICS), doc, s)

        def render(e=expanded, h=with_heat):  # the same layout, then the SVG written
            return drawing_svg(doc, expanded=e, heat=h)

        layout()  # (the document's per-version memos made once, for both alike)
        base, whole = [], []
        for _ in range(repeats):  # interleaved: drift falls on both
            base += timed(layout, 1)
            whole += timed(render, 1)
        svg = render()
        lay_s, render_s = statistics.median(base), statistics.median(whole)
        emit(
            **common,
            view=view,
            heat="memory" if with_heat else None,
            drawn_nodes=svg.count('class="node"'),
            what="baseline: the canvas's layout (canvas_layout)",
            median_s=round(lay_s, 4),
        )
        emit(
            **common,
            view=view,
            heat="memory" if with_heat else None,
            what="fxstudio render to SVG (layout + SVG)",
            median_s=round(render_s, 4),
            beyond_layout_s=round(render_s - lay_s, 4),
            target_beyond_s=TARGET_S,
            met=render_s - lay_s <= TARGET_S,
            svg_bytes=len(svg.encode()),
        )
    try:
        from fxstudio.qt.share import ensure_gui, write_picture
    except ImportError as exc:  # PySide6 missing
        emit(bench="render", what="qt pdf/png", skipped=str(exc))
        return
    ensure_gui()
    with tempfile.TemporaryDirectory() as folder:
        for suffix in (".pdf", ".png"):
            out = Path(folder) / f"g{suffix}"
            t0 = time.perf_counter()
            write_picture(svg, out)
            emit(
                **common,
                view="expanded",
                what=f"Qt {suffix[1:].upper()} of the expanded SVG",
                seconds=round(time.perf_counter() - t0, 3),
                bytes=out.stat().st_size,
            )


if __name__ == "__main__":
    bench_render()
