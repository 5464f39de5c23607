"""The Run dock's widgets, laid out; the panel connects their signals.  :func:`arrange`
lays them out again when the dock turns from a column into a strip along the window."""

from __future__ import annotations

import torch
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QBoxLayout,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QGridLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.flows.run import cpu_threads, device_choices, dtype_choices
from fxstudio.qt.forms import FitScrollArea, FlowLayout, text_label
from fxstudio.qt.panels.run.bar_chart import BarChart, ChartRow

QWIDGETSIZE_MAX = (1 << 24) - 1

#: The node table's columns, what a narrow dock shows first: name, time and share.
NODE_COLUMNS = ("Node", "Time", "Share", "±IQR", "FLOP/s", "Bound", "FLOPs", "Module")
TIME_COLUMN = 1
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


class RunForm:
    """The Run dock's widgets, as :func:`build` makes them on the panel (declared here so
    the panel's uses of them are type-checked)."""

    device: QComboBox
    module: QComboBox
    threads: QSpinBox
    dtype: QComboBox
    batch: QSpinBox
    min_time: QDoubleSpinBox
    compile: QComboBox
    per_node: QCheckBox
    heat: QCheckBox
    options_box: QWidget
    run_button: QPushButton
    cancel_button: QPushButton
    export_button: QToolButton
    export_trace_action: QAction
    export_csv_action: QAction
    export_json_action: QAction
    pin_button: QPushButton
    compare_button: QPushButton
    graphs_button: QPushButton
    options_button: QToolButton
    options_line: QLabel
    baseline_label: QLabel
    status_label: QLabel
    controls: FitScrollArea
    result: QTextBrowser
    tabs: QTabWidget
    node_table: QTableWidget
    node_chart: BarChart
    module_chart: BarChart
    top_page: QScrollArea
    compare_table: QTableWidget
    results: QSplitter
    body_layout: QBoxLayout


def table(columns: tuple[str, ...], name: str, parent: QWidget) -> QTableWidget:
    t = QTableWidget(0, len(columns), parent)
    t.setObjectName(name)
    t.setHorizontalHeaderLabels(list(columns))
    t.setSortingEnabled(True)
    t.verticalHeader().hide()
    t.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    t.horizontalHeader().setStretchLastSection(True)
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)  # dense rows
    t.setWordWrap(False)
    return t


def build(panel: RunForm) -> QWidget:
    """Make the widgets on ``panel`` (``panel.device``, ``panel.run_button``…); returns the
    dock's body."""
    body = QWidget()
    panel.device = QComboBox(body)
    panel.device.setObjectName("runDevice")
    for label, name in device_choices():
        panel.device.addItem(label, name)
    panel.threads = QSpinBox(body)
    panel.threads.setObjectName("runThreads")
    panel.threads.setRange(1, max(1, cpu_threads()))
    panel.threads.setValue(torch.get_num_threads())
    panel.dtype = QComboBox(body)
    panel.dtype.setObjectName("runDtype")
    for label, value in dtype_choices():
        panel.dtype.addItem(label, value)
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
    panel.module = QComboBox(body)
    panel.module.setObjectName("runModule")
    panel.module.setSizeAdjustPolicy(
        QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
    )
    panel.module.setMinimumContentsLength(6)
    panel.module.setToolTip(
        "Run one module alone (the part of a large model that fits): taken out of the graph at "
        "its real width, with its weights (random ones for a structure-only model) and inputs "
        "of the recorded shapes. Or right-click a module on the canvas: Run this module."
    )
    form_widget = QWidget(body)
    form_widget.setObjectName("runOptions")
    form = QGridLayout(form_widget)
    form.setContentsMargins(0, 0, 0, 0)
    form.addWidget(QLabel("Module", body), 0, 0)
    form.addWidget(panel.module, 0, 1, 1, 3)
    form.addWidget(QLabel("Device", body), 1, 0)
    form.addWidget(panel.device, 1, 1, 1, 3)
    form.addWidget(QLabel("Threads", body), 2, 0)
    form.addWidget(panel.threads, 2, 1)
    form.addWidget(QLabel("Dtype", body), 2, 2)
    form.addWidget(panel.dtype, 2, 3)
    form.addWidget(QLabel("Time at least", body), 3, 0)
    form.addWidget(panel.min_time, 3, 1)
    form.addWidget(QLabel("Batch", body), 3, 2)
    form.addWidget(panel.batch, 3, 3)
    form.addWidget(QLabel("Run as", body), 4, 0)
    form.addWidget(panel.compile, 4, 1, 1, 3)
    form.addWidget(panel.per_node, 5, 0, 1, 4)
    form.addWidget(panel.heat, 6, 0, 1, 4)
    form.setColumnStretch(1, 1)
    form.setColumnStretch(3, 1)
    for combo in (panel.device, panel.dtype, panel.compile):  # no combo sets the dock's width
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(6)
    panel.options_box = form_widget
    form_widget.hide()

    buttons = FlowLayout()
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
    panel.graphs_button = QPushButton("Graphs…", body)
    panel.graphs_button.setObjectName("runCompareGraphs")
    panel.graphs_button.setToolTip(
        "Open the baseline and the graph as it is now side by side: nodes aligned, what was "
        "removed, added and changed, values and times compared node by node"
    )
    panel.graphs_button.setEnabled(False)
    panel.options_button = QToolButton(body)
    panel.options_button.setObjectName("runOptionsButton")
    panel.options_button.setText("Options")
    panel.options_button.setCheckable(True)
    panel.options_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    panel.options_button.setArrowType(Qt.ArrowType.RightArrow)
    panel.options_button.setToolTip("Show or hide the device, dtype, batch and timing options")
    for b in (
        panel.run_button,
        panel.cancel_button,
        panel.pin_button,
        panel.compare_button,
        panel.graphs_button,
    ):
        buttons.addWidget(b)
    buttons.addWidget(panel.export_button)
    buttons.addWidget(panel.options_button)
    panel.options_line = text_label(body, "runOptionsLine")
    panel.options_line.setToolTip("What the next run uses (Options to change it)")
    panel.baseline_label = text_label(body, "runBaseline")
    panel.baseline_label.setText("No baseline pinned.")
    panel.status_label = text_label(body, "runStatus")
    panel.status_label.setText("Not run yet.")

    controls = QWidget(body)
    controls_layout = QVBoxLayout(controls)
    controls_layout.setContentsMargins(0, 0, 0, 0)
    controls_layout.addLayout(buttons)
    controls_layout.addWidget(panel.options_line)
    controls_layout.addWidget(form_widget)
    controls_layout.addWidget(panel.status_label)
    controls_layout.addWidget(panel.baseline_label)
    controls_layout.addStretch(1)
    panel.controls = FitScrollArea(controls, body)
    panel.controls.setObjectName("runControls")

    panel.result = QTextBrowser(body)
    panel.result.setObjectName("runResult")
    panel.result.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    panel.result.setPlaceholderText("The run's summary appears here.")
    panel.tabs = QTabWidget(body)
    panel.tabs.setObjectName("runTabs")
    panel.tabs.setDocumentMode(True)
    panel.node_table = table(NODE_COLUMNS, "runNodes", body)
    charts = ChartRow(body)  # side by side when they fit, else one above the other
    panel.node_chart = BarChart(charts)
    panel.node_chart.setObjectName("runNodeChart")
    panel.module_chart = BarChart(charts)
    panel.module_chart.setObjectName("runModuleChart")
    charts.add(panel.node_chart)
    charts.add(panel.module_chart)
    scroll = QScrollArea(body)
    scroll.setObjectName("runTop")
    panel.top_page = scroll
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QScrollArea.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # (they fit)
    scroll.setWidget(charts)
    panel.compare_table = table(COMPARE_COLUMNS, "runCompareTable", body)
    panel.tabs.addTab(panel.node_table, "Nodes")
    panel.tabs.addTab(scroll, "Top")
    panel.tabs.addTab(panel.compare_table, "Before / after")
    panel.results = QSplitter(body)
    panel.results.setObjectName("runResults")
    panel.results.setChildrenCollapsible(False)
    panel.results.addWidget(panel.result)
    panel.results.addWidget(panel.tabs)
    panel.body_layout = QBoxLayout(QBoxLayout.Direction.TopToBottom, body)
    panel.body_layout.setContentsMargins(4, 4, 4, 4)
    panel.body_layout.addWidget(panel.controls)
    panel.body_layout.addWidget(panel.results, 1)
    return body


CONTROLS_WIDTH = 300  # the controls' column when the dock is a strip along the bottom


def arrange(panel: RunForm, shape: str) -> None:
    """``wide`` (the dock along the window's bottom): the controls in a column on the left,
    the summary and the tabs side by side.  ``tall`` (a column): the controls on top, the
    summary above the tabs.  ``small`` (a short column): the summary is the tabs' first
    page, so the tables keep the height.  (The Top tab's charts go side by side by their
    own width.)"""
    wide = shape == "wide"
    direction = QBoxLayout.Direction
    panel.body_layout.setDirection(direction.LeftToRight if wide else direction.TopToBottom)
    c = panel.controls
    c.setMaximumWidth(CONTROLS_WIDTH if wide else QWIDGETSIZE_MAX)  # (no minimum: a dock
    panel.body_layout.setStretchFactor(c, 1 if wide else 0)  # made narrow at once must be)
    panel.body_layout.setStretchFactor(panel.results, 3 if wide else 1)
    vertical = QSizePolicy.Policy.Preferred if wide else QSizePolicy.Policy.Maximum
    c.setSizePolicy(QSizePolicy.Policy.Preferred, vertical)
    tabbed = panel.tabs.indexOf(panel.result) >= 0
    if shape == "small" and not tabbed:
        panel.tabs.insertTab(0, panel.result, "Summary")
        panel.tabs.setCurrentIndex(0)
    elif shape != "small" and tabbed:
        panel.tabs.removeTab(panel.tabs.indexOf(panel.result))
        panel.results.insertWidget(0, panel.result)
        panel.result.show()
    split = panel.results
    split.setOrientation(Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical)
    if shape != "small":  # (sizes are weights: the splitter shares its room in this ratio)
        split.setSizes([4000, 6000] if wide else [3000, 7000])


def options_text(panel: RunForm) -> str:
    """The options in one line (shown while they are folded away)."""
    device = str(panel.device.currentData())
    module = panel.module.currentData()
    parts = [f"module {module} alone" if module else "the whole model", device]
    if device == "cpu":
        parts.append(f"{panel.threads.value()} threads")
    parts += [
        panel.dtype.currentText(),
        f"at least {panel.min_time.value():g} s",
        f"batch {panel.batch.value()}" if panel.batch.value() else "batch as captured",
        panel.compile.currentText().replace(" (the graph as it is)", ""),
    ]
    if panel.per_node.isChecked():
        parts.append("per node")
    return " · ".join(parts)
