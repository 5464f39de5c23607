"""The Run dock: run the document's model on a chosen device and time it, in a worker thread
(the window stays live), on a snapshot of the graph (edits made meanwhile do not reach the
run, and the run never changes the document).

With *Per node* a separate profiled run follows the clean one: the node table, the heat
overlay on the canvas, the inspector and the *Top* chart show it.  *Pin as baseline* keeps
the graph as it is; *Compare with baseline* times both interleaved and fills *Before / after*.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from fxstudio.core.document import ChangeKind, GraphDocument
from fxstudio.core.errors import UserError
from fxstudio.core.files import atomic_path, atomic_write
from fxstudio.core.runtime.breakdown import NodeProfile, format_rate
from fxstudio.core.runtime.compare import Comparison, by_change, compare
from fxstudio.core.runtime.run import WholeModel, profile_whole
from fxstudio.qt import run_widgets
from fxstudio.qt.heat import HeatMarks
from fxstudio.qt.run_widgets import SortItem
from fxstudio.qt.workers import Task


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


class RunPanel(QObject):
    """The dock's controller; ``dock`` is the widget the main window places."""

    finished = Signal(object)  # a WholeModel or Comparison, or the exception that stopped it
    profiled = Signal(object)  # the NodeProfile now shown (None: none)
    nodeChosen = Signal(str)  # noqa: N815 - a node picked in the table or the chart
    message = Signal(str)

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.document: GraphDocument | None = None
        self.task: Task | None = None
        self.last: WholeModel | None = None
        self.comparison: Comparison | None = None
        self.baseline: GraphDocument | None = None
        self.marks = HeatMarks()
        self.scene: Any = None
        self.dock = run_widgets.build(self, parent)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.pin_button.clicked.connect(self.pin)
        self.compare_button.clicked.connect(self.compare)
        self.heat.toggled.connect(self._heat_toggled)
        self.export_trace_action.triggered.connect(lambda: self._export("trace"))
        self.export_csv_action.triggered.connect(lambda: self._export("csv"))
        self.export_json_action.triggered.connect(lambda: self._export("json"))
        self.node_table.cellDoubleClicked.connect(
            lambda row, _col: self.nodeChosen.emit(self.node_table.item(row, 0).text())
        )
        self.node_chart.barClicked.connect(self.nodeChosen)
        self._unsubscribe: Any = None

    # -- the document and the canvas ------------------------------------------------

    def set_document(self, doc: GraphDocument | None) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.document = doc
        self.baseline = None
        self.baseline_label.setText("No baseline pinned.")
        self.compare_button.setEnabled(False)
        self._show_profile(None)
        self.run_button.setEnabled(doc is not None)
        self.pin_button.setEnabled(doc is not None)
        if doc is not None:
            self._unsubscribe = doc.subscribe(self._changed)

    def _changed(self, event: Any) -> None:
        if self.last is not None and event.kind is not ChangeKind.VIEW_CHANGED:
            text = self.status.text()
            if "edited since" not in text:
                self.status.setText(text + " — the graph was edited since this run")

    def set_scene(self, scene: Any) -> None:
        self.scene = scene
        self.marks.redraw(scene)

    def _heat_toggled(self, on: bool) -> None:
        self.marks.visible = on
        self.marks.redraw(self.scene)

    def snapshot(self) -> GraphDocument:
        """The model as it is now, for the worker: the graph copied, weights shared."""
        assert self.document is not None
        return self.document.detached()

    # -- running --------------------------------------------------------------------

    def _options(self) -> tuple[str, int | None, Any, float, int | None]:
        device = str(self.device.currentData())
        threads = self.threads.value() if device == "cpu" else None
        batch = self.batch.value() or None  # 0: as captured
        return device, threads, self.dtype.currentData(), self.min_time.value(), batch

    def _start(self, fn: Any, text: str) -> None:
        """Run ``fn(say)`` in a worker; ``say(text)`` shows what it does now."""
        task = Task(lambda: fn(task.say), self)  # (task is bound before the thread starts)
        self.task = task
        task.stage.connect(lambda line: self.status.setText(f"{text} {line}"))
        self.task.succeeded.connect(self._done)
        self.task.failed.connect(self._failed)
        for b in (self.run_button, self.compare_button, self.pin_button):
            b.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status.setText(f"{text} starting…")
        self.task.start()

    def busy(self) -> bool:
        return self.task is not None and self.task.isRunning()

    def run(self) -> None:
        if self.document is None or self.busy():
            return
        snap = self.snapshot()
        device, threads, dtype, min_time, batch = self._options()
        backend = self.compile.currentData()
        per_node = self.per_node.isChecked() and backend is None  # fused kernels: no nodes
        self._start(
            lambda say: profile_whole(
                snap,
                device,
                threads,
                dtype,
                min_time,
                per_node,
                compile=backend,
                batch=batch,
                stage=say,
            ),
            f"On {device}:",
        )

    def pin(self) -> None:
        if self.document is None:
            return
        self.baseline = self.snapshot()
        count = len(self.baseline.graph.nodes)
        self.baseline_label.setText(
            f"Baseline: the graph at {time.strftime('%H:%M:%S')} ({count} nodes)."
        )
        self.compare_button.setEnabled(not self.busy())

    def compare(self) -> None:
        if self.document is None or self.baseline is None or self.busy():
            return
        before, after = self.baseline, self.snapshot()
        device, threads, dtype, min_time, batch = self._options()
        per_node = self.per_node.isChecked()
        self._start(
            lambda say: compare(
                before, after, device, threads, dtype, 2 * min_time, 9, per_node, batch, say
            ),
            f"Baseline vs the graph now, on {device}:",
        )

    def cancel(self) -> None:
        if self.busy():
            assert self.task is not None
            self.task.cancel()
            self.status.setText(
                "Cancelled: the run finishes in the background and its result is dropped."
            )
            self._idle()

    def _finish_thread(self) -> None:
        """The worker has emitted its last signal: let its thread end before going on (a
        QThread destroyed while still running aborts the process)."""
        if self.task is not None:
            self.task.wait()

    def _idle(self) -> None:
        self.run_button.setEnabled(self.document is not None)
        self.pin_button.setEnabled(self.document is not None)
        self.compare_button.setEnabled(self.baseline is not None)
        self.cancel_button.setEnabled(False)

    def _done(self, result: WholeModel | Comparison) -> None:
        self._finish_thread()
        self._idle()
        if isinstance(result, Comparison):
            self.comparison = result
            self.last = result.after
            self._fill_compare(result)
            self.result.setPlainText(result.after.describe() + "\n\n" + result.describe())
            w = result.whole
            self.status.setText(
                f"After vs baseline: {w.verdict} (speed-up {w.speedup:.3f}×, "
                f"95 % CI {w.ci_low:.3f}–{w.ci_high:.3f})"
            )
            self.tabs.setCurrentWidget(self.compare_table)
        else:
            self.last = result
            t = result.timing
            self.status.setText(
                f"median {t.median_s * 1e3:.3f} ms · {result.throughput:,.1f} items/s"
                + (" · NOISY" if t.noisy else "")
            )
            self.result.setPlainText(result.describe())
        self._show_profile(self.last.nodes)
        self.export_button.setEnabled(True)
        self.finished.emit(result)

    def _failed(self, exc: BaseException) -> None:
        self._finish_thread()
        self._idle()
        text = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
        self.status.setText("The run failed.")
        self.result.setPlainText(text)
        self.tabs.setCurrentWidget(self.result)
        self.finished.emit(exc)

    # -- showing a profile ------------------------------------------------------------

    def _show_profile(self, profile: NodeProfile | None) -> None:
        self.marks.set_profile(profile)
        self.marks.redraw(self.scene)
        t = self.node_table
        t.setSortingEnabled(False)
        t.setRowCount(0)
        if profile is not None:
            rows = [
                *(
                    (
                        n.name,
                        n.module,
                        n.time_s,
                        n.iqr_s,
                        n.share,
                        n.flops,
                        n.flops_per_s,
                        n.bound or "",
                    )
                    for n in profile.nodes
                ),
                (
                    "(unattributed)",
                    "",
                    profile.unattributed_s,
                    0.0,
                    profile.unattributed_s / profile.whole_s if profile.whole_s else 0.0,
                    0,
                    None,
                    "",
                ),
                (
                    "(gap)",
                    "",
                    profile.gap_s,
                    0.0,
                    profile.gap_s / profile.whole_s if profile.whole_s else 0.0,
                    0,
                    None,
                    "",
                ),
            ]
            t.setRowCount(len(rows))
            for i, (name, module, s, spread, share, flops, fps, bound) in enumerate(rows):
                cells = (
                    SortItem(name, name),
                    SortItem(module, module),
                    SortItem(_ms(s), s),
                    SortItem(_ms(spread), spread),
                    SortItem(f"{share:.1%}", share),
                    SortItem(f"{flops:,}" if flops else "", float(flops)),
                    SortItem(format_rate(fps) if fps else "", fps or 0.0),
                    SortItem(bound, bound),
                )
                for j, cell in enumerate(cells):
                    t.setItem(i, j, cell)
            t.resizeColumnsToContents()
            self.node_chart.set_bars(
                "Top nodes by time", [(n.name, n.time_s, n.share) for n in profile.top(12)]
            )
            mods = sorted((m for m in profile.modules if m.path), key=lambda m: -m.time_s)[:12]
            self.module_chart.set_bars(
                "Top modules by time (sum of their nodes)",
                [(m.path, m.time_s, m.share) for m in mods],
            )
        else:
            self.node_chart.set_bars("", [])
            self.module_chart.set_bars("", [])
        t.setSortingEnabled(True)
        if profile is not None:
            t.sortItems(2, Qt.SortOrder.DescendingOrder)
        self.profiled.emit(profile)

    def _fill_compare(self, c: Comparison) -> None:
        t = self.compare_table
        t.setSortingEnabled(False)
        t.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # as listed
        rows: list[tuple[str, Any]] = [("whole model (interleaved)", c.whole)]
        rows += [(d.label, d.change) for d in by_change(c.nodes)]
        rows += [(f"module {d.label}", d.change) for d in by_change(c.modules)]
        rows = [r for r in rows if r[0] != "module (whole model)"]
        rows += [(f"removed: {n}", None) for n in c.removed]
        rows += [(f"added: {n}", None) for n in c.added]
        t.setRowCount(len(rows))
        for i, (label, s) in enumerate(rows):
            cells = [SortItem(label, label)]
            if s is None:
                cells += [SortItem("", 0.0) for _ in range(5)]
            else:
                cells += [
                    SortItem(_ms(s.before_s), s.before_s),
                    SortItem(_ms(s.after_s), s.after_s),
                    SortItem(f"{s.speedup:.3f}×", s.speedup),
                    SortItem(f"{s.ci_low:.3f}–{s.ci_high:.3f}", s.ci_low),
                    SortItem(s.verdict, s.verdict),
                ]
            for j, cell in enumerate(cells):
                t.setItem(i, j, cell)
        t.resizeColumnsToContents()
        t.setColumnWidth(0, min(t.columnWidth(0), 260))
        t.setSortingEnabled(True)

    # -- exports ----------------------------------------------------------------------

    def _export(self, kind: str) -> None:
        filters = {
            "trace": "Chrome/Perfetto trace (*.json)",
            "csv": "CSV (*.csv)",
            "json": "JSON (*.json)",
        }
        path, _ = QFileDialog.getSaveFileName(self.dock, "Export the profile", "", filters[kind])
        if path:
            self.export(kind, Path(path))

    def export(self, kind: str, path: Path) -> bool:
        """Write the last result; a failure is a message and leaves no partial file."""
        result = self.last
        try:
            if result is None:
                raise UserError("Nothing to export yet: run the model first.")
            if kind == "json":
                data = result.to_json()
                if self.comparison is not None and self.comparison.after is result:
                    data["compare"] = self.comparison.to_json()
                atomic_write(path, json.dumps(data, indent=2, default=str) + "\n")
            elif result.nodes is None:
                raise UserError(
                    "The trace and the node table come from a per-node run: tick 'Per node' "
                    "and run again."
                )
            elif kind == "csv":
                atomic_write(path, result.nodes.to_csv())
            else:
                with atomic_path(path) as tmp:
                    result.nodes.write_trace(tmp)
        except UserError as exc:
            self.message.emit(str(exc))
            return False
        self.status.setText(f"Wrote {path}")
        return True
