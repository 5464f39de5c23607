"""A horizontal bar chart of the top nodes or modules by time (painted: two dozen bars do
not need a charting library); grey, its title saying so, when the times are stale."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QSizePolicy, QWidget

from fxstudio.qt.canvas.heat import STALE, heat_colour


class BarChart(QWidget):
    """Bars (label, seconds, share), longest first; a click on a bar says which."""

    barClicked = Signal(str)  # noqa: N815

    ROW = 20

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bars: list[tuple[str, float, float]] = []
        self.title = ""
        self.stale = False  # the times are of another version of the graph
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def set_bars(self, title: str, bars: list[tuple[str, float, float]]) -> None:
        self.title = title
        self.bars = sorted(bars, key=lambda b: -b[1])
        self.updateGeometry()
        self.update()

    def set_stale(self, stale: bool) -> None:
        if stale != self.stale:
            self.stale = stale
            self.update()

    def shown_title(self) -> str:
        """The title as drawn."""
        if self.stale and self.bars:
            return f"{self.title} — stale: measured before the graph last changed"
        return self.title

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(320, 24 + self.ROW * max(len(self.bars), 1))

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        """As tall as its bars; as narrow as a short label, a short bar and the values (the
        chart fits the width it is given: its labels are elided, its bars scaled)."""
        return QSize(60 + 40 + self.value_width(), self.sizeHint().height())

    def value_width(self) -> int:
        """The room for a bar's numbers ('12.345 ms  12.3%') right of it."""
        return self.fontMetrics().horizontalAdvance("000.000 ms  00.0%") + 8

    def _label_width(self) -> float:
        metrics = self.fontMetrics()
        return min(
            max((metrics.horizontalAdvance(b[0]) for b in self.bars), default=40) + 8,
            self.width() * 0.45,
        )

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        p = QPainter(self)
        p.fillRect(self.rect(), self.palette().base())
        p.setPen(self.palette().text().color())
        p.drawText(
            QRectF(4, 2, self.width() - 8, 18), Qt.AlignmentFlag.AlignLeft, self.shown_title()
        )
        if not self.bars:
            return
        left = self._label_width()
        values = self.value_width()
        room = self.width() - left - values - 4
        top_value = self.bars[0][1] or 1.0
        top_share = max(b[2] for b in self.bars) or 1.0
        metrics = self.fontMetrics()
        for i, (label, seconds, share) in enumerate(self.bars):
            y = 24 + i * self.ROW
            text = metrics.elidedText(label, Qt.TextElideMode.ElideMiddle, int(left - 8))
            p.setPen(self.palette().text().color())
            p.drawText(
                QRectF(4, y, left - 8, self.ROW - 4),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                text,
            )
            width = max(1.0, room * seconds / top_value)
            colour = STALE if self.stale else heat_colour(share / top_share)
            p.fillRect(QRectF(left, y + 2, width, self.ROW - 6), colour)
            p.setPen(QColor("#374151"))
            p.drawText(
                QRectF(left + width + 4, y, values, self.ROW - 4),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                f"{seconds * 1e3:.3f} ms  {share:.1%}",
            )

    def bar_at(self, y: float) -> str | None:
        i = int((y - 24) // self.ROW)
        return self.bars[i][0] if 0 <= i < len(self.bars) and y >= 24 else None

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        hit = self.bar_at(event.position().y())
        if hit is not None:
            self.barClicked.emit(hit)


class ChartRow(QWidget):
    """Charts side by side while each gets :data:`SIDE_BY_SIDE` px, else one above the other
    (two charts side by side in a Top tab of 430 px cut the right one's numbers off)."""

    SIDE_BY_SIDE = 260

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.box = QBoxLayout(QBoxLayout.Direction.TopToBottom, self)

    def add(self, chart: BarChart) -> None:
        self.box.addWidget(chart, 1, Qt.AlignmentFlag.AlignTop)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        wide = event.size().width() >= self.SIDE_BY_SIDE * max(self.box.count(), 1)
        d = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        super().resizeEvent(event)
        if self.box.direction() != d:
            self.box.setDirection(d)
            self.box.activate()  # now: a tab just shown is read (and painted) at once
