"""The Run dock: run the document's model on a chosen device and time it, in a worker thread
(the window stays live), on a copy of the graph made there (edits made meanwhile do not
reach the run, and the run never changes the document).  It runs
:func:`fxstudio.core.runtime.profiling.profile` -- what ``fxstudio profile`` runs -- and
*Export ▸ Result as JSON* writes the same JSON as ``fxstudio profile --json``.

The dock reads as a column (controls, summary, tabs stacked) or as a strip along the
window's bottom (the three side by side); its options fold to one line.

With *Per node* a separate profiled run follows the clean one: the node table, the heat
overlay on the canvas, the inspector and the *Top* chart show it.  *Pin as baseline* keeps
the graph as it is; *Compare with baseline* times both interleaved and fills *Before / after*.

A result is of the graph as it was when the run started (the session's graph state): once the
graph is edited the dock says so, and the heat, the node table's times and the inspector's
are marked stale; undoing back to that graph makes them current again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from fxstudio.core.edits.snapshots import Snapshot, detached, snapshot
from fxstudio.core.errors import UserError
from fxstudio.core.flows import Profile, ProfileOptions, profile
from fxstudio.core.flows.run import Comparison, NodeProfile, Speedup, by_change, format_rate
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt import theme
from fxstudio.qt.canvas.heat import HeatMarks
from fxstudio.qt.canvas.menu import Target
from fxstudio.qt.copies import Copy, run_on_copy
from fxstudio.qt.file_dialogs import FileType, ask_save_path
from fxstudio.qt.forms import ShapeWatcher
from fxstudio.qt.panels.base import DocumentPanel, in_words
from fxstudio.qt.panels.run import form as run_form
from fxstudio.qt.panels.run import module as run_module
from fxstudio.qt.panels.run.form import SortItem
from fxstudio.qt.panels.run.summary import summary_html
from fxstudio.qt.windows.compare import CompareWindow, compare_snapshot
from fxstudio.qt.workers import Task

#: What a profile is exported as (a name with another's extension is exported as that one).
PROFILE_TYPES = (
    FileType("Chrome/Perfetto trace", (".json",), "trace"),
    FileType("CSV", (".csv",), "csv"),
    FileType("JSON", (".json",), "json"),
)
#: What the dock adds to a result's line once the graph is no longer the one it ran.
STALE_NOTE = " — stale: the graph was changed since this run; Run again"
STALE_TIP = "Stale: measured before the graph last changed. Run again for current times."


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


class RunPanel(DocumentPanel, run_form.RunForm):
    """The dock's controller.  ``finished(result)``: a run ended with a
    :class:`~fxstudio.core.runtime.profiling.Profile` or the exception that stopped it."""

    id, title = "run", "Run"
    finished = Signal(object)

    def build(self) -> QWidget:
        self.task: Task | None = None
        self.last: Profile | None = None  # the last run's
        self.last_state: object = None  # the graph state it ran on (DocumentSession.graph_state)
        self._started_state: object = None  # that of the run under way
        self._verdict = ""  # what the status line says of the last result
        self.baseline: Snapshot | None = None
        self.marks = HeatMarks()
        body = run_form.build(self)
        self.shape = ShapeWatcher(body, lambda shape: run_form.arrange(self, shape))
        self.options_button.toggled.connect(self.show_options)
        for changed in (
            self.device.currentIndexChanged,
            self.threads.valueChanged,
            self.dtype.currentIndexChanged,
            self.min_time.valueChanged,
            self.batch.valueChanged,
            self.compile.currentIndexChanged,
            self.per_node.toggled,
        ):
            changed.connect(self._options_changed)
        self._options_changed()
        self.module.currentIndexChanged.connect(self._module_changed)
        self.ctx.canvas.menuRequested.connect(self._canvas_menu)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.pin_button.clicked.connect(self.pin)
        self.compare_button.clicked.connect(self.compare)
        self.graphs_button.clicked.connect(self.compare_graphs)
        self.heat.toggled.connect(self._heat_toggled)
        self.export_trace_action.triggered.connect(lambda: self._export("trace"))
        self.export_csv_action.triggered.connect(lambda: self._export("csv"))
        self.export_json_action.triggered.connect(lambda: self._export("json"))
        self.node_table.cellDoubleClicked.connect(self._row_chosen)
        self.node_chart.barClicked.connect(self._choose)
        self.ctx.canvas.layoutDone.connect(lambda _layout: self._redraw())
        self.session.profileChanged.connect(self._profile_changed)
        self.session.graphStateChanged.connect(self._show_age)
        return body

    def _row_chosen(self, row: int, _column: int) -> None:
        item = self.node_table.item(row, 0)
        if item is not None:
            self._choose(item.text())

    def show_options(self, shown: bool) -> None:
        """Unfold the options (or fold them to their one line, leaving the room to results)."""
        self.options_button.setChecked(shown)
        self.options_box.setVisible(shown)
        self.options_line.setVisible(not shown)
        self.options_button.setArrowType(
            Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        )
        self.controls.updateGeometry()

    def _options_changed(self, *_: object) -> None:
        self.options_line.setText(run_form.options_text(self))

    # -- the document and the canvas ------------------------------------------------

    def on_document(self, doc: GraphDocument | None) -> None:
        self.baseline = None
        self.last = None
        self._verdict = ""
        self.baseline_label.setText("No baseline pinned.")
        self.compare_button.setEnabled(False)
        self.graphs_button.setEnabled(False)
        self.export_button.setEnabled(False)
        self.status_label.setText("Not run yet." if doc is not None else "")
        self.result.clear()
        self.compare_table.setRowCount(0)  # (the model before's before / after)
        self._show_profile(None)
        self._show_age()
        self.run_button.setEnabled(doc is not None)
        self.pin_button.setEnabled(doc is not None)
        run_module.fill(self.module, doc)
        self._module_changed()  # structure only: Run says why it cannot, and what can run
        if doc is not None and not doc.weights:
            self.status_label.setText(run_module.BARE_STATUS)

    def _module_changed(self, *_: object) -> None:
        self.run_button.setToolTip(run_module.tip(self.document, run_module.chosen(self.module)))
        self._options_changed()

    def _canvas_menu(self, menu: QMenu, target: Target) -> None:
        """The canvas's menu on a module (or a node in one) offers to run it alone, and
        each module around it (a decoder layer, clicked on its attention)."""
        label = run_module.menu_label(target)
        if label is None or self.document is None or target.module is None:
            return
        action = menu.addAction(label)
        action.setEnabled(not self.busy())
        action.triggered.connect(lambda: self.run_alone(target.module))
        for path in run_module.enclosing(self.document, target.module):
            around = menu.addAction(f"Run the module around it ({path})")
            around.setEnabled(not self.busy())
            around.triggered.connect(lambda _=False, p=path: self.run_alone(p))

    def run_alone(self, path: str | None) -> None:
        """Choose the module ``path`` (None: the whole model), show the dock and run."""
        run_module.choose(self.module, path)
        self.dock.show()
        self.dock.raise_()
        self.run()

    @property
    def stale(self) -> bool:
        """Whether the last result is of another version of the graph than the one now."""
        return self.last is not None and not self.session.is_current(self.last_state)

    def _show_age(self) -> None:
        """The graph changed (or came back): the last result's line says whether it is of
        the graph as it is now."""
        self._mark_stale()
        if self.last is None or self.busy() or not self._verdict:
            return
        self.status_label.setText(self._verdict + (STALE_NOTE if self.stale else ""))

    def _mark_stale(self) -> None:
        """While the run is stale its charts say so, and the Nodes and Before / after tables
        are in the disabled text colour (still readable, scrollable and sortable), with a
        tooltip saying why."""
        stale = self.stale
        for chart in (self.node_chart, self.module_chart):
            chart.set_stale(stale)
        for t in (self.node_table, self.compare_table):
            palette = QPalette(t.palette())
            group = QPalette.ColorGroup.Disabled if stale else QPalette.ColorGroup.Active
            ink = QApplication.palette().color(group, QPalette.ColorRole.Text)
            palette.setColor(QPalette.ColorRole.Text, ink)
            t.setPalette(palette)
            t.setToolTip(STALE_TIP if stale else "")

    def _profile_changed(self, profile: NodeProfile | None) -> None:
        """The session's profile changed, or became stale or current again: the heat follows
        (grey once the graph is not the one it was measured on)."""
        self.marks.set_profile(profile)
        self.marks.stale = profile is not None and not self.session.profile_current
        self._redraw()

    def _redraw(self) -> None:
        self.marks.redraw(self.ctx.canvas.scene)

    def _heat_toggled(self, on: bool) -> None:
        self.marks.visible = on
        self._redraw()

    def _choose(self, name: str) -> None:
        doc = self.document
        if doc is not None and name in doc:
            self.selection.select([name])

    # -- running --------------------------------------------------------------------

    def options(self, compare: bool = False) -> ProfileOptions:
        """What the dock's controls say (a comparison: eager, no per-node calls count)."""
        device = str(self.device.currentData())
        backend = None if compare else self.compile.currentData()
        return ProfileOptions(
            device=device,
            threads=self.threads.value() if device == "cpu" else None,
            dtype=self.dtype.currentData(),
            min_time=self.min_time.value(),
            per_node=self.per_node.isChecked() and backend is None,  # fused kernels: no nodes
            compile=backend,
            batch=self.batch.value() or None,  # 0: as captured
        )

    def _start(self, work: Callable[[Copy], object], text: str) -> None:
        """Run ``work(copy)`` on a copy of the graph as it is now, in a worker;
        ``copy.say(text)`` shows what it does now.  Its result (a profile, or a module's
        :class:`~fxstudio.qt.panels.run.module.Ran`) is shown -- stale if the graph changed
        meanwhile -- unless another model is open by then."""
        self._started_state = self.session.graph_state()
        job = run_on_copy(
            self, work, self._shown, stale=self._shown, failed=self._failed, parent=self
        )
        task = self.task = job.task
        task.stage.connect(lambda line: self.status_label.setText(f"{text} {line}"))
        task.finished.connect(lambda: self._ended(task))
        for b in (self.run_button, self.compare_button, self.pin_button):
            b.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status_label.setText(f"{text} starting…")

    def busy(self) -> bool:
        return self.task is not None

    def _ended(self, task: Task) -> None:
        """The worker's thread is over (a cancelled one too): it deletes itself."""
        if task is self.task:
            self.task = None
            self._idle()

    def run(self) -> None:
        """Run and time the graph as it is now (a copy, made in the worker)."""
        if self.document is None or self.busy():
            return
        options, path = self.options(), run_module.chosen(self.module)
        if path is not None:
            self._start(run_module.work(path, options), f"{path} alone on {options.device}:")
            return
        self._start(
            lambda copy: profile(copy.detached(), options, stage=copy.say),
            f"On {options.device}:",
        )

    def pin(self) -> None:
        """Keep the graph as it is now, to compare a later version with."""
        if self.document is None:
            return
        self.baseline = snapshot(self.document, held=True)
        count = len(self.baseline.nodes)
        self.baseline_when = time.strftime("%H:%M:%S")
        self.baseline_label.setText(f"Baseline: the graph at {self.baseline_when} ({count} nodes).")
        self.compare_button.setEnabled(not self.busy())
        self.graphs_button.setEnabled(True)

    def compare_graphs(self) -> CompareWindow | None:
        """The baseline and the graph now side by side (the Compare window)."""
        if self.document is None or self.baseline is None:
            return None
        label = f"baseline ({self.baseline_when})"
        return compare_snapshot(self.ctx.window, self.baseline, label)

    def compare(self) -> None:
        """Time the baseline and the graph now interleaved (A/B/A/B)."""
        if self.document is None or self.baseline is None or self.busy():
            return
        before, options, path = self.baseline, self.options(True), run_module.chosen(self.module)
        if path is not None:
            self._start(run_module.work(path, options, before), f"{path} alone, baseline vs now:")
            return
        self._start(
            lambda copy: profile(copy.detached(), options, detached(before), stage=copy.say),
            f"Baseline vs the graph now, on {options.device}:",
        )

    def cancel(self) -> None:
        """Drop the run's result (torch cannot be stopped mid-call); Run is offered again
        once its thread is over."""
        if self.task is not None:
            self.task.cancel()
            self.cancel_button.setEnabled(False)
            self.status_label.setText(
                "Cancelled: the run finishes in the background and its result is dropped."
            )

    def _idle(self) -> None:
        self.run_button.setEnabled(self.document is not None)
        self.pin_button.setEnabled(self.document is not None)
        self.compare_button.setEnabled(self.baseline is not None)
        self.graphs_button.setEnabled(self.baseline is not None)
        self.cancel_button.setEnabled(False)

    def _shown(self, result: object) -> None:
        if isinstance(result, run_module.Ran):
            self._done(result.profile, result)
        elif isinstance(result, Profile):
            self._done(result)

    def _done(self, result: Profile, ran: run_module.Ran | None = None) -> None:
        self.last, self.last_state = result, self._started_state
        c = result.comparison
        if c is not None:
            self._fill_compare(c)
            w = c.whole
            self._verdict = (
                f"After vs baseline: {w.verdict} (speed-up {w.speedup:.3f}×, "
                f"95 % CI {w.ci_low:.3f}–{w.ci_high:.3f})"
            )
            self.tabs.setCurrentWidget(self.compare_table)
        else:
            t = result.after.timing
            self._verdict = (
                f"median {t.median_s * 1e3:.3f} ms · {result.after.throughput:,.1f} items/s"
                + (" · NOISY" if t.noisy else "")
            )
        if ran is not None:
            self._verdict = run_module.verdict(ran.part.path, self._verdict)
        self._idle()
        self.status_label.setText(self._verdict + (STALE_NOTE if self.stale else ""))
        self._mark_stale()
        summary = summary_html(result, theme.colors().bad)
        self.result.setHtml((run_module.html(ran) if ran is not None else "") + summary)
        self._show_profile(result.after.nodes if ran is None else run_module.inside(ran))
        self.export_button.setEnabled(True)
        self.finished.emit(result)

    def _failed(self, exc: BaseException) -> None:
        """A refusal (a :class:`UserError`: what happened, what to do) is the dock's notice,
        as it is worded, and the last result stays; anything else failed the run: said so,
        and what was raised in the summary."""
        self._idle()
        text = in_words(exc)
        doc = self.document
        if doc is not None and not doc.weights and "needs the model's weights" in text:
            text += "\n" + run_module.one_module(doc)  # what can run
        if isinstance(exc, UserError):
            self.status_label.setText(text)
            self.finished.emit(exc)
            return
        self.status_label.setText("The run failed.")
        self.result.setPlainText(text)
        if self.tabs.indexOf(self.result) >= 0:
            self.tabs.setCurrentWidget(self.result)
        self.finished.emit(exc)

    # -- showing a profile ------------------------------------------------------------

    def _show_profile(self, profile: NodeProfile | None) -> None:
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
                cells = (  # in the order of run_form.NODE_COLUMNS
                    SortItem(name, name),
                    SortItem(_ms(s), s),
                    SortItem(f"{share:.1%}", share),
                    SortItem(_ms(spread), spread),
                    SortItem(format_rate(fps) if fps else "", fps or 0.0),
                    SortItem(bound, bound),
                    SortItem(f"{flops:,}" if flops else "", float(flops)),
                    SortItem(module, module),
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
            t.sortItems(run_form.TIME_COLUMN, Qt.SortOrder.DescendingOrder)
        if profile is not None or self.session.profile is not None:  # the heat follows it
            self.session.set_profile(profile, self.last_state if profile is not None else None)
        elif self.marks.nodes:
            self._profile_changed(None)

    def _fill_compare(self, c: Comparison) -> None:
        t = self.compare_table
        t.setSortingEnabled(False)
        t.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # as listed
        rows: list[tuple[str, Speedup | None]] = [("whole model (interleaved)", c.whole)]
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
        chosen = ask_save_path(
            self.dock,
            "Export the profile",
            "profile" + ("-trace.json" if kind == "trace" else f".{kind}"),
            PROFILE_TYPES,
            next(t for t in PROFILE_TYPES if t.kind == kind),
        )
        if chosen is not None:
            self.export(chosen[1].kind, chosen[0])

    def export(self, kind: str, path: Path) -> bool:
        """Write the last result (``json``: what ``fxstudio profile --json`` writes; ``csv``,
        ``trace``: of a per-node run); a failure is a message and leaves no partial file."""
        try:
            if self.last is None:
                raise UserError("Nothing to export yet: run the model first.")
            write = {
                "json": self.last.write,
                "csv": self.last.write_csv,
                "trace": self.last.write_trace,
            }[kind]
            write(path)
        except UserError as exc:
            self.message.emit(str(exc))
            return False
        self.status_label.setText(f"Wrote {path}")
        return True
