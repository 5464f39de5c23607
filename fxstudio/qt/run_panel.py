"""The Run dock: run the document's model on a chosen device and time it, in a worker thread
(the window stays live), on a snapshot of the graph (edits made meanwhile do not reach the
run, and the run never changes the document).
"""

from __future__ import annotations

import copy

import torch
import torch.fx as fx
from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.document import GraphDocument
from fxstudio.core.errors import UserError
from fxstudio.core.guard import format_bytes
from fxstudio.core.runtime.devices import available, cpu_threads
from fxstudio.core.runtime.run import DTYPES, WholeModel, profile_whole
from fxstudio.qt.workers import Task


class RunPanel(QObject):
    """The dock's controller; ``dock`` is the widget the main window places."""

    finished = Signal(object)  # a WholeModel, or the exception that stopped the run

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.document: GraphDocument | None = None
        self.task: Task | None = None
        self.last: WholeModel | None = None
        self.dock = QDockWidget("Run", parent)
        self.dock.setObjectName("runDock")
        body = QWidget(self.dock)
        layout = QVBoxLayout(body)
        form = QFormLayout()
        self.device = QComboBox(body)
        self.device.setObjectName("runDevice")
        for d in available():
            extra = f" · {d.threads} threads" if d.kind == "cpu" else ""
            if d.free_bytes is not None:
                extra = f" · {format_bytes(d.free_bytes)} free"
            self.device.addItem(f"{d.name} — {d.label}{extra}", d.name)
        self.threads = QSpinBox(body)
        self.threads.setObjectName("runThreads")
        self.threads.setRange(1, max(1, cpu_threads()))
        self.threads.setValue(torch.get_num_threads())
        self.dtype = QComboBox(body)
        self.dtype.setObjectName("runDtype")
        self.dtype.addItem("as captured", None)
        for name in DTYPES:
            if name != "float32":
                self.dtype.addItem(f"{name} (cast)", name)
        self.min_time = QDoubleSpinBox(body)
        self.min_time.setObjectName("runMinTime")
        self.min_time.setRange(0.01, 60.0)
        self.min_time.setValue(1.0)
        self.min_time.setSuffix(" s")
        form.addRow("Device", self.device)
        form.addRow("CPU threads", self.threads)
        form.addRow("Dtype", self.dtype)
        form.addRow("Timed for at least", self.min_time)
        layout.addLayout(form)
        row = QHBoxLayout()
        self.run_button = QPushButton("Run and time", body)
        self.run_button.setObjectName("runButton")
        self.run_button.clicked.connect(self.run)
        self.status = QLabel("Not run yet.", body)
        self.status.setObjectName("runStatus")
        self.status.setWordWrap(True)
        row.addWidget(self.run_button)
        row.addWidget(self.status, 1)
        layout.addLayout(row)
        self.result = QPlainTextEdit(body)
        self.result.setObjectName("runResult")
        self.result.setReadOnly(True)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.result.setFont(mono)
        layout.addWidget(self.result, 1)
        self.dock.setWidget(body)

    def set_document(self, doc: GraphDocument | None) -> None:
        self.document = doc
        self.run_button.setEnabled(doc is not None)

    def snapshot(self) -> GraphDocument:
        """The model as it is now, for the worker: the graph copied, weights shared."""
        doc = self.document
        assert doc is not None
        doc.ensure_compiled()
        gm = fx.GraphModule(doc.graph_module, copy.deepcopy(doc.graph))
        return GraphDocument(gm, doc.source, doc.example_inputs)

    def run(self) -> None:
        if self.document is None or (self.task is not None and self.task.isRunning()):
            return
        snap = self.snapshot()
        device = str(self.device.currentData())
        dtype = self.dtype.currentData()
        threads = self.threads.value() if device == "cpu" else None
        min_time = self.min_time.value()
        self.task = Task(lambda: profile_whole(snap, device, threads, dtype, min_time), self)
        self.task.succeeded.connect(self._done)
        self.task.failed.connect(self._failed)
        self.run_button.setEnabled(False)
        self.status.setText(f"Running on {device}…")
        self.task.start()

    def _done(self, result: WholeModel) -> None:
        self.last = result
        self.run_button.setEnabled(True)
        t = result.timing
        self.status.setText(
            f"median {t.median_s * 1e3:.3f} ms · {result.throughput:,.1f} items/s"
            + (" · NOISY" if t.noisy else "")
        )
        self.result.setPlainText(result.describe())
        self.finished.emit(result)

    def _failed(self, exc: BaseException) -> None:
        self.run_button.setEnabled(True)
        text = str(exc) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"
        self.status.setText("The run failed.")
        self.result.setPlainText(text)
        self.finished.emit(exc)
