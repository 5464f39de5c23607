"""The Run dock's widgets, laid out; the panel connects their signals."""

from __future__ import annotations

from typing import Any

import torch
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.guard import format_bytes
from fxstudio.core.runtime.devices import available, cpu_threads
from fxstudio.core.runtime.run import DTYPES
from fxstudio.qt.panels.bar_chart import BarChart

NODE_COLUMNS = ("Node", "Module", "Time", "±IQR", "Share", "FLOPs", "FLOP/s", "Bound")
COMPARE_COLUMNS = ("Row", "Before", "After", "Speed-up", "95 % CI", "Verdict")


class SortItem(QTableWidgetItem):
    """A cell shown as text, sorted by a number."""

    def __init__(self, text: str, key: float | str) -> None:
        super().__init__(text)
        self.key = key
        self.setFlags(self.flags() & ~Qt.ItemFlag.ItemIsEditable)

    def __lt__(self, other: QTableWidgetItem) -> bool:
        theirs = getattr(other, "key", other.text())
        if isinstance(self.key, str) or isinstance(theirs, str):
            return str(self.key) < str(theirs)
        return self.key < theirs


def table(columns: tuple[str, ...], name: str, parent: QWidget) -> QTableWidget:
    t = QTableWidget(0, len(columns), parent)
    t.setObjectName(name)
    t.setHorizontalHeaderLabels(list(columns))
    t.setSortingEnabled(True)
    t.verticalHeader().hide()
    t.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    t.horizontalHeader().setStretchLastSection(True)
    return t


def build(panel: Any) -> QWidget:
    """Make the widgets on ``panel`` (``panel.device``, ``panel.run_button``…); returns the
    dock's body."""
    body = QWidget()
    layout = QVBoxLayout(body)
    panel.device = QComboBox(body)
    panel.device.setObjectName("runDevice")
    for d in available():
        extra = f" · {d.threads} threads" if d.kind == "cpu" else ""
        if d.free_bytes is not None:
            extra = f" · {format_bytes(d.free_bytes)} free"
        panel.device.addItem(f"{d.name} — {d.label}{extra}", d.name)
    panel.threads = QSpinBox(body)
    panel.threads.setObjectName("runThreads")
    panel.threads.setRange(1, max(1, cpu_threads()))
    panel.threads.setValue(torch.get_num_threads())
    panel.dtype = QComboBox(body)
    panel.dtype.setObjectName("runDtype")
    panel.dtype.addItem("as captured", None)
    for name in DTYPES:
        if name != "float32":
            panel.dtype.addItem(f"{name} (cast)", name)
    for name in ("bfloat16", "float16"):
        panel.dtype.addItem(f"{name} (autocast)", f"autocast:{name}")
    panel.batch = QSpinBox(body)
    panel.batch.setObjectName("runBatch")
    panel.batch.setRange(0, 4096)
    panel.batch.setSpecialValueText("as captured")
    panel.batch.setToolTip("Items per call: the example inputs' rows repeated to this many")
    panel.min_time = QDoubleSpinBox(body)
    panel.min_time.setObjectName("runMinTime")
    panel.min_time.setRange(0.01, 60.0)
    panel.min_time.setValue(1.0)
    panel.min_time.setSuffix(" s")
    panel.compile = QComboBox(body)
    panel.compile.setObjectName("runCompile")
    panel.compile.addItem("eager (the graph as it is)", None)
    for backend in ("inductor", "aot_eager", "eager"):
        panel.compile.addItem(f"torch.compile({backend})", backend)
    panel.compile.setToolTip(
        "Time torch.compile(model, backend=…): the compiling first call is reported apart and "
        "a recompilation inside the timed loop marks the run invalid (no per-node profile)"
    )
    panel.per_node = QCheckBox("Per node (a separate profiled run)", body)
    panel.per_node.setObjectName("runPerNode")
    panel.per_node.setChecked(True)
    panel.per_node.setToolTip(
        "After the clean timing, profile the graph node by node under torch.profiler: times, "
        "shares, FLOPs and roofline per node and per module. Never mixed into the headline."
    )
    panel.heat = QCheckBox("Heat on the canvas", body)
    panel.heat.setObjectName("runHeat")
    panel.heat.setChecked(True)
    form = QGridLayout()
    form.addWidget(QLabel("Device", body), 0, 0)
    form.addWidget(panel.device, 0, 1, 1, 3)
    form.addWidget(QLabel("Threads", body), 1, 0)
    form.addWidget(panel.threads, 1, 1)
    form.addWidget(QLabel("Dtype", body), 1, 2)
    form.addWidget(panel.dtype, 1, 3)
    form.addWidget(QLabel("Time at least", body), 2, 0)
    form.addWidget(panel.min_time, 2, 1)
    form.addWidget(QLabel("Batch", body), 2, 2)
    form.addWidget(panel.batch, 2, 3)
    form.addWidget(QLabel("Run as", body), 3, 0)
    form.addWidget(panel.compile, 3, 1, 1, 3)
    form.addWidget(panel.per_node, 4, 0, 1, 2)
    form.addWidget(panel.heat, 4, 2, 1, 2)
    form.setColumnStretch(3, 1)
    layout.addLayout(form)

    row = QHBoxLayout()
    panel.run_button = QPushButton("Run and time", body)
    panel.run_button.setObjectName("runButton")
    panel.cancel_button = QPushButton("Cancel", body)
    panel.cancel_button.setObjectName("runCancel")
    panel.cancel_button.setToolTip("Drop the run's result (torch cannot be stopped mid-call)")
    panel.cancel_button.setEnabled(False)
    panel.export_button = QToolButton(body)
    panel.export_button.setObjectName("runExport")
    panel.export_button.setText("Export")
    panel.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    menu = QMenu(panel.export_button)
    panel.export_trace_action = menu.addAction("Chrome/Perfetto trace…")
    panel.export_csv_action = menu.addAction("Node table as CSV…")
    panel.export_json_action = menu.addAction("Result as JSON…")
    panel.export_button.setMenu(menu)
    panel.export_button.setEnabled(False)
    panel.pin_button = QPushButton("Pin baseline", body)
    panel.pin_button.setObjectName("runPin")
    panel.pin_button.setToolTip("Keep the graph as it is now to compare a later version with")
    panel.compare_button = QPushButton("Compare", body)
    panel.compare_button.setObjectName("runCompare")
    panel.compare_button.setToolTip(
        "Time the baseline and the graph as it is now interleaved (A/B/A/B, 9 replicates a "
        "side): speed-up with a 95 % confidence interval, per module and node too"
    )
    panel.compare_button.setEnabled(False)
    for b in (panel.run_button, panel.cancel_button, panel.pin_button, panel.compare_button):
        row.addWidget(b)
    row.addWidget(panel.export_button)
    row.addStretch(1)
    layout.addLayout(row)
    panel.baseline_label = QLabel("No baseline pinned.", body)
    panel.baseline_label.setObjectName("runBaseline")
    layout.addWidget(panel.baseline_label)
    panel.status_label = QLabel("Not run yet.", body)
    panel.status_label.setObjectName("runStatus")
    panel.status_label.setWordWrap(True)
    layout.addWidget(panel.status_label)

    panel.tabs = QTabWidget(body)
    panel.tabs.setObjectName("runTabs")
    panel.result = QPlainTextEdit(body)
    panel.result.setObjectName("runResult")
    panel.result.setReadOnly(True)
    panel.result.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    mono = QFont("monospace")
    mono.setStyleHint(QFont.StyleHint.Monospace)
    panel.result.setFont(mono)
    panel.node_table = table(NODE_COLUMNS, "runNodes", body)
    charts = QWidget(body)
    charts_layout = QVBoxLayout(charts)
    panel.node_chart = BarChart(charts)
    panel.node_chart.setObjectName("runNodeChart")
    panel.module_chart = BarChart(charts)
    panel.module_chart.setObjectName("runModuleChart")
    charts_layout.addWidget(panel.node_chart)
    charts_layout.addWidget(panel.module_chart)
    charts_layout.addStretch(1)
    scroll = QScrollArea(body)
    scroll.setWidgetResizable(True)
    scroll.setWidget(charts)
    panel.compare_table = table(COMPARE_COLUMNS, "runCompareTable", body)
    panel.tabs.addTab(panel.result, "Summary")
    panel.tabs.addTab(panel.node_table, "Nodes")
    panel.tabs.addTab(scroll, "Top")
    panel.tabs.addTab(panel.compare_table, "Before / after")
    layout.addWidget(panel.tabs, 1)
    return body
