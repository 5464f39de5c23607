"""Canvas benchmarks: building the scene and repainting the view, against stock Qt items
(a QGraphicsRectItem per node, a QGraphicsLineItem per edge, at the same places) in the same
run.  Repaints render the real view offscreen (``viewport().grab()``: a full paint event)."""

from __future__ import annotations

import os
import resource
import statistics

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.layout.placing import LayoutEngine
from tests.bench.bench_layout import CASES, ROOT, open_cases


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_canvas(emit, timed) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QLineF, QRectF
    from PySide6.QtWidgets import QApplication, QGraphicsScene, QGraphicsView

    from fxstudio.qt.canvas.overview import Overview
    from fxstudio.qt.canvas.scene import GraphScene
    from fxstudio.qt.canvas.view import CanvasView

    app = QApplication.instance() or QApplication([])
    for label, doc in open_cases(emit, "canvas"):
        layout = LayoutEngine().layout(doc, set())
        common = {"bench": "canvas", "model": label, "nodes": len(doc)}

        rss0 = _rss_mb()
        scene = GraphScene()
        build = timed(lambda s=scene, d=doc, lay=layout: s.build(d, lay), 3)
        rss1 = _rss_mb()

        def stock_build(target: QGraphicsScene, doc=doc, layout=layout) -> None:
            target.clear()
            rects = {}
            for name, box in layout.nodes.items():
                rects[name] = target.addRect(QRectF(box.x, box.y, box.w, box.h))
            for src, dst, _ in doc.edges():
                a, b = rects.get(src), rects.get(dst)
                if a is not None and b is not None:
                    ra, rb = a.rect(), b.rect()
                    target.addLine(QLineF(ra.center().x(), ra.bottom(), rb.center().x(), rb.top()))

        stock = QGraphicsScene()
        stock_times = timed(lambda s=stock: stock_build(s), 3)
        emit(
            **common,
            what="scene build, fully expanded",
            median_s=round(statistics.median(build), 4),
            baseline_stock_items_s=round(statistics.median(stock_times), 4),
            ratio=round(statistics.median(build) / statistics.median(stock_times), 2),
            items=len(scene.items()),
            peak_rss_growth_mb=round(rss1 - rss0, 1),
            peak_rss_mb=round(rss1, 1),
        )

        measured: dict[str, dict[str, list[float]]] = {}
        for name, target in (("fxstudio", scene), ("stock", stock)):
            view = CanvasView() if name == "fxstudio" else QGraphicsView()
            view.resize(1600, 1000)
            view.setScene(target)
            view.show()
            app.processEvents()
            results = measured[name] = {}
            for zoom_label, zoom in (("zoomed out (2%)", 0.02), ("25%", 0.25), ("100%", 1.0)):
                view.resetTransform()
                view.scale(zoom, zoom)
                view.centerOn(target.itemsBoundingRect().center())
                app.processEvents()
                results[zoom_label] = timed(lambda v=view: v.viewport().grab(), 7)
            bar = view.verticalScrollBar()

            def pan(v=view, b=bar) -> None:
                b.setValue(b.value() + 40)
                v.viewport().grab()

            results["pan step at 100%"] = timed(pan, 7)
            view.close()
        for what, runs in measured["fxstudio"].items():
            ours = statistics.median(runs)
            base = statistics.median(measured["stock"][what])
            emit(
                **common,
                what=f"repaint of the 1600x1000 view, {what}",
                median_ms=round(ours * 1000, 2),
                baseline_stock_items_ms=round(base * 1000, 2),
                ratio=round(ours / base, 2),
            )

        def made(s=scene) -> None:  # what a build adds to the overview, and its arrays
            overview = Overview(s)
            for group in s.groups.values():
                if group.collapsed:
                    overview.add(group)
            for item in s.nodes.values():
                overview.add(item)
            for edge in s.edges:
                overview.add_edge(edge)
            overview.arrays()

        rebuild = timed(made, 5)
        overview = scene.overview()
        some = list(scene.nodes.values())[:: max(1, len(scene.nodes) // 5)]
        reselect = timed(lambda o=overview, items=some: o.select(items), 7)
        moved = timed(lambda o=overview, item=some[0]: o.moved(item), 7)
        emit(
            **common,
            what="zoomed-out picture: made as a layout is drawn / kept up to date on select"
            " / on a move",
            made_ms=round(statistics.median(rebuild) * 1000, 2),
            select_ms=round(statistics.median(reselect) * 1000, 3),
            move_ms=round(statistics.median(moved) * 1000, 3),
        )
        scene.clear()
        stock.clear()


def bench_responsiveness(emit) -> None:
    """The longest the window's event loop is held up (a 5 ms timer's largest gap) while a big
    graph opens and while all its modules are expanded; the rule is 100 ms."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    for label, spec, frontend in CASES[1:]:
        _responsiveness(emit, app, label, spec, frontend)


def _responsiveness(emit, app, label: str, spec: str, frontend: str) -> None:
    import time

    from PySide6.QtCore import QEventLoop

    from fxstudio.qt.window.main_window import MainWindow
    from tests.bench.stalls import StallMeter

    window = MainWindow(interactive=False)
    window.resize(1600, 1000)
    window.show()
    meter = StallMeter()
    loop = QEventLoop()
    window.layoutShown.connect(lambda *_: loop.quit())
    window.session.loadFailed.connect(lambda *_: loop.quit())

    def run(start, what: str) -> None:
        meter.start()
        t0 = time.perf_counter()
        start()
        loop.exec()
        meter.stop()
        emit(
            bench="responsiveness",
            model=label,
            nodes=len(window.document) if window.document else None,
            what=what,
            seconds=round(time.perf_counter() - t0, 3),
            longest_stall_ms=round(meter.longest * 1000, 1),
            stalls_over_100ms=sum(1 for g in meter.gaps if g > 0.1),
        )

    run(
        lambda: window.session.open(OpenRequest(str(ROOT / spec), frontend)),
        "open (model build, capture, shapes, first collapsed picture)",
    )
    if window.document is not None and window.document.collapsed:
        run(window.canvas_controller.expand_all, "expand all modules (layout + scene)")
    window.close()
    window.deleteLater()
    app.processEvents()
