"""The Learn FX dock's widgets; the panel fills the step-specific part for each step."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QButtonGroup,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QRadioButton,
    QTextBrowser,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.lesson.demos import Question
from fxstudio.core.lesson.steps import STEPS
from fxstudio.qt.forms import text_label


def build(panel: Any) -> QWidget:
    """Make the dock's widgets on ``panel``; returns its body."""
    body = QWidget()
    layout = QVBoxLayout(body)
    row = QHBoxLayout()
    row.setSpacing(2)
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
    row.addStretch(1)
    layout.addLayout(row)
    panel.title = text_label(body, "lessonTitle")
    font = panel.title.font()
    font.setBold(True)
    font.setPointSizeF(font.pointSizeF() * 1.2)
    panel.title.setFont(font)
    layout.addWidget(panel.title)
    panel.text = QTextBrowser(body)
    panel.text.setObjectName("lessonText")
    panel.text.setOpenExternalLinks(True)
    layout.addWidget(panel.text, 3)
    panel.task = text_label(body, "lessonTask")
    task_font = panel.task.font()
    task_font.setBold(True)
    panel.task.setFont(task_font)
    layout.addWidget(panel.task)
    panel.extra = QWidget(body)
    panel.extra.setObjectName("lessonExtra")
    panel.extra_layout = QVBoxLayout(panel.extra)
    panel.extra_layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(panel.extra, 2)
    panel.verdict = text_label(body, "lessonVerdict")
    layout.addWidget(panel.verdict)
    buttons = QHBoxLayout()
    panel.back_button = QPushButton("◀ Back", body)
    panel.check_button = QPushButton("Check", body)
    panel.next_button = QPushButton("Next ▶", body)
    for b, name in (
        (panel.back_button, "lessonBack"),
        (panel.check_button, "lessonCheck"),
        (panel.next_button, "lessonNext"),
    ):
        b.setObjectName(name)
        buttons.addWidget(b)
    layout.addLayout(buttons)
    return body


def clear(layout: Any) -> None:
    while layout.count():
        item = layout.takeAt(0)
        widget = item.widget()
        if widget is not None:
            widget.hide()
            widget.setParent(None)  # out of the tree now: findChild no longer sees it
            widget.deleteLater()
        elif item.layout() is not None:
            clear(item.layout())


def quiz_box(parent: QWidget, question: Question, chosen: str | None, on_answer: Any) -> QGroupBox:
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


def button(parent: QWidget, text: str, name: str, slot: Any) -> QPushButton:
    b = QPushButton(text, parent)
    b.setObjectName(name)
    b.clicked.connect(slot)
    return b
