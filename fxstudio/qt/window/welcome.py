"""The welcome page, shown where the canvas is while no model is open: open a model, the
built-in examples (with a picture of each graph), the recent models, and *Learn FX*.

The page is one scroll area: the examples take as many columns as the width holds (the
columns share the width) and the lists are as tall as their rows, so nothing scrolls inside
it."""

from __future__ import annotations

import importlib.resources
import math
from collections.abc import Callable

from PySide6.QtCore import QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.flows.lesson import STEPS, count_word
from fxstudio.core.flows.open import RecentModels, list_examples
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.request import OpenRequest
from fxstudio.qt import theme

THUMB = QSize(240, 160)  # a thumbnail at its largest (drawn at 480x320: sharp at 200 %)
PAD = QSize(24, 40)  # a card's room around its thumbnail (the name below it)
COLUMN = 180 + PAD.width()  # a column of cards for each this many pixels of width
SMALLEST = 128  # the narrowest a thumbnail gets, to keep two columns in a narrow page
ROLE = Qt.ItemDataRole.UserRole


def example_summary(name: str) -> str:
    """The first line of an example's docstring ("simple: Linear -> ReLU -> Linear …")."""
    resource = importlib.resources.files("fxstudio.resources") / "examples" / f"{name}.py"
    text = resource.read_text(encoding="utf-8")
    first = text.split('"""')[1].strip().splitlines()[0] if text.startswith('"""') else name
    return first.split(":", 1)[1].strip() if first.startswith(f"{name}:") else first


def thumbnail(name: str) -> QIcon:
    resource = (
        importlib.resources.files("fxstudio.resources") / "examples" / "thumbs" / f"{name}.png"
    )
    if resource.is_file():
        pixmap = QPixmap()
        pixmap.loadFromData(resource.read_bytes())
        pixmap.setDevicePixelRatio(pixmap.width() / THUMB.width())  # drawn at 2x: sharp at 200 %
        return QIcon(pixmap)
    # An example that does not trace (a lesson's trap): a card saying so.
    pixmap = QPixmap(THUMB * 2)
    pixmap.setDevicePixelRatio(2.0)
    pixmap.fill(QColor("#f3f4f6"))
    painter = QPainter(pixmap)
    painter.setPen(QColor(theme.colors().pending))
    painter.drawText(
        QRect(QPoint(0, 0), THUMB),
        Qt.AlignmentFlag.AlignCenter,
        "does not trace\n(open it to see why)",
    )
    painter.end()
    return QIcon(pixmap)


class FittedList(QListWidget):
    """A list as tall as its rows, never scrolling (the page around it scrolls).  In icon
    mode (``cards=True``) the cards take as many columns as the width holds, sharing it
    (two, with smaller thumbnails, where one full-size card would leave half of it empty)."""

    def __init__(self, parent: QWidget, cards: bool = False) -> None:
        super().__init__(parent)
        self.cards = cards
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a long path keeps its end
        if cards:
            self.setViewMode(QListWidget.ViewMode.IconMode)
            self.setIconSize(THUMB)
            self.setResizeMode(QListWidget.ResizeMode.Adjust)
            self.setMovement(QListWidget.Movement.Static)
            self.setWordWrap(True)
            self.setUniformItemSizes(True)
            self.setGridSize(THUMB + PAD)
        self.model().rowsInserted.connect(self.fit)
        self.model().rowsRemoved.connect(self.fit)

    def columns(self) -> int:
        if not self.cards:
            return 1
        width = self.viewport().width()
        columns = max(1, width // COLUMN)
        return 2 if columns == 1 and width >= 2 * (SMALLEST + PAD.width()) else columns

    def fit(self) -> None:
        rows = self.count()
        if self.cards:
            columns = self.columns()
            width = max(1, (self.viewport().width() - 2) // columns)  # (a full row wraps)
            thumb = min(THUMB.width(), width - PAD.width())
            icon = QSize(thumb, thumb * THUMB.height() // THUMB.width())
            cell = QSize(width, icon.height() + PAD.height())
            if icon != self.iconSize():
                self.setIconSize(icon)
            if cell != self.gridSize():
                self.setGridSize(cell)
            height = math.ceil(rows / columns) * cell.height()
        else:
            height = sum(self.sizeHintForRow(i) for i in range(rows))
        self.setFixedHeight(height + 2 * self.frameWidth())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.fit()


class WelcomePage(QWidget):
    """Signals: ``openRequested(OpenRequest)``, ``openDialogRequested()``, ``learnRequested()``."""

    openRequested = Signal(object)  # noqa: N815
    openDialogRequested = Signal()  # noqa: N815
    learnRequested = Signal()  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("welcomePage")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 18, 24, 18)
        title = QLabel(
            "<h1>fxstudio</h1><p>Open a PyTorch model to see, edit, run and time its "
            "torch.fx graph — or learn FX on one of the examples, in "
            f"{count_word(len(STEPS))} checked steps.</p>",
            self,
        )
        title.setWordWrap(True)
        layout.addWidget(title)
        row = QHBoxLayout()
        self.open_button = QPushButton("Open a model…", self)
        self.open_button.setObjectName("welcomeOpen")
        self.open_button.clicked.connect(self.openDialogRequested)
        self.learn_button = QPushButton("Learn FX…", self)
        self.learn_button.setToolTip(
            f"A lesson in {count_word(len(STEPS))} checked steps, on the real window"
        )
        self.learn_button.setObjectName("welcomeLearn")
        self.learn_button.clicked.connect(self.learnRequested)
        row.addWidget(self.open_button)
        row.addWidget(self.learn_button)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(QLabel("<b>Examples</b>", self))
        self.examples = FittedList(self, cards=True)
        self.examples.setObjectName("welcomeExamples")
        for name in list_examples():
            item = QListWidgetItem(thumbnail(name), name)
            item.setToolTip(example_summary(name))
            item.setData(ROLE, OpenRequest(f"examples:{name}"))
            self.examples.addItem(item)
        self.examples.itemActivated.connect(self._chosen)
        self.examples.itemClicked.connect(self._chosen)
        layout.addWidget(self.examples)
        layout.addWidget(QLabel("<b>Recent</b>", self))
        self.recent = FittedList(self)
        self.recent.setObjectName("welcomeRecent")
        self.recent.itemActivated.connect(self._chosen)
        self.recent.itemClicked.connect(self._chosen)
        layout.addWidget(self.recent)
        layout.addStretch(1)  # a tall window: the page stays at the top

    def set_recent(self, requests: list[OpenRequest]) -> None:
        self.recent.clear()
        for request in requests:
            extra = f" ({request.frontend})" if request.frontend not in ("auto", "fx") else ""
            item = QListWidgetItem(f"{request.spec}{extra}")
            item.setToolTip(request.spec)
            item.setData(ROLE, request)
            self.recent.addItem(item)
        if not requests:
            empty = QListWidgetItem("Nothing yet: the models you open are listed here.")
            empty.setFlags(Qt.ItemFlag.NoItemFlags)
            self.recent.addItem(empty)

    def _chosen(self, item: QListWidgetItem) -> None:
        request = item.data(ROLE)
        if request is not None:
            self.openRequested.emit(request)


def install(
    window: QMainWindow, canvas: QWidget, recent: RecentModels
) -> tuple[WelcomePage, Callable[[GraphDocument | None], None]]:
    """Put the welcome page and ``canvas`` in one stack where the canvas was; returns the
    page and a function ``show_for(document)``: the page while nothing is open, the canvas
    otherwise.  The window connects the page's signals."""
    from PySide6.QtWidgets import QScrollArea, QStackedWidget

    window.takeCentralWidget()
    stack = QStackedWidget(window)
    stack.setObjectName("centralStack")
    area = QScrollArea(stack)  # the page scrolls rather than widening the window
    area.setWidgetResizable(True)
    page = WelcomePage(area)
    area.setWidget(page)
    stack.addWidget(area)
    stack.addWidget(canvas)
    window.setCentralWidget(stack)
    page.set_recent(recent.existing())
    stack.setCurrentIndex(0)  # until a model is open

    def show_for(document: GraphDocument | None) -> None:
        if document is None:
            page.set_recent(recent.existing())
            stack.setCurrentIndex(0)
        else:
            stack.setCurrentWidget(canvas)

    return page, show_for
