"""The Memory dock's widgets, laid out; the panel connects their signals.  :func:`arrange`
lays them out again when the dock turns from a column into a strip along the window."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QBoxLayout,
    QCheckBox,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QTableView,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.flows.run import device_choices
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.forms import FitScrollArea, FlowLayout, text_label

QWIDGETSIZE_MAX = (1 << 24) - 1
RESIZE_ROWS = 100  # the rows a table's columns are fitted to (all of 5,000: 0.5 s)
CONTROLS_WIDTH = 300  # the controls' column when the dock is a strip along the bottom
#: The optimizers a training step may take: label, what ``fxstudio memory --optimizer`` says.
OPTIMIZERS = (
    ("AdamW (2 states a parameter)", "adamw"),
    ("Adam (2 states a parameter)", "adam"),
    ("SGD with momentum (1 state)", "momentum"),
    ("SGD (no state)", "sgd"),
)
PLACEHOLDER = "as captured (e.g. 1x3x224x224 or 1x1024:int64)"
INPUTS_TIP = (
    "The inputs to estimate at, one a forward argument, as the Open dialog and --input write "
    "them: 1x3x224x224, 1x1024:int64 (comma or space between). Empty: the inputs the model "
    "was captured with. The estimate runs on fake tensors: any size, no memory used."
)


class MemoryForm:
    """The Memory dock's widgets, as :func:`build` makes them on the panel (declared here
    so the panel's uses of them are type-checked)."""

    inputs: QLineEdit
    train: QCheckBox
    optimizer: QComboBox
    measure: QCheckBox
    device: QComboBox
    heat: QCheckBox
    compare: QCheckBox
    stacked: QCheckBox
    run_button: QPushButton
    cancel_button: QPushButton
    save_button: QPushButton
    status_label: QLabel
    controls: FitScrollArea
    summary: QTextBrowser
    plot_box: QWidget  # holds the plot (made at the first result) or what stands for it
    plot_layout: QVBoxLayout
    placeholder: QLabel
    results: QSplitter
    body_layout: QBoxLayout
    step_bar: QWidget  # shown for a result with a training step
    whole_step: QCheckBox
    backward_button: QPushButton
    step_split: QSplitter  # the plot over the backward's tables
    step_tabs: QTabWidget
    backward_table: QTableView
    live_table: QTableView


def build(panel: MemoryForm) -> QWidget:
    """Make the widgets on ``panel``; returns the dock's body."""
    body = QWidget()
    panel.inputs = QLineEdit(body)
    panel.inputs.setObjectName("memoryInputs")
    panel.inputs.setPlaceholderText(PLACEHOLDER)
    panel.inputs.setToolTip(INPUTS_TIP)
    panel.inputs.setClearButtonEnabled(True)
    panel.train = QCheckBox("Training step", body)
    panel.train.setObjectName("memoryTrain")
    panel.train.setToolTip(
        "A forward and backward step and the optimizer's update: parameters, gradients, the "
        "optimizer's state and the activations saved for the backward (AOTAutograd's joint "
        "graph, on fake tensors)"
    )
    panel.optimizer = QComboBox(body)
    panel.optimizer.setObjectName("memoryOptimizer")
    for label, name in OPTIMIZERS:
        panel.optimizer.addItem(label, name)
    panel.optimizer.setEnabled(False)
    panel.optimizer.setSizeAdjustPolicy(
        QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
    )
    panel.optimizer.setMinimumContentsLength(6)
    panel.measure = QCheckBox("Measure (run it)", body)
    panel.measure.setObjectName("memoryMeasure")
    panel.measure.setToolTip(
        "Also run the model node by node and measure what it allocates (CPU: torch.profiler's "
        "memory events; CUDA: the caching allocator), beside the estimate. Needs the weights."
    )
    panel.device = QComboBox(body)
    panel.device.setObjectName("memoryDevice")
    for label, name in device_choices():
        panel.device.addItem(label, name)
    panel.device.setSizeAdjustPolicy(
        QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
    )
    panel.device.setMinimumContentsLength(6)
    panel.device.setEnabled(False)
    panel.heat = QCheckBox("Heat by bytes on the canvas", body)
    panel.heat.setObjectName("memoryHeat")
    panel.heat.setToolTip(
        "Tint each node by the bytes its output allocates (a collapsed module: the bytes "
        "allocated inside it) -- instead of the Run dock's heat by time"
    )
    panel.compare = QCheckBox("Before / after: with the graph estimated last", body)
    panel.compare.setObjectName("memoryCompare")
    panel.compare.setChecked(True)
    panel.compare.setToolTip(
        "Once the graph has changed (a rewrite, an edit) since the last estimate, the next "
        "one estimates that graph too and overlays it as 'before'"
    )
    panel.stacked = QCheckBox("Parameters under the curve", body)
    panel.stacked.setObjectName("memoryStacked")
    panel.stacked.setChecked(True)
    panel.stacked.setToolTip(
        "Draw the live activations on a band of the parameters and buffers (what the device "
        "holds), or alone (their shape at their own scale)"
    )
    form_widget = QWidget(body)
    form = QGridLayout(form_widget)
    form.setContentsMargins(0, 0, 0, 0)
    form.addWidget(QLabel("Inputs", body), 0, 0)
    form.addWidget(panel.inputs, 0, 1)
    form.addWidget(panel.train, 1, 0)
    form.addWidget(panel.optimizer, 1, 1)
    form.addWidget(panel.measure, 2, 0)
    form.addWidget(panel.device, 2, 1)
    form.addWidget(panel.compare, 3, 0, 1, 2)
    form.addWidget(panel.heat, 4, 0, 1, 2)
    form.addWidget(panel.stacked, 5, 0, 1, 2)
    form.setColumnStretch(1, 1)

    buttons = FlowLayout()
    panel.run_button = QPushButton("Estimate", body)
    panel.run_button.setObjectName("memoryRun")
    panel.run_button.setToolTip("Estimate the bytes of each node, the peak and what is live there")
    panel.run_button.setEnabled(False)
    panel.cancel_button = QPushButton("Cancel", body)
    panel.cancel_button.setObjectName("memoryCancel")
    panel.cancel_button.setToolTip("Drop the result (torch cannot be stopped mid-call)")
    panel.cancel_button.setEnabled(False)
    panel.save_button = QPushButton("Save memory JSON…", body)
    panel.save_button.setObjectName("memorySave")
    panel.save_button.setToolTip("Write the result as `fxstudio memory --json` writes it")
    panel.save_button.setEnabled(False)
    for b in (panel.run_button, panel.cancel_button, panel.save_button):
        buttons.addWidget(b)
    panel.status_label = text_label(body, "memoryStatus")
    panel.status_label.setText("Not estimated yet.")

    controls = QWidget(body)
    controls_layout = QVBoxLayout(controls)
    controls_layout.setContentsMargins(0, 0, 0, 0)
    controls_layout.addWidget(form_widget)
    controls_layout.addLayout(buttons)
    controls_layout.addWidget(panel.status_label)
    controls_layout.addStretch(1)
    panel.controls = FitScrollArea(controls, body)
    panel.controls.setObjectName("memoryControls")

    panel.summary = QTextBrowser(body)
    panel.summary.setObjectName("memorySummary")
    panel.summary.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    panel.summary.setPlaceholderText("The peak, the totals and what is live there appear here.")
    panel.plot_box = QWidget(body)
    panel.plot_box.setObjectName("memoryPlotBox")
    box_layout = QVBoxLayout(panel.plot_box)
    box_layout.setContentsMargins(0, 0, 0, 0)
    box_layout.addWidget(_step_bar(panel, panel.plot_box))
    panel.step_split = QSplitter(Qt.Orientation.Vertical, panel.plot_box)
    panel.step_split.setObjectName("memoryStepSplit")
    panel.step_split.setChildrenCollapsible(False)
    box_layout.addWidget(panel.step_split, 1)
    holder = QWidget(panel.step_split)
    panel.plot_layout = QVBoxLayout(holder)
    panel.plot_layout.setContentsMargins(0, 0, 0, 0)
    panel.placeholder = QLabel("The timeline of live bytes appears here.", holder)
    panel.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
    panel.placeholder.setEnabled(False)
    panel.plot_layout.addWidget(panel.placeholder)
    panel.step_split.addWidget(holder)
    panel.step_tabs = QTabWidget(panel.step_split)
    panel.step_tabs.setObjectName("memoryBackwardView")
    panel.backward_table = _table(panel.step_tabs, "memoryBackwardTable")
    panel.live_table = _table(panel.step_tabs, "memoryPeakLiveTable")
    panel.step_tabs.addTab(panel.backward_table, "Backward nodes")
    panel.step_tabs.addTab(panel.live_table, "Live at the step's peak")
    panel.step_split.addWidget(panel.step_tabs)
    panel.step_tabs.hide()
    panel.results = QSplitter(body)
    panel.results.setObjectName("memoryResults")
    panel.results.setChildrenCollapsible(False)
    panel.results.addWidget(panel.summary)
    panel.results.addWidget(panel.plot_box)
    panel.body_layout = QBoxLayout(QBoxLayout.Direction.TopToBottom, body)
    panel.body_layout.setContentsMargins(4, 4, 4, 4)
    panel.body_layout.addWidget(panel.controls)
    panel.body_layout.addWidget(panel.results, 1)
    return body


def captured(doc: GraphDocument | None) -> str:
    """What the empty Inputs say for ``doc``: its graph's inputs as the Open dialog writes
    them (``1x16:int64``), those it was captured with -- what an estimate with no Inputs is
    of; the general words when one is not a tensor."""
    if doc is None:
        return PLACEHOLDER
    rows = [doc.row(n.name) for n in doc.graph.find_nodes(op="placeholder")]
    sizes = [f"{r.shape}:{r.dtype}" for r in rows if r.shape and r.dtype]
    return f"as captured: {', '.join(sizes)}" if rows and len(sizes) == len(rows) else PLACEHOLDER


def _step_bar(panel: MemoryForm, parent: QWidget) -> QWidget:
    """Above the plot, for a result with a training step: the whole step on the timeline,
    the backward's tables on request."""
    bar = QWidget(parent)
    layout = QHBoxLayout(bar)
    layout.setContentsMargins(0, 0, 0, 0)
    panel.whole_step = QCheckBox("Whole training step", bar)
    panel.whole_step.setObjectName("memoryWholeStep")
    panel.whole_step.setChecked(True)
    panel.whole_step.setToolTip(
        "Draw the whole training step -- forward, backward, the optimizer's step, in execution "
        "order -- with the step's peak starred at its node; off: the forward's estimate"
    )
    panel.backward_button = QPushButton("Backward", bar)
    panel.backward_button.setObjectName("memoryBackward")
    panel.backward_button.setCheckable(True)
    panel.backward_button.setToolTip(
        "Show the backward's nodes in order (a click selects the document's node each comes "
        "from) and what is live at the step's peak"
    )
    layout.addWidget(panel.whole_step)
    layout.addWidget(panel.backward_button)
    layout.addStretch(1)
    bar.hide()  # (until a result has a training step)
    panel.step_bar = bar
    return bar


def _table(parent: QWidget, name: str) -> QTableView:
    table = QTableView(parent)
    table.setObjectName(name)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSortingEnabled(True)
    table.setWordWrap(False)
    table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)
    table.horizontalHeader().setStretchLastSection(True)
    table.horizontalHeader().setResizeContentsPrecision(RESIZE_ROWS)
    return table


def arrange(panel: MemoryForm, shape: str) -> None:
    """``wide`` (along the window's bottom): the controls in a column on the left, the
    summary and the plot side by side, the plot the wider; otherwise (a column) stacked."""
    wide = shape == "wide"
    direction = QBoxLayout.Direction
    panel.body_layout.setDirection(direction.LeftToRight if wide else direction.TopToBottom)
    c = panel.controls
    c.setMaximumWidth(CONTROLS_WIDTH if wide else QWIDGETSIZE_MAX)
    c.setMinimumWidth(CONTROLS_WIDTH if wide else 0)
    panel.body_layout.setStretchFactor(c, 1 if wide else 0)
    panel.body_layout.setStretchFactor(panel.results, 4 if wide else 1)
    vertical = QSizePolicy.Policy.Preferred if wide else QSizePolicy.Policy.Maximum
    c.setSizePolicy(QSizePolicy.Policy.Preferred, vertical)
    split = panel.results
    split.setOrientation(Qt.Orientation.Horizontal if wide else Qt.Orientation.Vertical)
    split.setSizes([3000, 7000] if wide else [3500, 6500])
