"""Report benchmark (JSON lines): the self-contained HTML report of a 10,000-node graph
(``tests/bench/synthetic.py:nested_10000`` on a 2x8 input) -- its size and the time to write
it, against the bare SVG drawing of the same graph measured in the same run (what the page
adds: its script, style, sections and JSON) -- and in Chromium (Debian's, through
Playwright): the load, then how soon it answers a user: a node's details after a click, a
top-level module collapsed, a wheel zoom.  Targets: ≤ 10 MB, interactive ≤ 3 s after load.

    python tests/bench/bench_report.py            # nested_10000
    python tests/bench/bench_report.py --nodes 2000
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from fxstudio.core.flows.report import ReportRequest, report_flow  # noqa: E402
from fxstudio.core.graph.request import OpenRequest  # noqa: E402
from fxstudio.core.sessions.documents import open_document  # noqa: E402
from fxstudio.core.share.svg import drawing_svg  # noqa: E402
from tests.browser.conftest import ARGS, CHROMIUM  # noqa: E402


def emit(**row) -> None:
    print(json.dumps(row), flush=True)


def in_chromium(path: Path, first: str, group: str) -> dict:
    """Open ``path``; the load's time, then each interaction's answer time (wall, from the
    driver: what a user waits), and the page's own count of drawn nodes."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        t0 = time.perf_counter()
        page.goto(path.resolve().as_uri(), wait_until="load", timeout=120_000)
        load_s = time.perf_counter() - t0
        timing = page.evaluate(
            "() => { const n = performance.getEntriesByType('navigation')[0];"
            " return {dom: n.domContentLoadedEventEnd / 1e3, load: n.loadEventEnd / 1e3}; }"
        )
        page.wait_for_selector("body[data-fx-ready]", state="attached", timeout=120_000)
        ready_s = time.perf_counter() - t0  # the drawing unpacked and its script set up
        main = ".fx-pane[data-pane=main]"
        t1 = time.perf_counter()
        page.locator(f'{main} g.node[data-name="{first}"]').click()
        page.wait_for_function(
            f"() => document.querySelector('{main} .fx-details h3')?.textContent === '{first}'"
        )
        click_s = time.perf_counter() - t1
        t2 = time.perf_counter()
        page.locator(f'{main} g.group[data-module="{group}"] > text.title').click()
        page.wait_for_selector(f'{main} g.group[data-module="{group}"].fx-collapsed > g.fx-box')
        collapse_s = time.perf_counter() - t2
        box = page.locator(f"{main} .fx-view").bounding_box()
        page.mouse.move(box["x"] + 300, box["y"] + 300)
        t3 = time.perf_counter()
        page.mouse.wheel(0, 400)
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
        zoom_s = time.perf_counter() - t3
        drawn = page.locator(f"{main} g.node").count()
        browser.close()
    return {
        "load_s": round(load_s, 3),
        "dom_content_loaded_s": round(timing["dom"], 3),
        "load_event_s": round(timing["load"], 3),
        "ready_after_load_s": round(ready_s - load_s, 3),
        "first_click_details_s": round(click_s, 3),
        "interactive_after_load_s": round(ready_s - load_s + click_s, 3),
        "collapse_s": round(collapse_s, 3),
        "wheel_zoom_s": round(zoom_s, 3),
        "drawn_nodes": drawn,
        "console_errors": errors,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=10000, help="10000 (nested_10000) or fewer")
    ns = ap.parse_args()
    spec = f"{ROOT}/tests/bench/synthetic.py:nested_{ns.nodes}"
    if ns.nodes != 10000:
        spec = f"{ROOT}/tests/bench/synthetic.py:nested({ns.nodes})"
    t = time.perf_counter()
    doc = open_document(OpenRequest(spec, "fx", ("2x8",)))
    open_s = time.perf_counter() - t
    t = time.perf_counter()
    svg = drawing_svg(doc, expanded=True)
    svg_s = time.perf_counter() - t
    emit(
        bench="report",
        what="svg (baseline: the drawing alone)",
        nodes=len(doc),
        open_s=round(open_s, 2),
        seconds=round(svg_s, 2),
        mb=round(len(svg.encode()) / 1e6, 2),
    )
    t = time.perf_counter()
    result = report_flow(ReportRequest(doc, memory=True, history=False))
    report_s = time.perf_counter() - t
    html = result.html.encode()
    emit(
        bench="report",
        what="report html (graph + memory section and JSON)",
        nodes=len(doc),
        seconds=round(report_s, 2),
        mb=round(len(html) / 1e6, 2),
        packed='data-encoding="gzip-base64"' in result.html,
        target_mb=10,
    )
    if CHROMIUM is None:
        emit(bench="report", what="chromium", skipped="no Chromium installed")
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.html"
        path.write_bytes(html)
        first = next(n.name for n in doc.graph.nodes if n.op == "call_module")
        row = in_chromium(path, first, "stages.0")
        emit(
            bench="report",
            what="chromium (Debian's, headless)",
            nodes=len(doc),
            target_interactive_s=3,
            **row,
        )
        svg_path = Path(folder) / "drawing.svg"
        svg_path.write_text(svg)
        t = time.perf_counter()
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            t = time.perf_counter()
            page.goto(svg_path.resolve().as_uri(), wait_until="load", timeout=120_000)
            emit(
                bench="report",
                what="chromium: the bare SVG (baseline)",
                nodes=len(doc),
                load_s=round(time.perf_counter() - t, 3),
            )
            browser.close()


if __name__ == "__main__":
    main()
