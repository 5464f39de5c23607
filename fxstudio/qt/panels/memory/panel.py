"""The Memory dock: where the bytes go.  It runs :func:`fxstudio.core.flows.memory.memory_flow`
-- what ``fxstudio memory`` runs -- in a worker thread, on a copy of the graph made there (the
window stays live; edits made meanwhile do not reach it), and *Save memory JSON…* writes what
``fxstudio memory --json`` writes for the same inputs.

The estimate is static (fake tensors: any input size, structure-only documents too); *Training
step* adds the gradients, the optimizer's state and the activations saved for the backward;
*Measure* runs the model too and shows the measured peak beside the estimate.

It shows the totals in words, the timeline of live bytes over the nodes in execution order
(:mod:`~fxstudio.qt.panels.memory.plot`: the parameters a band under it, the peak marked; a
click on a point selects its node, the selection rings its point), the *Bytes* and *Live after*
columns of the Nodes dock and, on request, the canvas heat by bytes (instead of the Run dock's
heat by time: turning one on turns the other off).

Before / after: once the graph has changed since the last estimate (a rewrite), the next one
estimates the graph of the last estimate too (``against``) and draws it grey under the new one.
A result is of the graph it was computed on: once the graph changes it says so (stale) until
it is estimated again, or the graph is undone back to it.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from fxstudio.core.edits.snapshots import Snapshot, detached
from fxstudio.core.errors import UserError
from fxstudio.core.flows.memory import MemoryRequest, MemoryResult, memory_flow
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.process.guard import format_bytes
from fxstudio.core.wording import for_window
from fxstudio.qt.canvas.heat import HeatMarks
from fxstudio.qt.canvas.marks import take_off
from fxstudio.qt.copies import Copy, run_on_copy
from fxstudio.qt.file_dialogs import JSON_TYPE, ask_save_path
from fxstudio.qt.forms import ShapeWatcher
from fxstudio.qt.panels.base import DocumentPanel, in_words
from fxstudio.qt.panels.memory import form as memory_form
from fxstudio.qt.panels.memory import step as memory_step
from fxstudio.qt.panels.memory.step import NAME_ROLE, ORIGIN_ROLE, StepRowsModel
from fxstudio.qt.panels.run.panel import RunPanel
from fxstudio.qt.panels.table.panel import TablePanel
from fxstudio.qt.workers import Task

if TYPE_CHECKING:
    from fxstudio.qt.panels.memory.plot import Timeline

REFUSED_COLOUR = "#b91c1c"  # a measurement not made: it would not fit
COLUMN_MAX = 180  # a backward table's column at most (a long name elided; wider by hand)
STALE_NOTE = " — stale: the graph was changed since this estimate; Estimate again"
HEAT_TIP = "memory: its output allocates {label}"
#: What the training step says of a model opened in eval mode (the window opens it so).
EVAL_NOTE = (
    "The step is of the graph as opened, in eval mode (BatchNorm and dropout as at "
    "inference); `fxstudio memory MODEL --train` captures the training-mode graph."
)


class MemoryPanel(DocumentPanel, memory_form.MemoryForm):
    """The dock's controller.  ``finished(result)``: an estimate ended with a
    ``MemoryResult`` or the exception that stopped it."""

    id, title, menu = "memory", "Memory", "&View"
    requires = (TablePanel, RunPanel)  # its bytes columns; its heat by time (one heat at a time)
    finished = Signal(object)

    def build(self) -> QWidget:
        self.task: Task | None = None
        self.last: MemoryResult | None = None  # the last result shown
        self.last_json: dict[str, Any] = {}  # its JSON: the training step's timeline reads it
        self.last_state: object = None  # the graph state it was computed on
        self.last_snapshot: Snapshot | None = None  # that graph (the next one's 'before')
        self._started: tuple[object, Snapshot | None] = (None, None)
        self._verdict = ""
        self.plot: Any = None  # the MemoryPlot, made at the first result (pyqtgraph loads then)
        self.marks = HeatMarks()
        self.marks.visible = False
        body = memory_form.build(self)
        self.shape = ShapeWatcher(body, lambda shape: memory_form.arrange(self, shape))
        self.train.toggled.connect(self.optimizer.setEnabled)
        self.measure.toggled.connect(self.device.setEnabled)
        self.run_button.clicked.connect(self.run)
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button.clicked.connect(self._save_chosen)
        self.heat.toggled.connect(self._heat_toggled)
        self.backward_model = self._rows_model(self.backward_table, memory_step.BACKWARD_COLUMNS)
        self.live_model = self._rows_model(self.live_table, memory_step.LIVE_COLUMNS)
        self.whole_step.toggled.connect(lambda _on: self._draw(self.last) if self.last else None)
        self.backward_button.toggled.connect(self._show_tabs)
        self.stacked.toggled.connect(lambda _on: self._draw(self.last) if self.last else None)
        self.panel(RunPanel).heat.toggled.connect(self._time_heat_toggled)
        self.selection.changed.connect(self._selected)
        # (made after the Run dock: these redraw after its heat does, so this one stays on top)
        self.ctx.canvas.layoutDone.connect(lambda _layout: self._redraw())
        self.session.profileChanged.connect(lambda _profile: self._redraw())
        self.session.graphStateChanged.connect(self._show_age)
        self.estimate_action = QAction("Estimate &memory", self)
        self.estimate_action.setObjectName("actionEstimateMemory")
        self.estimate_action.setShortcut(QKeySequence("Ctrl+Shift+M"))
        self.estimate_action.setToolTip(
            "Show the Memory dock and estimate the bytes of each node, the peak and what is live "
            "there"
        )
        self.estimate_action.triggered.connect(self.show_and_run)
        self.estimate_action.setEnabled(False)  # (until a model is open)
        return body

    def _rows_model(self, table: Any, columns: tuple[str, ...]) -> StepRowsModel:
        """A training step's rows in ``table``, sortable; a click selects the document's
        node a row comes from."""
        model = StepRowsModel([], columns, self)
        table.setModel(model)
        table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # (in order until asked)
        table.clicked.connect(self._row_chosen)
        return model

    def menu_actions(self) -> list[QAction]:
        return [self.estimate_action]

    # -- the document ---------------------------------------------------------------------

    def on_document(self, doc: GraphDocument | None) -> None:
        self.last, self.last_json, self.last_state, self.last_snapshot = None, {}, None, None
        self._verdict = ""
        self.inputs.clear()  # (the last model's sizes are not this one's: its own, as captured)
        self.inputs.setPlaceholderText(memory_form.captured(doc))
        self.summary.clear()
        self.status_label.setText("Not estimated yet." if doc is not None else "")
        self.run_button.setEnabled(doc is not None and not self.busy())
        self.save_button.setEnabled(False)
        self.estimate_action.setEnabled(doc is not None)
        if self.plot is not None:
            self.plot.clear()
        self._show_step({})
        self.panel(TablePanel).show_bytes({})
        self.marks.set_values({}, {}, HEAT_TIP)
        self._redraw()

    @property
    def stale(self) -> bool:
        """Whether the last result is of another version of the graph than the one now."""
        return self.last is not None and not self.session.is_current(self.last_state)

    def _show_age(self) -> None:
        """The graph changed (or came back): the result, its columns and heat say whether
        they are of the graph as it is now."""
        if self.last is None:
            return
        stale = self.stale
        self.panel(TablePanel).show_bytes(self._sizes(), stale)
        if self.marks.stale != stale:
            self.marks.stale = stale
            self._redraw()
        if not self.busy() and self._verdict:
            self.status_label.setText(self._verdict + (STALE_NOTE if stale else ""))

    # -- estimating -----------------------------------------------------------------------

    def request(self) -> MemoryRequest:
        """What the dock's controls say."""
        return MemoryRequest(
            inputs=self.inputs.text().strip() or None,
            train=self.train.isChecked(),
            optimizer=str(self.optimizer.currentData()),
            measure=self.measure.isChecked(),
            device=str(self.device.currentData() or "cpu"),
        )

    def busy(self) -> bool:
        return self.task is not None

    def show_and_run(self) -> None:
        """*View ▸ Estimate memory*: the dock shown, brought forward, and an estimate run."""
        self.dock.show()
        self.dock.raise_()
        self.run()

    def run(self) -> None:
        """Estimate the graph as it is now (and, once it changed since the last estimate,
        the graph of that one as 'before')."""
        if self.document is None or self.busy():
            return
        request = self.request()
        before = None
        if self.compare.isChecked() and self.last_snapshot is not None and self.stale:
            before = self.last_snapshot

        def work(copy: Copy) -> MemoryResult:
            against = detached(before) if before is not None else None
            return memory_flow(copy.detached(), request, against=against)

        job = run_on_copy(
            self,
            work,
            self._shown,
            stale=self._shown,
            failed=self._failed,
            held=True,  # (the snapshot keeps the shapes: the next estimate's 'before')
            states=self.session,
            parent=self,
        )
        self._started = (self.session.graph_state(), job.snapshot if job.started else None)
        task = self.task = job.task
        what = "Estimating" + (" a training step" if request.train else "")
        what += " and measuring" if request.measure else ""
        what += ", before and after" if before is not None else ""
        task.stage.connect(lambda line: self.status_label.setText(f"{what}: {line}"))
        task.finished.connect(lambda: self._ended(task))
        self.run_button.setEnabled(False)
        self.estimate_action.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.status_label.setText(f"{what}…")

    def cancel(self) -> None:
        """Drop the result (torch cannot be stopped mid-call)."""
        if self.task is not None:
            self.task.cancel()
            self.cancel_button.setEnabled(False)
            self.status_label.setText(
                "Cancelled: the estimate finishes in the background and its result is dropped."
            )

    def _ended(self, task: Task) -> None:
        if task is self.task:
            self.task = None
            self.run_button.setEnabled(self.document is not None)
            self.estimate_action.setEnabled(self.document is not None)
            self.cancel_button.setEnabled(False)

    def _failed(self, exc: BaseException) -> None:
        """A refusal (what happened, what to do) or a failure, as the dock's notice; the
        last result stays."""
        text = in_words(exc)
        if not isinstance(exc, UserError):
            text = f"The estimate failed: {text}"
        self.status_label.setText(text)
        self.finished.emit(exc)

    # -- showing a result -----------------------------------------------------------------

    def _shown(self, result: MemoryResult) -> None:
        self.last = result
        self.last_json = result.to_json()
        self.last_state, self.last_snapshot = self._started
        data = self.last_json
        peak, node = result.estimate.peak_bytes, result.estimate.peak_node or "?"
        self._verdict = f"Peak {format_bytes(peak)} of activations at {node}"
        if result.before is not None:
            was = result.before.estimate.peak_bytes
            change = f" ({(peak - was) / was:+.1%})" if was else ""
            self._verdict += f" · before {format_bytes(was)}{change}"
        if result.measured is not None:
            self._verdict += f" · measured {format_bytes(result.measured.peak_bytes)}"
        if result.training is not None:
            self._verdict += f" · training step {format_bytes(result.training.peak_bytes)}"
        training = data.get("training")
        refused = for_window(result.refused)
        if refused:  # the measurement would not fit: not started, and said why
            self._verdict += " · not measured: it would not fit"
        self.status_label.setText(self._verdict + (STALE_NOTE if self.stale else ""))
        self.status_label.setToolTip(refused)
        note = ""
        doc = self.document
        if training is not None and doc is not None and not doc.request.train:
            note = EVAL_NOTE
        self._show_step(data)
        words = memory_step.peak_words(training, self.live_model.rows) if training else ""
        self.summary.setHtml(summary_html(result, data, note, words, refused))
        self.save_button.setEnabled(True)
        self._draw(result)
        self.panel(TablePanel).show_bytes(self._sizes(), self.stale)
        self._heat_values()
        self.finished.emit(result)

    def _show_step(self, data: dict[str, Any]) -> None:
        """The training step's bar and tables (hidden without one)."""
        has = isinstance(data.get("training"), dict)
        self.backward_model.set_rows(memory_step.backward_rows(data) if has else [])
        self.live_model.set_rows(memory_step.live_rows(data) if has else [])
        for table in (self.backward_table, self.live_table):  # (what shows; long names capped)
            table.resizeColumnsToContents()
            for column in range(table.model().columnCount()):
                table.setColumnWidth(column, min(table.columnWidth(column), COLUMN_MAX))
        n, k = len(self.backward_model.rows), len(self.live_model.rows)
        self.step_tabs.setTabText(0, f"Backward nodes ({n:,})")
        self.step_tabs.setTabText(1, f"Live at the step's peak ({k:,})")
        self.step_bar.setVisible(has)
        self.step_tabs.setVisible(has and self.backward_button.isChecked())

    def _show_tabs(self, on: bool) -> None:
        """*Backward*: the tables under the plot (the plot the taller), or not."""
        self.step_tabs.setVisible(on)
        if on:
            total = max(self.step_split.height(), 200)
            self.step_split.setSizes([total * 3 // 5, total * 2 // 5])

    def _row_chosen(self, index: QModelIndex) -> None:
        """A backward node (or a value live at the peak) clicked: the document's node it
        comes from selected -- or why none is."""
        origin = str(index.data(ORIGIN_ROLE) or "")
        name = str(index.data(NAME_ROLE))
        doc = self.document
        if origin and doc is not None and origin in doc:
            self.selection.select([origin])
            self.status_label.setText(f"{name} (backward) comes from {origin}, selected.")
        elif origin:
            self.status_label.setText(
                f"{name} comes from {origin}, which the graph no longer has (it was changed "
                "since this estimate): Estimate again."
            )
        else:
            self.status_label.setText(f"{name} {memory_step.NO_ORIGIN}.")

    def _sizes(self) -> dict[str, tuple[int, int]]:
        nodes = self.last.estimate.nodes if self.last is not None else ()
        return {n.name: (n.bytes, n.live_bytes) for n in nodes}

    def _draw(self, result: MemoryResult) -> None:
        from fxstudio.qt.panels.memory.plot import MemoryPlot  # (pyqtgraph: 0.2 s)

        if self.plot is None:
            self.plot = MemoryPlot(self.plot_box)
            self.plot.setObjectName("memoryPlot")
            self.plot.pointClicked.connect(self._choose)
            self.placeholder.hide()
            self.plot_layout.addWidget(self.plot)
            self.plot.show()  # (now: a layout shows a new child a turn later)
        if result.training is not None and self.whole_step.isChecked():
            training = self.last_json["training"]  # (the step's timeline is read from its JSON)
            self.plot.show_step(memory_step.step_timeline(training), self.stacked.isChecked())
            self.plot.highlight(self.selection.names)
            return
        now = _timeline("now" if result.before is not None else "estimate", result)
        before = None
        before_params = None
        if result.before is not None:
            before = _timeline("before", result.before)
            before_params = result.before.estimate.params_bytes
        measured = _measured(result)
        params = result.estimate.params_bytes
        if not self.stacked.isChecked():
            params, before_params = 0, 0
        self.plot.show_timelines(now, params, before, before_params, measured)
        self.plot.highlight(self.selection.names)

    def _choose(self, name: str) -> None:
        doc = self.document
        if doc is not None and name in doc:
            self.selection.select([name])

    def _selected(self, names: list[str]) -> None:
        if self.plot is not None:
            self.plot.highlight(names)
        if names and self.step_tabs.isVisible():  # the backward's first node of it, shown
            table = self.backward_table
            if str(table.currentIndex().data(ORIGIN_ROLE) or "") in names:
                return
            wanted = set(names)
            for row, shown in enumerate(self.backward_model.rows):
                if shown["origin"] in wanted:
                    index = self.backward_model.index(row, 1)
                    table.setCurrentIndex(index)
                    table.scrollTo(index)
                    return

    # -- the heat by bytes ----------------------------------------------------------------

    def _heat_values(self) -> None:
        shown = self.last.estimate if self.last is not None else None
        sizes = {n.name: float(n.bytes) for n in shown.nodes if n.bytes > 0} if shown else {}
        modules = (
            {m.path: float(m.bytes) for m in shown.modules if m.path and m.bytes} if shown else {}
        )
        labels = {name: format_bytes(b) for name, b in sizes.items()}
        self.marks.set_values(sizes, labels, HEAT_TIP, modules, format_bytes)
        self.marks.stale = self.stale
        self._redraw()

    def _heat_toggled(self, on: bool) -> None:
        self.marks.visible = on
        if on:
            self.panel(RunPanel).heat.setChecked(False)  # one heat at a time
        self._redraw()

    def _time_heat_toggled(self, on: bool) -> None:
        if on:
            self.heat.setChecked(False)

    def _redraw(self) -> None:
        """Draw the heat by bytes (when on) over whatever was drawn before; when off, take
        its tints away without taking the canvas's tags from the heat by time."""
        scene = self.ctx.canvas.scene
        if self.marks.visible and self.marks.nodes:
            self.marks.redraw(scene)
            return
        if self.marks.items or self.marks.tags:
            take_off(self.marks.items)
            self.marks.items, self.marks.tags = [], []
            if scene is not None and getattr(scene, "heat", None) is self.marks:
                scene.heat = None  # type: ignore[attr-defined]
                scene.update()

    # -- saving ---------------------------------------------------------------------------

    def _save_chosen(self) -> None:
        chosen = ask_save_path(self.dock, "Save memory JSON", "memory.json", (JSON_TYPE,))
        if chosen is not None:
            self.save(chosen[0])

    def save(self, path: Path) -> bool:
        """Write the last result as ``fxstudio memory --json`` does (atomically); a failure
        is a message and leaves no partial file."""
        try:
            if self.last is None:
                raise UserError("Nothing to save yet: estimate the memory first (Estimate).")
            self.last.write(path)
        except (UserError, OSError) as exc:
            self.message.emit(str(exc))
            return False
        self.status_label.setText(f"Wrote {path}")
        return True


def _timeline(label: str, result: MemoryResult) -> Timeline:
    """The estimated timeline of one side (a ``memory_plot.Timeline``): each node's live bytes
    after it ran, and what it allocated."""
    from fxstudio.qt.panels.memory.plot import Timeline

    nodes = result.estimate.nodes
    return Timeline(
        label,
        tuple(n.name for n in nodes),
        tuple(n.live_bytes for n in nodes),
        tuple(n.bytes for n in nodes),
    )


def _measured(result: Any) -> Any:
    """The measured timeline (a ``memory_plot.Timeline``: the bytes live while each node ran,
    as measured), when the result was measured."""
    from fxstudio.qt.panels.memory.plot import Timeline

    agreement = getattr(result, "measured", None)
    measured = getattr(agreement, "measured", agreement)  # (the measurement itself)
    details = tuple(getattr(measured, "details", ()) or ())
    if not details:
        return None
    device = getattr(measured, "device", "")
    names = tuple(d.name for d in details)
    return Timeline(f"measured on {device}", names, tuple(d.running_bytes for d in details))


def summary_html(
    result: Any, data: dict[str, Any], note: str = "", peak: str = "", refused: str = ""
) -> str:
    """The result in words (``describe()``, as the command line prints it), why the
    measurement asked for was not made (``refused``: the numbers, what to do) and, for a
    training step, its breakdown as a small table, what is live at its peak (``peak``:
    HTML) and ``note``."""
    parts = []
    if refused:
        lines = "<br>".join(html.escape(line) for line in refused.splitlines())
        parts.append(f"<span style='color: {REFUSED_COLOUR}'><b>Not measured.</b> {lines}</span>")
    for line in str(result.describe()).splitlines():
        if not line.strip().startswith("not measured:"):  # (said above, whole)
            parts.append(html.escape(line) if line.strip() else "")
    text = "<br>".join(parts)
    training = data.get("training")
    if isinstance(training, dict):
        rows = [
            ("parameters", training.get("params_bytes")),
            ("gradients", training.get("grads_bytes")),
            ("optimizer state", training.get("optimizer_bytes")),
            ("saved activations", training.get("saved_bytes")),
            ("peak of the step", training.get("peak_bytes")),
        ]
        cells = "".join(
            f"<tr><td>{what}</td><td align='right'>&nbsp;{format_bytes(int(v))}</td></tr>"
            for what, v in rows
            if v is not None
        )
        text += f"<p><b>Training step</b></p><table>{cells}</table>{peak}"
        if note:
            text += f"<p><i>{html.escape(note)}</i></p>"
    return f"<div style='font-size: small'>{text}</div>"
