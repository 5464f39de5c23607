"""The Compile dock: where torch.compile's Dynamo breaks the model into several graphs, and
why (:func:`fxstudio.core.flows.compile_flow`, as ``fxstudio compile --explain``).

*Find graph breaks* runs Dynamo's explain over the eager model (built again from the
document's source, in a worker: it runs the model's code) on the example inputs.  The dock
lists each break at the user's file and line with its kind; the one picked says Dynamo's
reason and what to change, and on the canvas the nodes made at that line (or the first ones
after it) are selected and marked ✂ -- where one graph ends and the next begins.  A model
Dynamo captures whole says so.

The *Kernels* tab compiles the model and times its kernels (:mod:`.compile_kernels`); a
model with graph breaks is compiled as torch.compile does, and its breaks and graphs are
shown here too.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import (
    QGraphicsRectItem,
    QGraphicsSimpleTextItem,
    QLabel,
    QListWidget,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.flows import CompileRequest, compile_flow
from fxstudio.core.flows.compile import Explained, GraphBreak, break_place, graph_nodes
from fxstudio.core.graph.document import DocumentEvent, GraphDocument
from fxstudio.qt.canvas.marks import take_off
from fxstudio.qt.panels.base import DocumentPanel, in_words
from fxstudio.qt.panels.compile.kernels import KernelsTab
from fxstudio.qt.panels.run.panel import RunPanel
from fxstudio.qt.workers import UserCodeTask

BREAK = QColor("#c62828")


class CompilePanel(DocumentPanel):
    id, title = "compile", "Compile"
    requires = (RunPanel,)  # its device, threads and timing budget compile and time the graph
    explained = Signal(object)  # an Explained, once shown

    def build(self) -> QWidget:
        self.result: Explained | None = None
        self.task: UserCodeTask | None = None
        self._marks: list[Any] = []
        body = QWidget()
        box = QVBoxLayout(body)
        self.find_button = QPushButton("Find graph breaks", body)
        self.find_button.setObjectName("compileFindBreaks")
        self.find_button.setToolTip(
            "Run torch.compile's Dynamo over the model on its example inputs (nothing is "
            "compiled to code) and list where it breaks the graph"
        )
        self.summary = QLabel("Where does torch.compile break this model into several graphs?")
        self.summary.setObjectName("compileSummary")
        self.summary.setWordWrap(True)
        self.breaks = QListWidget(body)
        self.breaks.setObjectName("compileBreaks")
        self.detail = QLabel("", body)
        self.detail.setObjectName("compileDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.graphs_label = QLabel("The graphs Dynamo made (pick one: its nodes are selected):")
        self.graphs = QListWidget(body)
        self.graphs.setObjectName("compileGraphs")
        for widget in (self.find_button, self.summary, self.breaks, self.detail):
            box.addWidget(widget)
        box.addWidget(self.graphs_label)
        box.addWidget(self.graphs)
        box.setStretch(2, 2)
        box.setStretch(5, 1)
        self._show_graphs(False)
        self.find_button.clicked.connect(self.find_breaks)
        self.breaks.currentRowChanged.connect(self._picked)
        self.graphs.currentRowChanged.connect(self._graph_picked)
        self.kernels = KernelsTab(self)
        tabs = QTabWidget()
        tabs.setObjectName("compileTabs")
        tabs.addTab(body, "Graph breaks")
        tabs.addTab(self.kernels, "Kernels")
        self.tabs = tabs
        self.ctx.canvas.layoutDone.connect(lambda _layout: self._redraw())
        self.dock.visibilityChanged.connect(lambda _shown: self._mark())  # (closed: none)
        return tabs

    def _redraw(self) -> None:
        self._mark()
        self.kernels.redraw()

    def on_change(self, event: DocumentEvent) -> None:
        self.kernels.graph_changed()

    def on_document(self, doc: GraphDocument | None) -> None:
        self.kernels.document_replaced()
        self.result = None
        self.breaks.clear()
        self.graphs.clear()
        self._show_graphs(False)
        self.detail.setText("")
        self.summary.setText("Where does torch.compile break this model into several graphs?")
        self.find_button.setEnabled(doc is not None)
        self._mark()

    def find_breaks(self) -> None:
        doc = self.document
        if doc is None or self.task is not None:
            return
        request = CompileRequest(doc.request, explain_only=True)
        self.find_button.setEnabled(False)
        self.summary.setText("Running Dynamo over the model…")

        def work() -> Explained:  # the model's code, one thread at a time (in the flow)
            explained = compile_flow(request).explained
            assert explained is not None  # (only explained: always found, or raised)
            return explained

        task = UserCodeTask(work, self)
        task.succeeded.connect(lambda result: self._found(doc, result))
        task.failed.connect(self._failed)
        task.finished.connect(lambda: self._ended(task))
        self.task = task
        task.start()

    def _found(self, doc: GraphDocument, result: Explained) -> None:
        """Dynamo's breaks, shown if they are of the model still open (one opened since
        must never show another's breaks)."""
        if self.document is doc:
            self.show_explained(result)

    def _ended(self, task: UserCodeTask) -> None:
        if self.task is task:
            self.task = None
        self.find_button.setEnabled(self.document is not None)

    def _failed(self, exc: BaseException) -> None:
        self.summary.setText(f"Could not run Dynamo over the model: {in_words(exc)}")

    def show_explained(self, result: Explained) -> None:
        """Dynamo's breaks and graphs of the model (found here, or by a compile)."""
        self.result = result
        self.summary.setText(result.describe().splitlines()[0])
        self.breaks.clear()
        for i, b in enumerate(result.breaks, 1):
            at = b.where
            place = f"{at.file.rsplit('/', 1)[-1]}:{at.line}" if at else "(no line of yours)"
            self.breaks.addItem(f"{i}. {place} — {b.kind}")
            self.breaks.item(i - 1).setToolTip(f"{b.reason}\n\n{b.advice}")
        self.graphs.clear()
        for i, count in enumerate(result.graph_nodes):
            lines = result.graph_lines(i) if i < len(result.graph_stacks) else []
            where = ", ".join(f"{f.rsplit('/', 1)[-1]}:{n}" for f, n in lines[:4])
            more = " …" if len(lines) > 4 else ""
            self.graphs.addItem(
                f"Graph {i + 1} — {count} nodes" + (f" · {where}{more}" if where else "")
            )
        self._show_graphs(result.graphs > 1)
        if result.breaks:
            self.breaks.setCurrentRow(0)
        self.explained.emit(result)

    def _show_graphs(self, shown: bool) -> None:
        self.graphs_label.setVisible(shown)
        self.graphs.setVisible(shown)

    def _graph_picked(self, row: int) -> None:
        doc, result = self.document, self.result
        if doc is None or result is None or not 0 <= row < len(result.graph_stacks):
            return
        names = graph_nodes(doc, result, row)
        if names:
            self.ctx.selection.select(names)
            self.ctx.canvas.center_on(names)

    def _picked(self, row: int) -> None:
        b, doc = self.current_break(), self.document
        if b is None or doc is None:
            return
        at = b.where
        code = f"<br><code>{at.text}</code>" if at and at.text else ""
        place = break_place(doc, b).describe()
        place = f"<br><i>{place}</i>" if place else ""
        self.detail.setText(f"<b>{b.kind}</b>{code}{place}<br>{b.reason}<br><br>{b.advice}")
        self._mark(pick=True)

    def current_break(self) -> GraphBreak | None:
        row = self.breaks.currentRow()
        if self.result is None or not 0 <= row < len(self.result.breaks):
            return None
        return self.result.breaks[row]

    def _mark(self, pick: bool = False) -> None:
        """The picked break on the canvas: its nodes selected, a ✂ above the first -- or,
        when its line made no node, a ✂ below the nodes right before it, none selected.
        The marks only while the dock is open (a layout without it shows none); the
        selection and the view follow only when the break is ``pick``ed."""
        take_off(self._marks)
        self._marks = []
        b, doc = self.current_break(), self.document
        if b is None or doc is None or b.where is None:
            return
        place = break_place(doc, b)
        names = place.nodes or place.before
        if pick:
            if self.ctx.selection.names != place.nodes:  # (not the nodes before it)
                self.ctx.selection.select(place.nodes)
            if names:
                self.ctx.canvas.center_on(names)
        scene = self.ctx.canvas.scene
        items = [scene.nodes[n] for n in names if n in getattr(scene, "nodes", {})]
        if not items or self.dock.isHidden():
            return
        rect = QRectF(items[0].sceneBoundingRect())
        for node in items[1:]:
            rect = rect.united(node.sceneBoundingRect())
        y = rect.top() - 12 if place.nodes else rect.bottom() + 12
        line = QGraphicsRectItem(rect.left() - 30, y, rect.width() + 60, 2)
        line.setPen(QPen(BREAK, 2, Qt.PenStyle.DashLine))
        line.setZValue(60)
        after = "" if place.nodes else f" after these (line {place.line} makes no node)"
        label = QGraphicsSimpleTextItem(f"✂ graph break{after}: {b.kind}")
        label.setBrush(BREAK)
        label.setPos(rect.right() + 34, y - 8)
        label.setZValue(60)
        for mark in (line, label):
            mark.setToolTip(f"{b.reason}\n\n{b.advice}")
            scene.addItem(mark)
        self._marks = [line, label]
