"""The Step dock's widgets: the controls, the position slider and the value card (numbers,
a histogram, a picture of the tensor, the eager comparison, the user's source line)."""

from __future__ import annotations

import torch
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QAction, QImage, QKeySequence, QPainter, QPaintEvent, QPixmap
from PySide6.QtWidgets import (
    QBoxLayout,
    QFormLayout,
    QLabel,
    QScrollArea,
    QSizePolicy,
    QSlider,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.flows.step import Picture, ValueSummary
from fxstudio.qt import theme
from fxstudio.qt.forms import FlowLayout, text_label

PICTURE_SIDE = 224  # pixels the picture is drawn at (nearest neighbour: values stay visible)

#: (attribute, text, shortcut, tip): the dock's actions, in the order of its buttons.
ACTIONS = (
    ("restart_action", "↺ Restart", "Ctrl+Shift+F5", "Start again before the first node"),
    ("back_action", "◀ Back", "F7", "Step back one node (values in the window come back at once)"),
    (
        "into_action",
        "Step ▶",
        "F11",
        "Run the next node (step into: a collapsed module is expanded and entered)",
    ),
    (
        "over_action",
        "Over ⤼",
        "F10",
        "Step over: run a collapsed module (or the next node) in one step",
    ),
    ("out_action", "Out ⤴", "Shift+F11", "Step out: run to the end of the current module"),
    ("to_selected_action", "To selected", "Ctrl+F10", "Run (or step back) to the selected node"),
    ("continue_action", "Continue ⇥", "F8", "Run to the next breakpoint or the end"),
    ("breakpoint_action", "● Breakpoint", "F9", "Set or clear a breakpoint on the selected node"),
)


class Histogram(QWidget):
    """The counts of a value's finite elements in equal bins from min to max."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.counts: tuple[int, ...] = ()
        self.setObjectName("stepHistogram")
        self.setMinimumHeight(56)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_counts(self, counts: tuple[int, ...]) -> None:
        self.counts = counts
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(240, 56)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        pal = self.palette()
        p.fillRect(self.rect(), pal.base())
        if not self.counts:
            return
        top = max(self.counts) or 1
        width = self.width() / len(self.counts)
        colour = pal.highlight().color()
        for i, c in enumerate(self.counts):
            h = (self.height() - 4) * c / top
            p.fillRect(QRectF(i * width + 1, self.height() - 2 - h, width - 2, h), colour)
        p.setPen(pal.mid().color())
        p.drawLine(0, self.height() - 1, self.width(), self.height() - 1)


def picture_pixmap(pic: Picture, side: int = PICTURE_SIDE) -> QPixmap:
    """The picture as a grey pixmap, scaled (nearest: each value a sharp block) so that its
    longer side is ``side``."""
    pixels = (pic.pixels * 255).round().to(torch.uint8)
    h, w = int(pixels.shape[0]), int(pixels.shape[1])
    data = bytes(pixels.flatten().tolist())  # (numpy is not a dependency)
    image = QImage(data, w, h, w, QImage.Format.Format_Grayscale8).copy()
    return QPixmap.fromImage(
        image.scaled(
            side, side, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation
        )
    )


STATS = ("value", "min", "max", "mean", "std", "NaN / Inf", "device")


class StepForm:
    """The Step dock's widgets and actions, as :func:`build` makes them on the panel."""

    actions: list[QAction]
    restart_action: QAction
    back_action: QAction
    into_action: QAction
    over_action: QAction
    out_action: QAction
    to_selected_action: QAction
    continue_action: QAction
    breakpoint_action: QAction
    slider: QSlider
    where: QLabel
    status_label: QLabel
    controls: QWidget
    card_layout: QBoxLayout
    heading: QLabel
    eager: QLabel
    first_difference: QToolButton
    code_line: QLabel
    source_line: QLabel
    breakpoints: QLabel
    stats: dict[str, QLabel]
    histogram: Histogram
    picture: QLabel
    picture_caption: QLabel
    card_parts: tuple[QWidget, QWidget, QWidget]
    card_scroll: QScrollArea
    body_layout: QBoxLayout


def _form(parent: QWidget) -> QFormLayout:
    form = QFormLayout(parent)
    form.setContentsMargins(0, 0, 0, 0)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.DontWrapRows)
    return form


def build(panel: StepForm, parent: QWidget) -> QWidget:
    """Make the dock's widgets and actions (parented to ``parent``, the window) on ``panel``;
    returns the dock's body.  The card has three parts -- what the node is and whether it
    agrees with eager (first: the verdict is what a stepper looks for), its numbers, its
    picture -- that :func:`arrange` stacks or sets side by side."""
    body = QWidget()
    controls = QWidget(body)
    controls_layout = QVBoxLayout(controls)
    controls_layout.setContentsMargins(0, 0, 0, 0)
    buttons = FlowLayout(spacing=2)
    panel.actions = []
    for attr, text, keys, tip in ACTIONS:
        action = QAction(text, parent)
        action.setObjectName("action" + "".join(w.title() for w in attr.split("_")[:-1]))
        action.setShortcut(QKeySequence(keys))
        action.setToolTip(f"{tip} ({keys})")
        action.setStatusTip(tip)
        setattr(panel, attr, action)
        panel.actions.append(action)
        button = QToolButton(body)
        button.setDefaultAction(action)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        buttons.addWidget(button)
    controls_layout.addLayout(buttons)
    panel.slider = QSlider(Qt.Orientation.Horizontal, body)
    panel.slider.setObjectName("stepSlider")
    panel.slider.setToolTip("Drag to any node: the graph runs (or steps back) to it")
    controls_layout.addWidget(panel.slider)
    panel.where = text_label(body, "stepWhere")
    controls_layout.addWidget(panel.where)
    panel.status_label = text_label(body, "stepStatus", quiet=True)
    controls_layout.addWidget(panel.status_label)
    controls_layout.addStretch(1)
    panel.controls = controls

    card = QWidget(body)
    card.setObjectName("stepCard")
    panel.card_layout = QBoxLayout(QBoxLayout.Direction.TopToBottom, card)
    panel.card_layout.setContentsMargins(6, 6, 6, 6)
    facts = QWidget(card)
    form = _form(facts)
    panel.heading = text_label(card, "stepTitle")
    font = panel.heading.font()
    font.setBold(True)
    panel.heading.setFont(font)
    form.addRow(panel.heading)
    panel.eager = text_label(card, "stepEager")
    form.addRow("eager", panel.eager)
    panel.first_difference = QToolButton(card)
    panel.first_difference.setObjectName("stepFirstDifference")
    panel.first_difference.setAutoRaise(True)
    form.addRow("", panel.first_difference)
    panel.code_line = text_label(card, "stepCode")
    panel.source_line = text_label(card, "stepSource")
    mono = panel.code_line.font()
    mono.setFamily("monospace")
    panel.code_line.setFont(mono)
    panel.source_line.setFont(mono)
    form.addRow("code", panel.code_line)
    form.addRow("your code", panel.source_line)
    panel.breakpoints = text_label(card, "stepBreakpoints")
    form.addRow("breakpoints", panel.breakpoints)
    numbers = QWidget(card)
    form = _form(numbers)
    panel.stats = {}
    for key in STATS:
        panel.stats[key] = text_label(card, "stepStat_" + key.split()[0].lower())
        form.addRow(key, panel.stats[key])
    panel.histogram = Histogram(card)
    form.addRow("histogram", panel.histogram)
    pictures = QWidget(card)
    pictures_layout = QVBoxLayout(pictures)
    pictures_layout.setContentsMargins(0, 0, 0, 0)
    panel.picture = QLabel(card)
    panel.picture.setObjectName("stepPicture")
    panel.picture_caption = text_label(card, "stepPictureCaption")
    pictures_layout.addWidget(panel.picture)
    pictures_layout.addWidget(panel.picture_caption)
    pictures_layout.addStretch(1)
    panel.card_parts = (facts, numbers, pictures)
    for part, stretch in zip(panel.card_parts, (3, 2, 0), strict=True):
        panel.card_layout.addWidget(part, stretch)
    panel.card_layout.addStretch(0)
    scroll = QScrollArea(body)
    scroll.setObjectName("stepCardScroll")
    scroll.setWidgetResizable(True)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setWidget(card)
    panel.card_scroll = scroll
    panel.body_layout = QBoxLayout(QBoxLayout.Direction.TopToBottom, body)
    panel.body_layout.setContentsMargins(4, 4, 4, 4)
    panel.body_layout.addWidget(controls)
    panel.body_layout.addWidget(scroll, 1)
    return body


CONTROLS_WIDTH = 300  # the controls' column when the dock is a strip along the bottom


def arrange(panel: StepForm, wide: bool) -> None:
    """Wide and short: the controls in a column on the left, the card's three parts side by
    side.  Narrow and tall: the controls on top, the card's parts stacked, verdict first."""
    direction = QBoxLayout.Direction
    panel.body_layout.setDirection(direction.LeftToRight if wide else direction.TopToBottom)
    panel.card_layout.setDirection(direction.LeftToRight if wide else direction.TopToBottom)
    panel.controls.setMaximumWidth(CONTROLS_WIDTH if wide else (1 << 24) - 1)  # (no minimum:
    panel.body_layout.setStretchFactor(panel.controls, 1 if wide else 0)  # a dock made
    panel.body_layout.setStretchFactor(panel.card_scroll, 3 if wide else 1)  # narrow must be)
    vertical = QSizePolicy.Policy.Preferred if wide else QSizePolicy.Policy.Maximum
    panel.controls.setSizePolicy(QSizePolicy.Policy.Preferred, vertical)  # (stacked: no gap)
    align = Qt.AlignmentFlag.AlignTop
    for part in panel.card_parts:
        panel.card_layout.setAlignment(part, align if wide else Qt.AlignmentFlag(0))


def show_summary(panel: StepForm, summary: ValueSummary | None) -> None:
    """Fill the card's numbers and histogram from a summary (None: blank)."""

    def num(x: float | None) -> str:
        return "—" if x is None else f"{x:.6g}"

    s = summary
    values = {
        "value": s.text if s else "not run yet",
        "min": num(s.min) if s else "",
        "max": num(s.max) if s else "",
        "mean": num(s.mean) if s else "",
        "std": num(s.std) if s else "",
        "NaN / Inf": f"{s.nans} / {s.infs}" if s and s.kind == "tensor" else "",
        "device": s.device if s else "",
    }
    for key, text in values.items():
        panel.stats[key].setText(text)
    bad = s is not None and not s.finite
    alarm = f"color: {theme.colors().bad}; font-weight: bold"
    panel.stats["NaN / Inf"].setStyleSheet(alarm if bad else "")
    panel.histogram.set_counts(s.histogram if s else ())
