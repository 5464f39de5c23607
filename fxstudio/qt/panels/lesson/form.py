"""The Learn FX dock's widgets; the panel fills the step-specific part for each step."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from PySide6.QtWidgets import (
    QBoxLayout,
    QButtonGroup,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPushButton,
    QRadioButton,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.flows.lesson import STEPS, Question
from fxstudio.qt.forms import FlowLayout, text_label, wrap_code_blocks

#: A widget handed in and given back as itself (the panel's ``_add``).
Widget = TypeVar("Widget", bound=QWidget)


class LessonForm:
    """The Learn FX dock's widgets, as :func:`build` makes them on the panel."""

    step_buttons: list[QToolButton]
    heading: QLabel
    text: QTextBrowser
    task: QLabel
    extra: QWidget
    extra_layout: QVBoxLayout
    verdict: QLabel
    back_button: QPushButton
    check_button: QPushButton
    next_button: QPushButton
    parts_layout: QBoxLayout
    parts: tuple[QWidget, QWidget]
    go: Callable[[int], None]  # the panel's: show step i


def build(panel: LessonForm) -> QWidget:
    """Make the dock's widgets on ``panel``; returns its body: the step buttons over two
    parts, the step's text (title and explanation) and the learner's part (the task, the
    step's own widgets, the verdict, Back / Check / Next), which :func:`arrange` stacks or
    sets side by side."""
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(4, 4, 4, 4)
    row = FlowLayout(spacing=2)
    panel.step_buttons = []
    for i, step in enumerate(STEPS):
        b = QToolButton(body)
        b.setObjectName(f"lessonStep{i + 1}")
        b.setText(str(i + 1))
        b.setToolTip(step.title)
        b.setCheckable(True)
        b.setAutoRaise(True)
        b.clicked.connect(lambda _checked=False, i=i: panel.go(i))
        row.addWidget(b)
        panel.step_buttons.append(b)
    layout.addLayout(row)
    reading = QWidget(body)
    reading_layout = QVBoxLayout(reading)
    reading_layout.setContentsMargins(0, 0, 0, 0)
    panel.heading = text_label(body, "lessonTitle")
    font = panel.heading.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 1.2)
    panel.heading.setFont(font)
    reading_layout.addWidget(panel.heading)
    panel.text = QTextBrowser(body)
    panel.text.setObjectName("lessonText")
    panel.text.setOpenExternalLinks(True)
    reading_layout.addWidget(panel.text, 1)
    doing = QWidget(body)
    doing_layout = QVBoxLayout(doing)
    doing_layout.setContentsMargins(0, 0, 0, 0)
    panel.task = text_label(body, "lessonTask")
    task_font = panel.task.font()
    task_font.setBold(True)
    panel.task.setFont(task_font)
    doing_layout.addWidget(panel.task)
    panel.extra = QWidget(body)
    panel.extra.setObjectName("lessonExtra")
    panel.extra_layout = QVBoxLayout(panel.extra)
    panel.extra_layout.setContentsMargins(0, 0, 0, 0)
    doing_layout.addWidget(panel.extra)
    panel.verdict = text_label(body, "lessonVerdict")
    doing_layout.addWidget(panel.verdict)
    doing_layout.addStretch(1)  # (wide: the buttons at the bottom; stacked it takes no room)
    buttons = QHBoxLayout()
    panel.back_button = QPushButton("◀ Back", body)
    panel.check_button = QPushButton("Check", body)
    panel.next_button = QPushButton("Next ▶", body)
    for pb, name in (
        (panel.back_button, "lessonBack"),
        (panel.check_button, "lessonCheck"),
        (panel.next_button, "lessonNext"),
    ):
        pb.setObjectName(name)
        buttons.addWidget(pb)
    doing_layout.addLayout(buttons)
    panel.parts_layout = QBoxLayout(QBoxLayout.Direction.TopToBottom)
    panel.parts_layout.addWidget(reading, 1)
    panel.parts_layout.addWidget(doing, 0)
    panel.parts = (reading, doing)
    layout.addLayout(panel.parts_layout, 1)
    return body


def arrange(panel: LessonForm, wide: bool) -> None:
    """Wide and short: the text on the left, the learner's part beside it; narrow and tall:
    the text above, taking what the learner's part leaves (no empty gap under it)."""
    direction = QBoxLayout.Direction
    panel.parts_layout.setDirection(direction.LeftToRight if wide else direction.TopToBottom)
    reading, doing = panel.parts
    panel.parts_layout.setStretchFactor(reading, 3 if wide else 1)
    panel.parts_layout.setStretchFactor(doing, 2 if wide else 0)


def show_markdown(view: QTextBrowser, text: str) -> None:
    """``text`` as Markdown, its code blocks wrapped at the view's width."""
    view.setMarkdown(text)
    wrap_code_blocks(view.document())


def clear(layout: QLayout) -> None:
    while layout.count():
        item = layout.takeAt(0)
        if item is None:
            break
        widget = item.widget()
        if widget is not None:
            widget.hide()
            widget.setParent(None)  # out of the tree now: findChild no longer sees it
            widget.deleteLater()
        elif (inner := item.layout()) is not None:
            clear(inner)


def quiz_box(
    parent: QWidget, question: Question, chosen: str | None, on_answer: Callable[[str, str], object]
) -> QGroupBox:
    box = QGroupBox(question.text, parent)
    box.setObjectName(f"lessonQuiz_{question.id}")
    box.setStyleSheet("QGroupBox { font-weight: bold; } QRadioButton { font-weight: normal; }")
    lay = QVBoxLayout(box)
    group = QButtonGroup(box)
    for value, label in question.choices:
        radio = QRadioButton(label, box)
        radio.setObjectName(f"lessonAnswer_{question.id}_{value}")
        radio.setChecked(value == chosen)
        radio.toggled.connect(lambda on, v=value: on and on_answer(question.id, v))
        group.addButton(radio)
        lay.addWidget(radio)
    return box


def button(parent: QWidget, text: str, name: str, slot: Callable[..., object]) -> QPushButton:
    b = QPushButton(text, parent)
    b.setObjectName(name)
    b.clicked.connect(slot)
    return b


def not_started_text(spec: str | None, model: str) -> str:
    """What the dock says before the lesson starts, with ``spec`` open (or none)."""
    works_on = (
        f"**Start** works on the model open now (`{spec}`); to take the lesson's own small "
        f"model instead, open `{model}` first (File ▸ Open model…)."
        if spec is not None
        else f"**Start** opens the lesson's own small model (`{model}`)."
    )
    return (
        "A guided lesson: how `symbolic_trace` makes a graph, the Graph IR, the code it "
        "generates, stepping, graph surgery, patterns, what cannot be traced and why, "
        "and timing a rewrite. Each step checks what you did in the window.\n\n" + works_on
    )
