"""*View ▸ Load node data…*: per-node numbers from a file -- Model Explorer node data, Netron
metrics, a CSV or our JSON (:mod:`fxstudio.core.compare.overlay`), e.g. what ``fxstudio
profile --per-node --model-explorer`` or another tool wrote -- drawn on the canvas as heat
(each node tinted and tagged with its value) with a legend of the colour scale in the
canvas's corner.  *Clear node data* takes it off, as opening another model does.  Drawn again
after every relayout; nodes the graph does not have are counted in the status bar, not
drawn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QPoint
from PySide6.QtWidgets import QFileDialog, QLabel

from fxstudio.core.flows.diff import Overlay, read_overlay
from fxstudio.qt.canvas.heat import HeatMarks, heat_colour

FILTER = "Per-node data (*.json *.csv);;All files (*)"


def _number(value: float, unit: str) -> str:
    return f"{value:.3g}{' ' + unit if unit else ''}"


class NodeData(QObject):
    """The loaded per-node data of the window's canvas, and its legend."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.overlay: Overlay | None = None
        self.source = ""
        self.marks = HeatMarks()
        self.legend = QLabel(window.canvas)  # (not the viewport's: a scroll would move it)
        self.legend.setObjectName("nodeDataLegend")
        self.legend.hide()
        window.canvas_controller.layoutDone.connect(lambda _layout: self.redraw())
        window.session.documentChanged.connect(lambda _doc: self.clear())  # another graph's

    def choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Load node data", "", FILTER)
        if path:
            self.load(path)

    def load(self, path: str | Path) -> Overlay | None:
        """Read ``path`` and draw it; a file that cannot be read is said, and the data
        shown before stays."""
        try:
            overlay = read_overlay(path)
        except Exception as exc:
            self.window.show_error("Could not load the node data", exc)
            return None
        doc = self.window.document
        names = set(doc.node_names()) if doc is not None else set()
        unknown = overlay.unknown(names)
        self.overlay, self.source = overlay, Path(path).name
        shares = {n: overlay.share(n) for n in overlay.values if n in names}
        shown = {n: share for n, share in shares.items() if share is not None}  # (finite)
        low, high = overlay.scale()
        values = {n: share + 1e-3 for n, share in shown.items()}  # (the lowest tinted too)
        labels = {n: _number(overlay.values[n], overlay.unit) for n in shown}
        self.marks.set_values(values, labels, f"{overlay.what} ({self.source}): {{label}}")
        self._legend(low, high)
        self.redraw()
        text = f"Node data {overlay.what} from {self.source}: {len(shown)} nodes"
        if unknown:
            text += f"; {len(unknown)} not in this graph ({', '.join(unknown[:3])}…)"
        self.window.status.show(text, 10000)
        return overlay

    def clear(self) -> None:
        self.overlay = None
        self.marks.set_values({}, {}, "")
        self.legend.hide()
        self.redraw()

    def redraw(self) -> None:
        if self.overlay is not None or self.marks.items:
            self.marks.redraw(self.window.canvas_controller.scene)

    def _legend(self, low: float, high: float) -> None:
        assert self.overlay is not None
        unit = self.overlay.unit
        swatches = "".join(
            f"<span style='background-color: {heat_colour(i / 4).name()}'>&nbsp;&nbsp;&nbsp;</span>"
            for i in range(5)
        )
        self.legend.setText(
            f"<b>{self.overlay.what}</b> <small>({self.source})</small><br>"
            f"{_number(low, unit)} {swatches} {_number(high, unit)}"
        )
        self.legend.setStyleSheet(
            "QLabel#nodeDataLegend { background: rgba(255, 255, 255, 220); color: #222; "
            "border: 1px solid #999; border-radius: 4px; padding: 4px 6px; }"
        )
        self.legend.ensurePolished()  # (the style sheet's padding counted in the size)
        self.legend.adjustSize()
        self.legend.move(self.window.canvas.viewport().geometry().topLeft() + QPoint(8, 8))
        self.legend.show()
        self.legend.raise_()


def node_data_of(window: Any) -> NodeData:
    """The window's node data (made the first time it is asked for)."""
    made = getattr(window, "node_data", None)
    if made is None:
        made = window.node_data = NodeData(window)
    return made
