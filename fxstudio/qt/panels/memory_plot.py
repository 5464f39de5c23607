"""The Memory dock's timeline: the live bytes after each node, in execution order, drawn with
pyqtgraph (made for Qt: a plot of 10,000 points pans, zooms and answers a click at once, where
matplotlib's Qt canvas redraws the whole figure; it draws with QPainter, so it works offscreen
and follows the window's palette).

- the parameters (and buffers) as a band along the bottom, the activations' live bytes stacked
  on it -- what the device holds after each node;
- one point per node (hover: its name, what it allocates, what is live after it; click: the
  node is selected in the document -- :attr:`MemoryPlot.pointClicked`);
- the peak -- the most live while a node runs: what was live before it and its output --
  marked and labelled;
- a *before* (the graph of an earlier run, drawn grey, stretched to the same width:
  the graphs need not have as many nodes) and a *measured* timeline overlaid.

Example::

    plot = MemoryPlot()
    plot.show_timelines(Timeline("now", ("x", "relu"), (4096, 8192)), params_bytes=1 << 20)
    plot.pointClicked.connect(print)        # "relu"
    plot.highlight(["relu"])                 # a ring around its point
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget
from shiboken6 import isValid

from fxstudio.core.process.guard import format_bytes
from fxstudio.qt import theme
from fxstudio.qt.panels.memory_step import StepTimeline

UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1))
NOW = "#2563eb"  # the graph now: its curve and points
BEFORE = "#8c8c8c"  # the graph before
MEASURED = "#059669"
PEAK = "#d7191c"
PARAMS = (245, 158, 11, 70)  # the parameters' band (amber, translucent)
#: Each phase's band behind a training step (forward, backward, optimizer step).
PHASE_BANDS = {"forward": (37, 99, 235, 22), "backward": (124, 58, 237, 30)}
OPTIMIZER_BAND = (5, 150, 105, 40)
HEADROOM = 1.35  # the y range over the highest curve: room for the legend and the peak's label
STEP_HEADROOM = 1.6  # (a step's: its peak's label under the legend)


@dataclass(frozen=True)
class Timeline:
    """One graph's memory over its nodes (execution order): ``live[i]``, the activation bytes
    live after node ``names[i]`` has run (its dead inputs freed); ``allocated[i]``, what its
    output allocates (empty: not known).  What is drawn is :attr:`during`: the bytes live
    while each node runs (what was live before it, and its output) -- whose highest point is
    the peak."""

    label: str
    names: tuple[str, ...]
    live: tuple[int, ...]
    allocated: tuple[int, ...] = ()

    @property
    def during(self) -> tuple[int, ...]:
        if len(self.allocated) != len(self.live):
            return self.live
        before = (0, *self.live[:-1])
        return tuple(b + a for b, a in zip(before, self.allocated, strict=True))

    @property
    def peak(self) -> int:
        """The index of the peak (the first, if several nodes reach it); -1 when empty."""
        during = self.during
        return int(np.argmax(during)) if during else -1


def unit_for(top: float) -> tuple[str, int]:
    """The unit the axis counts in: the largest of GiB, MiB, KiB whose one is at most ``top``."""
    for name, size in UNITS:
        if top >= size:
            return name, size
    return "B", 1


class MemoryPlot(QWidget):
    """The timeline plot.  ``pointClicked(name)``: a node's point was clicked."""

    pointClicked = Signal(str)  # noqa: N815

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.widget = pg.PlotWidget(self)
        self.widget.setObjectName("memoryPlotView")
        self.widget.setMinimumHeight(140)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.widget)
        self.item: pg.PlotItem = self.widget.getPlotItem()
        self.item.setMenuEnabled(False)
        self.item.hideButtons()
        self.item.showGrid(x=False, y=True, alpha=0.25)
        self.item.setLabel("bottom", "nodes in execution order")
        self.legend = self.item.addLegend(offset=(-8, 4), labelTextSize="8pt", colCount=2)
        self.now: Timeline | None = None
        self.params_bytes = 0
        self.unit = ("B", 1)
        self.points: pg.ScatterPlotItem | None = None  # one per node of the graph now
        self.ring = pg.ScatterPlotItem(
            size=16, symbol="o", pen=pg.mkPen(theme.colors().selected, width=3), brush=None
        )
        self.ring.setZValue(20)
        self._index: dict[str, list[int]] = {}  # a node's name -> its points
        self.step: StepTimeline | None = None  # the training step shown (show_step)
        self.phase_labels: list[pg.TextItem] = []
        self.peak_label: pg.TextItem | None = None
        self._restyle()
        _follow_theme(self)

    # -- what is drawn -------------------------------------------------------------------

    def clear(self) -> None:
        self.item.clear()
        self.legend.clear()
        self.now, self.points, self._index, self.step = None, None, {}, None
        self.phase_labels = []

    def show_timelines(
        self,
        now: Timeline,
        params_bytes: int = 0,
        before: Timeline | None = None,
        before_params: int | None = None,
        measured: Timeline | None = None,
    ) -> None:
        """Draw ``now`` on its parameters' band, ``before`` (its own parameters: ``before_params``,
        default the same) and a ``measured`` timeline (of the nodes of ``now``)."""
        self.clear()
        self._restyle()
        self.now, self.params_bytes = now, params_bytes
        base_before = params_bytes if before_params is None else before_params
        tops = [params_bytes + max(now.during, default=0)]
        if before is not None and before.live:
            tops.append(base_before + max(before.during))
        if measured is not None and measured.live:
            tops.append(params_bytes + max(measured.during))
        self.unit = unit_for(max(tops))
        name, size = self.unit
        self.item.setLabel("left", f"live while each node runs ({name})")
        n = len(now.live)
        x = np.arange(n, dtype=float)
        if params_bytes:
            bx = x if n > 1 else np.array([-0.5, 0.5])
            self.item.plot(
                bx,
                np.full(len(bx), params_bytes / size),
                pen=pg.mkPen(PARAMS[:3], width=1),
                fillLevel=0.0,
                brush=pg.mkBrush(*PARAMS),
                name=f"parameters and buffers: {format_bytes(params_bytes)}",
            )
        if before is not None and before.live:
            bx = _xs(before, now)
            by = (base_before + np.asarray(before.during, dtype=float)) / size
            pen = pg.mkPen(BEFORE, width=2)  # (solid: a dashed wide pen over 10k points: 3.5 s)
            self.item.plot(bx, by, pen=pen, name=f"{before.label}: peak {_peak(before)}")
        if measured is not None and measured.live:
            my = (params_bytes + np.asarray(measured.during, dtype=float)) / size
            mx = _xs(measured, now)
            pen = pg.mkPen(MEASURED, width=2)
            self.item.plot(mx, my, pen=pen, name=f"{measured.label}: peak {_peak(measured)}")
        y = (params_bytes + np.asarray(now.during, dtype=float)) / size
        self.item.plot(x, y, pen=pg.mkPen(NOW, width=2), name=f"{now.label}: peak {_peak(now)}")
        self.points = pg.ScatterPlotItem(
            x=x,
            y=y,
            data=list(now.names),
            size=6 if n < 400 else 4,
            pen=None,
            brush=pg.mkBrush(NOW),
            hoverable=True,
            hoverSize=10,
            tip=self._tip,
        )
        self.points.setObjectName("memoryPoints")
        self.points.sigClicked.connect(self._clicked)
        self.item.addItem(self.points)
        self._index = {name: [i] for i, name in enumerate(now.names)}
        self.item.addItem(self.ring)
        self._mark_peak(
            now.peak,
            y,
            f"peak {format_bytes(max(now.during))} at {now.names[now.peak]}" if n else "",
        )
        self.item.enableAutoRange()
        self.item.setYRange(0, max(tops) / size * HEADROOM)
        self.item.setXRange(-0.5, max(n - 0.5, 0.5), padding=0.02)

    def show_step(self, step: StepTimeline, held: bool = True) -> None:
        """Draw a whole training step: forward, backward and the optimizer's step in
        execution order, each phase a band with its name, on a band of what is held through
        the step (parameters, optimizer state, inputs; ``held`` False: the activations
        alone), the step's peak starred at its node, a measured step's peak a line."""
        self.clear()
        self._restyle()
        self.step = step
        base = step.held if held else 0
        during = np.asarray(step.during, dtype=float)
        top = base + float(during.max(initial=0))
        if held and step.measured:
            top = max(top, float(step.measured))
        self.unit = unit_for(top)
        name, size = self.unit
        self.item.setLabel("left", f"live while each node runs ({name})")
        n = len(step.names)
        x = np.arange(n, dtype=float)
        ceiling = top / size * STEP_HEADROOM
        self._phase_bands(step)
        if base:
            self.item.plot(
                x,
                np.full(n, base / size),
                pen=pg.mkPen(PARAMS[:3], width=1),
                fillLevel=0.0,
                brush=pg.mkBrush(*PARAMS),
                name=f"parameters, optimizer state, inputs: {format_bytes(base)}",
            )
        y = (base + during) / size
        peak_bytes = step.peak_bytes if held else step.during[step.peak]
        label = f"training step: peak {format_bytes(peak_bytes)}"
        self.item.plot(x, y, pen=pg.mkPen(NOW, width=2), name=label)
        if held and step.measured:  # (one real step's peak: a level across it)
            level = np.full(2, step.measured / size)
            pen = pg.mkPen(MEASURED, width=2, style=Qt.PenStyle.DashLine)
            name = f"measured step{step.measured_on}: peak {format_bytes(step.measured)}"
            self.item.plot(np.array([-0.5, n - 0.5]), level, pen=pen, name=name)
        self.points = pg.ScatterPlotItem(
            x=x,
            y=y,
            data=list(range(n)),
            size=6 if n < 400 else 4,
            pen=None,
            brush=pg.mkBrush(NOW),
            hoverable=True,
            hoverSize=10,
            tip=self._tip,
        )
        self.points.sigClicked.connect(self._clicked)
        self.item.addItem(self.points)
        self._index = {}
        for i, origin in enumerate(step.origins):
            if origin:
                self._index.setdefault(origin, []).append(i)
        self.item.addItem(self.ring)
        i = step.peak
        where = (
            "in the optimizer's step"
            if step.phases[i] == "optimizer"
            else (f"at {step.phases[i]} node {step.names[i]}")
        )
        self._mark_peak(i, y, f"training peak {format_bytes(peak_bytes)} {where}")
        self.item.enableAutoRange()
        self.item.setYRange(0, ceiling)
        self.item.setXRange(-0.5, max(n - 0.5, 0.5), padding=0.02)

    def _phase_bands(self, step: StepTimeline) -> None:
        """Each phase a tinted band across its nodes, its name at the bottom left of it (the
        legend has the top)."""
        ink = QApplication.palette().color(QPalette.ColorRole.Text)
        for label, first, last in step.spans:
            colour = PHASE_BANDS.get(label, OPTIMIZER_BAND)
            band = pg.LinearRegionItem(
                (first - 0.5, last + 0.5),
                movable=False,
                brush=pg.mkBrush(*colour),
                pen=pg.mkPen(None),
            )
            band.setZValue(-20)
            self.item.addItem(band)
            text = pg.TextItem(label, color=ink, anchor=(0.0, 1.0) if last > first else (1.0, 1.0))
            text.setPos(first - 0.5 if last > first else last + 0.5, 0.0)
            text.setZValue(-10)
            self.item.addItem(text)
            self.phase_labels.append(text)

    def _mark_peak(self, i: int, y: np.ndarray, text: str) -> None:
        if i < 0:
            return
        star = pg.ScatterPlotItem(
            [float(i)], [float(y[i])], symbol="star", size=16, pen=pg.mkPen(PEAK), brush=PEAK
        )
        star.setZValue(15)
        self.item.addItem(star)
        anchor = (1.0, 1.0) if i > len(y) / 2 else (0.0, 1.0)
        base = QApplication.palette().color(QPalette.ColorRole.Base)
        fill = pg.mkBrush(QColor(base.red(), base.green(), base.blue(), 210))
        self.peak_label = pg.TextItem(text, color=PEAK, anchor=anchor, fill=fill)
        self.peak_label.setPos(float(i), float(y[i]))
        self.peak_label.setZValue(16)
        self.item.addItem(self.peak_label)

    def _tip(self, x: float, y: float, data: object) -> str:
        if isinstance(data, int) and self.step is not None:
            return _step_tip(self.step, data)
        now = self.now
        i = (self._index.get(str(data)) or [-1])[0]
        if now is None or i < 0:
            return str(data)
        lines = [str(data), f"live while it runs: {format_bytes(now.during[i])}"]
        if now.allocated:
            lines.append(f"its output allocates {format_bytes(now.allocated[i])}")
        lines.append(f"live after it: {format_bytes(now.live[i])}")
        return "\n".join(lines)

    def _clicked(self, _item: object, points: Sequence[pg.SpotItem], event: object) -> None:
        if not len(points):
            return
        data = _nearest(self.points, points, event).data()
        if isinstance(data, int) and self.step is not None:  # (the step: its document node)
            if self.step.origins[data]:
                self.pointClicked.emit(self.step.origins[data])
            return
        self.pointClicked.emit(str(data))

    def highlight(self, names: Sequence[str]) -> None:
        """Ring the points of ``names`` (the document's selection) -- those the graph has."""
        found = [i for n in names for i in self._index.get(n, ())]
        if self.points is None or not found:
            self.ring.setData([], [])
            return
        xs, ys = self.points.getData()
        self.ring.setData([xs[i] for i in found], [ys[i] for i in found])

    def ringed(self) -> list[int]:
        """The indices (execution order) of the points ringed now."""
        xs, _ys = self.ring.getData()
        return [int(round(x)) for x in xs]

    def point_position(self, name: str | int) -> QPointF:
        """Where ``name``'s point is (its first; an int: the point of that index), in the
        plot view's viewport pixels."""
        assert self.points is not None
        i = name if isinstance(name, int) else self._index[name][0]
        xs, ys = self.points.getData()
        scene = self.item.vb.mapViewToScene(QPointF(float(xs[i]), float(ys[i])))
        return QPointF(self.widget.mapFromScene(scene))

    # -- colours -------------------------------------------------------------------------

    def _restyle(self) -> None:
        palette = QApplication.palette()
        base = palette.color(QPalette.ColorRole.Base)
        ink = palette.color(QPalette.ColorRole.Text)
        self.widget.setBackground(base)
        for side in ("left", "bottom"):
            axis = self.item.getAxis(side)
            axis.setPen(pg.mkPen(ink))
            axis.setTextPen(pg.mkPen(ink))
        self.legend.setLabelTextColor(ink)
        self.legend.setBrush(pg.mkBrush(QColor(base.red(), base.green(), base.blue(), 200)))
        self.ring.setPen(pg.mkPen(theme.colors().selected, width=3))


_plots: weakref.WeakSet[MemoryPlot] = weakref.WeakSet()
_following: list[bool] = []  # (the theme told once, for every plot)


def _follow_theme(plot: MemoryPlot) -> None:
    """Restyle ``plot`` (its background, axes, legend) when the theme is switched."""
    if not _following:
        theme.on_change(_restyle_all)
        _following.append(True)
    _plots.add(plot)


def _restyle_all() -> None:
    for plot in list(_plots):
        if isValid(plot):
            plot._restyle()


def _xs(timeline: Timeline, now: Timeline) -> np.ndarray:
    """Where ``timeline``'s points go along ``now``'s nodes: at theirs when it has the same
    nodes (a measurement of this graph), else stretched to the same width (another graph)."""
    at = {name: i for i, name in enumerate(now.names)}
    if timeline.names and all(name in at for name in timeline.names):
        return np.array([at[name] for name in timeline.names], dtype=float)
    m, n = len(timeline.live), len(now.live)
    return np.linspace(0, max(n - 1, 1), m) if m > 1 else np.zeros(1)


def _peak(timeline: Timeline) -> str:
    return format_bytes(max(timeline.during)) if timeline.live else "none"


def _step_tip(step: StepTimeline, i: int) -> str:
    lines = [f"{step.phases[i]}: {step.names[i]}"]
    origin = step.origins[i]
    lines.append(f"from the document's node {origin}" if origin else "from no document node")
    lines.append(f"live while it runs: {format_bytes(step.during[i])} (and what is held)")
    if step.allocated[i]:
        lines.append(f"it allocates {format_bytes(step.allocated[i])}")
    return "\n".join(lines)


def _nearest(item: object, points: Sequence[pg.SpotItem], event: object) -> pg.SpotItem:
    """Of the points under a click (dense ones overlap), the one nearest to it on screen."""
    at = getattr(event, "scenePos", None)
    if at is None or not isinstance(item, pg.ScatterPlotItem) or len(points) == 1:
        return points[0]
    click = at()

    def distance(p: pg.SpotItem) -> float:
        d = item.mapToScene(p.pos()) - click
        return float(d.x() ** 2 + d.y() ** 2)

    return min(points, key=distance)
