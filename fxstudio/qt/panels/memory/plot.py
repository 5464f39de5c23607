"""The Memory dock's timeline: the live bytes after each node, in execution order, drawn with
pyqtgraph (made for Qt: a plot of 10,000 points pans, zooms and answers a click at once, where
matplotlib's Qt canvas redraws the whole figure; it draws with QPainter, so it works offscreen
and follows the window's palette).

- the parameters (and buffers) as a band along the bottom, the activations' live bytes stacked
  on it -- what the device holds after each node;
- one point per node (hover: its name, what it allocates, what is live after it; click: the
  node is selected in the document -- :attr:`MemoryPlot.pointClicked`);
- the peak -- the most live while a node runs: what was live before it and its output --
  starred (a click on the star selects its node, as on any point) and labelled;
- the legend and the peak's label kept inside the plot and clear of each other and of the
  curves whatever its size (:meth:`MemoryPlot.fit`: the y range leaves room above the
  curves for them, the legend goes to one column when two do not fit and to the corner the
  label leaves free, the label to the side of its star where it fits);
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
from fxstudio.qt.panels.memory.step import StepTimeline

UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1))
NOW = "#2563eb"  # the graph now: its curve and points
BEFORE = "#8c8c8c"  # the graph before
MEASURED = "#059669"
PEAK = "#d7191c"
PARAMS = (245, 158, 11, 70)  # the parameters' band (amber, translucent)
#: Each phase's band behind a training step (forward, backward, optimizer step).
PHASE_BANDS = {"forward": (37, 99, 235, 22), "backward": (124, 58, 237, 30)}
OPTIMIZER_BAND = (5, 150, 105, 40)
MARGIN = 6  # pixels between the legend, the peak's label, the star and the plot's edges
STAR = 16  # the peak's star, pixels across
LEGEND_TOP = 4  # pixels from the plot's top to its legend
MOST_ROOM = 0.6  # of the plot's height, at most, kept above the curves for them


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
        self.legend = self.item.addLegend(  # (rows as tight as their 8 pt text)
            offset=(-MARGIN, LEGEND_TOP), labelTextSize="8pt", colCount=2, verSpacing=-6
        )
        self.legend.setZValue(30)  # (over the curves; the label is kept clear of it)
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
        self.peak_star: pg.ScatterPlotItem | None = None
        self.top = 0.0  # the highest curve, in the axis's unit (what fit keeps room above)
        self.fitted = False  # the y range is fit's (not zoomed or panned by the user)
        self._restyle()
        _follow_theme(self)
        view = self.item.vb
        view.sigResized.connect(lambda _view: self.fit())
        view.sigRangeChangedManually.connect(lambda _axes: setattr(self, "fitted", False))

    # -- what is drawn -------------------------------------------------------------------

    def clear(self) -> None:
        self.item.clear()
        self.legend.clear()
        self.now, self.points, self._index, self.step = None, None, {}, None
        self.phase_labels = []
        self.peak_label, self.peak_star, self.top = None, None, 0.0

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
        self._ranges(max(tops) / size, n)

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
        n = len(step.names)
        x = np.arange(n, dtype=float)
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
        self._ranges(top / size, n)

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
        """The star on point ``i`` (over it: a click on it is a click on the point) and
        its label above it."""
        if i < 0 or self.points is None:
            return
        data = self.points.data["data"][i]  # (the point's: a node's name, a step's index)
        star = pg.ScatterPlotItem(
            [float(i)],
            [float(y[i])],
            data=[data],
            symbol="star",
            size=STAR,
            pen=pg.mkPen(PEAK),
            brush=PEAK,
            hoverable=True,
            tip=self._tip,
        )
        star.setZValue(15)
        star.sigClicked.connect(self._clicked)
        self.item.addItem(star)
        self.peak_star = star
        base = QApplication.palette().color(QPalette.ColorRole.Base)
        fill = pg.mkBrush(QColor(base.red(), base.green(), base.blue(), 210))
        self.peak_label = pg.TextItem(text, color=PEAK, anchor=(0.0, 1.0), fill=fill)
        self.peak_label.setPos(float(i), float(y[i]))
        self.peak_label.setZValue(16)
        self.item.addItem(self.peak_label)

    def _ranges(self, top: float, n: int) -> None:
        """The x range over the ``n`` nodes, the y range from 0 over ``top`` (the highest
        curve) with room above it (:meth:`fit`)."""
        self.top, self.fitted = top, True
        self.item.enableAutoRange()
        self.item.setXRange(-0.5, max(n - 0.5, 0.5), padding=0.02)
        self.fit()

    # -- fitting the legend and the label ------------------------------------------------

    def fit(self) -> None:
        """Keep the legend and the peak's label in the plot and clear of each other and of
        the curves, at the plot's size now: the legend in two columns if they fit its width,
        else one, in the top corner the label leaves free (else over it); the y range
        (unless the user zoomed) with room above the highest curve for both; the label on
        the side of its star where it fits; the left axis's title shortened when the plot
        is too short for it.  A plot too small for both shows the legend alone (the star
        stays, its point's tip says the rest); too small for the legend, the label alone."""
        view = self.item.vb
        width, height = view.width(), view.height()
        if width <= 0 or height <= 0:
            return
        legend = self.legend
        self._legend_columns(width)
        axis, name = self.item.getAxis("left"), self.unit[0]
        for title in (f"live while each node runs ({name})", f"live ({name})"):
            if axis.labelText != title:
                self.item.setLabel("left", title)
                axis.resizeEvent()  # (the title is placed there, by its length)
            if axis.label.boundingRect().width() <= height - 2 * MARGIN:  # (as tall)
                break
        label = self.peak_label
        room = label.textItem.boundingRect().height() + STAR if label is not None else 0.0
        above = LEGEND_TOP + legend.height() + MARGIN  # (the legend's band, at the top)
        beside = width - legend.width() - 2 * MARGIN  # (where the label may be beside it)
        # the legend at the right (or left), the label in the rest of the width; else the
        # label under the legend, anywhere across
        corner, need = "right", max(above, room)
        if label is not None:
            for side, lo, hi in (("right", 0.0, beside), ("left", width - beside, width)):
                if self._place_label(label, width, lo, hi):
                    corner = side
                    break
            else:
                need = above + room
                self._place_label(label, width, 0.0, width)
        legend.setOffset((-MARGIN if corner == "right" else MARGIN, LEGEND_TOP))
        most = MOST_ROOM * height
        keys = legend.width() <= width - 2 * MARGIN and min(need, above) <= most
        if label is not None:  # (no room for both: the legend, which names the curves)
            label.setVisible(need <= most or not keys)
        legend.setVisible(keys)
        if self.fitted and self.top > 0:
            need = need if need <= most else (above if keys else room)
            view.setYRange(0, self.top * height / (height - min(need, most)), padding=0)

    def _legend_columns(self, width: float) -> None:
        """The legend in two columns if they fit ``width``, else in one; its entries as
        wide as their texts (a grid column stretches them, and the legend's size is theirs)."""
        legend = self.legend
        entries = []
        for sample, label in legend.items:
            text = label.itemRect().width()
            label.setMaximumWidth(text)
            entries.append(sample.width() + text + 6)  # (3 after each, as pyqtgraph's)

        def across(columns: int) -> float:  # (each column as wide as its widest entry)
            widths = [0.0] * columns
            for k, entry in enumerate(entries):
                widths[k % columns] = max(widths[k % columns], entry)
            return sum(widths)

        columns = 2 if across(2) <= width - 2 * MARGIN else 1
        if columns != legend.columnCount:
            legend.setColumnCount(columns)
        legend.updateSize()
        legend.resize(max(legend.width(), across(columns)), legend.height())

    def _place_label(self, label: pg.TextItem, width: float, lo: float, hi: float) -> bool:
        """The peak's label above its star, within ``lo``..``hi`` (pixels from the plot's
        left) if it fits there: to the right of the star if it can be, else to its left,
        else across it; whether it fits (if not, it is put as near as it goes)."""
        (x0, x1), _y = self.item.vb.viewRange()
        x = (label.pos().x() - x0) / (x1 - x0) * width if x1 > x0 else 0.0
        box = label.textItem.boundingRect()
        w = box.width()
        if w <= 0:
            return True
        lift = 1.0 + STAR / 2 / box.height()  # (its bottom at the star's top)
        lo, hi = lo + MARGIN, hi - MARGIN
        least, most = max((x + w - hi) / w, 0.0), min((x - lo) / w, 1.0)  # (the anchors)
        fits = least <= most
        anchor = least if fits else min(max(least, 0.0), 1.0)
        label.setAnchor((anchor, lift))
        return fits

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

    def _clicked(self, item: object, points: Sequence[pg.SpotItem], event: object) -> None:
        """A click on points (or on the peak's star, over its point): the node of the one
        nearest to it."""
        if not len(points):
            return
        data = _nearest(item, points, event).data()
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
