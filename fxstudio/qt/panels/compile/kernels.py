"""The Compile dock's *Kernels* tab: the model compiled with torch.compile on the Run dock's
device, its kernels timed and traced to the FX nodes they came from
(:func:`fxstudio.core.flows.compile_flow`, as ``fxstudio compile`` does).

*Compile and time* runs in a worker (its first compile can take a minute: inductor builds
C++ on the CPU).  A model Dynamo captures whole has a copy of the document's graph as it is
now compiled; a model with graph breaks (opened in part, or traced past a ``print``) is
compiled as torch.compile compiles it -- the eager model, Dynamo's graphs -- and its breaks
and graphs are shown on the *Graph breaks* tab (picking a graph selects its nodes).  The
summary says the speed-up with its CI and the compile times; the table lists the kernels,
slowest first, with their share of a call, their graph, the lines of the user's code they
compute and their nodes.  On the canvas every kernel that fused several nodes outlines them
in its colour; picking a kernel selects its nodes.  Editing the graph makes the result
stale: it is of the graph as it was.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.flows import CompileRequest, CompileResult, compile_flow
from fxstudio.core.flows.compile import Compiled, Kernel, where
from fxstudio.core.wording import for_window
from fxstudio.qt.canvas.marks import KernelMarks
from fxstudio.qt.copies import run_on_copy
from fxstudio.qt.fitting import rows_height
from fxstudio.qt.panels.base import in_words
from fxstudio.qt.panels.run.form import SortItem, table
from fxstudio.qt.panels.run.panel import RunPanel
from fxstudio.qt.workers import Task, UserCodeTask

ASK = "What does torch.compile make of this graph, and where does the time go?"
OUTSIDE = -1  # the row of the time outside every kernel (no kernel's index)
WRAPPER = "the compiled wrapper's Python, guards, buffers made between kernels"


def _nodes_text(k: Kernel) -> str:
    if k.nodes:
        return ", ".join(k.nodes)
    if k.ops:  # an eager model's kernel made at no line of the document's nodes
        return f"(none of the graph's nodes; Dynamo's {', '.join(k.ops)})"
    return "(none of the graph's nodes)"


class KernelsTab(QWidget):
    """The tab; ``panel`` is the Compile dock (its document, canvas, selection, Run dock).
    ``shown(result)`` once a compile's result is shown, ``failed(text)`` when it failed."""

    shown = Signal(object)
    failed = Signal(str)

    def __init__(self, panel: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.panel = panel
        self.result: Compiled | None = None
        self.version = -1  # the graph's version compiled
        self.stale = False
        self.task: Task | None = None
        self.marks = KernelMarks()
        box = QVBoxLayout(self)
        self.button = QPushButton("Compile and time", self)
        self.button.setObjectName("compileKernelsRun")
        self.button.setToolTip(
            "torch.compile (inductor) the graph as it is now on the Run dock's device -- or, "
            "when Dynamo breaks the model into several graphs, the model as torch.compile "
            "compiles it -- time it against eager, and time each kernel it made with the "
            "lines and nodes it came from"
        )
        self.freezing = QCheckBox("Freeze weights", self)
        self.freezing.setObjectName("compileKernelsFreezing")
        self.freezing.setToolTip(
            "inductor folds the weights as constants (inference): what is computed from the "
            "weights alone, such as copying them to the layout a library kernel takes, runs "
            "once at compile time instead of every call"
        )
        self.summary = QLabel(ASK, self)
        self.summary.setObjectName("compileKernelsSummary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        columns = ("Kernel", "ms", "share", "graph", "lines", "nodes")
        self.table: QTableWidget = table(columns, "compileKernels", self)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # the call's number shows
        self.table.setMinimumHeight(rows_height(self.table, 6))
        row = QHBoxLayout()
        row.addWidget(self.button, 1)
        row.addWidget(self.freezing)
        box.addLayout(row)
        box.addWidget(self.summary)
        box.addWidget(self.table, 1)
        self.button.clicked.connect(self.start)
        self.table.itemSelectionChanged.connect(self._picked)

    # -- running ----------------------------------------------------------------------

    def start(self) -> None:
        doc = self.panel.document
        if doc is None or self.task is not None:
            return
        run = self.panel.panel(RunPanel)
        options = run.options(compare=True)
        self.version = doc.version
        device, threads, min_time = options.device, options.threads, options.min_time
        freezing = self.freezing.isChecked()
        model = doc.request  # the eager model, built again if needed (it runs the model's code)
        explained = self.panel.result  # Dynamo's breaks, when found for this document

        self.button.setEnabled(False)
        self.summary.setText(
            f"Compiling on {device} (the first compile of a graph can take a minute)…"
        )
        job = run_on_copy(
            self.panel,
            lambda copy: compile_flow(
                CompileRequest(
                    model,
                    document=copy.detached(),
                    explained=explained,
                    device=device,
                    threads=threads,
                    min_time=min_time,
                    freezing=freezing,
                )
            ),
            lambda flow: self._shown(flow, stale=False),
            # edited meanwhile, or another model open: shown, of the graph as it was
            stale=lambda flow: self._shown(flow, stale=True),
            gone=lambda flow: self._shown(flow, stale=True),
            failed=self._failed,
            kind=UserCodeTask,
            parent=self,
        )
        task = job.task
        task.finished.connect(lambda: self._ended(task))
        self.task = task

    def _failed(self, exc: BaseException) -> None:
        text = f"Could not compile the graph: {in_words(exc)}"
        self.summary.setText(text)
        self.failed.emit(text)

    def _ended(self, task: Task) -> None:
        if self.task is task:
            self.task = None
        self.button.setEnabled(self.panel.document is not None)

    def _shown(self, flow: CompileResult, stale: bool) -> None:
        result = flow.compiled
        assert result is not None  # (compiled: not only explained)
        self.result, self.stale = result, stale
        if result.explained is not None and result.explained is not self.panel.result:
            self.panel.show_explained(result.explained)  # its breaks marked, graphs listed
        self._summarise()
        self.table.setSortingEnabled(False)
        rows: list[tuple[int, str, float, Kernel | None]] = [
            (i, k.short_name + ("  (library)" if k.library else ""), k.time_s, k)
            for i, k in enumerate(result.kernels)
        ]
        outside = WRAPPER + (", your code at the breaks" if result.source == "model" else "")
        if result.kernels:  # parts + outside = the profiled call, as the eager profile's gap
            rows.append((OUTSIDE, "(outside every kernel)", result.unattributed_s, None))
        self.table.setRowCount(len(rows))
        for row, (index, text, seconds, k) in enumerate(rows):
            nodes = outside if k is None else _nodes_text(k)
            lines = where(k.lines, 3) if k is not None else ""
            name = SortItem(text, text)
            name.setData(Qt.ItemDataRole.UserRole, index)
            name.setToolTip(f"{text}\n\n{where(k.lines) if k else ''}\n{nodes}".strip())
            share = seconds / result.profiled_s if result.profiled_s > 0 else 0.0
            graph = k.graph + 1 if k is not None else 0
            cells = (
                name,
                SortItem(f"{seconds * 1e3:.3f}", seconds),
                SortItem(f"{share:.1%}", share),
                SortItem(str(graph) if graph else "", graph),
                SortItem(lines, lines),
                SortItem(nodes, len(k.nodes) if k else 0),
            )
            for col, cell in enumerate(cells):
                self.table.setItem(row, col, cell)
        self.table.setSortingEnabled(True)
        self.table.sortItems(1, Qt.SortOrder.DescendingOrder)  # the slowest first
        self.table.resizeColumnsToContents()
        # inductor names a fused kernel after every op it fused (150 characters for an
        # attention's inputs): the name is cut in the middle, whole in its tooltip
        widest = max(260, self.table.viewport().width() * 2 // 5)
        self.table.setColumnWidth(0, min(self.table.columnWidth(0), widest))
        self.marks.groups = [(k.name, k.nodes, self._tip(k)) for k in result.kernels]
        self.marks.current = None
        self.redraw()
        self.shown.emit(result)

    def _summarise(self) -> None:
        r = self.result
        if r is None:
            self.summary.setText(ASK)
            return
        s = r.speed
        model = f"the eager model, {r.graphs} graphs, " if r.source == "model" else ""
        lines = [
            f"Compiled ({model}{r.backend}{', weights frozen' if r.freezing else ''}, "
            f"{r.device}): "
            f"<b>{s.verdict}</b>. Eager "
            f"{s.before_s * 1e3:.3f} ms → {s.after_s * 1e3:.3f} ms, speed-up {s.speedup:.2f}× "
            f"(95 % CI {s.ci_low:.2f}–{s.ci_high:.2f}, p = {s.p_value:.2g})",
            f"Compiled in {r.compile_s:.1f} s (FX graph cache: {r.cache}); again with warm "
            f"caches {r.warm_compile_s:.1f} s.",
        ]
        if r.kernels:
            fused = sum(1 for k in r.kernels if len(k.nodes) > 1)
            lines.append(
                f"{len(r.kernels)} kernels ({fused} fusing several nodes, outlined on the "
                f"canvas) take {r.kernel_share:.0%} of a profiled call; "
                f"{r.unattributed_s * 1e3:.3f} ms is outside every kernel."
            )
        if r.no_kernel:
            lines.append(
                f"No kernel of their own: {', '.join(r.no_kernel[:8])}"
                + (" …" if len(r.no_kernel) > 8 else "")
            )
        lines += [for_window(n) for n in r.notes]
        if self.stale:
            lines.insert(0, "<i>The graph changed since: this is of the graph as it was.</i>")
        self.summary.setText("<br>".join(lines))

    def _tip(self, k: Kernel) -> str:
        return f"kernel {k.name}: {k.time_s * 1e3:.3f} ms ({k.share:.1%} of a call)"

    # -- looking ------------------------------------------------------------------------

    def _current_index(self) -> int | None:
        """The picked row's kernel, as its index in the result's list."""
        rows = self.table.selectionModel().selectedRows()
        if self.result is None or not rows:
            return None
        item = self.table.item(rows[0].row(), 0)
        if item is None:
            return None
        index = int(item.data(Qt.ItemDataRole.UserRole))
        return None if index == OUTSIDE else index

    def pick(self, index: int) -> None:
        """Pick the result's kernel ``index`` (its row selected and scrolled to)."""
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.data(Qt.ItemDataRole.UserRole) == index:
                self.table.selectRow(row)
                self.table.scrollToItem(item, QTableWidget.ScrollHint.PositionAtCenter)
                return

    def current_kernel(self) -> Kernel | None:
        index = self._current_index()
        return None if index is None or self.result is None else self.result.kernels[index]

    def _picked(self) -> None:
        self.marks.current = self._current_index()
        k = self.current_kernel()
        self.redraw()
        doc = self.panel.document
        if k is not None and doc is not None:
            names = [n for n in k.nodes if n in doc]
            if names:
                self.panel.ctx.selection.select(names)
                self.panel.ctx.canvas.center_on(names)

    def redraw(self) -> None:
        self.marks.redraw(self.panel.ctx.canvas.scene if self.result and not self.stale else None)

    def document_replaced(self) -> None:
        self.result, self.stale = None, False
        self.table.setRowCount(0)
        self.marks.groups, self.marks.current = [], None
        self._summarise()
        self.button.setEnabled(self.panel.document is not None)
        self.redraw()

    def graph_changed(self) -> None:
        doc = self.panel.document
        if (
            self.result is not None
            and not self.stale
            and doc is not None
            and doc.version != self.version
        ):
            self.stale = True
            self._summarise()
            self.redraw()
