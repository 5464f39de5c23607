"""The Compare window: two graphs side by side, their nodes aligned
(:func:`fxstudio.core.flows.diff_flow`, as ``fxstudio diff`` compares them).

Opened from *File ▸ Compare with…* (another model or session), *File ▸ Compare with before
the last rewrite*, and the Run dock's pinned baseline.  "Before" is on the left, "after" on
the right: the graph before the rewrite, the pinned baseline, or -- compared with another
model -- the earlier version of the two (:func:`fxstudio.core.flows.diff.ordered`: the model
the document was captured from, the session it was reopened from), else the document; *Swap
sides* swaps them and compares again.  The document's side is a copy of it as it was when
the window opened (later edits do not reach it); each side is a
:class:`~fxstudio.qt.windows.compare_side.CompareSide`.  The alignment and both graphs'
values on the same inputs are worked out in a worker; then:

- each side is drawn on a canvas of its own: removed nodes red (left), added green (right),
  changed amber (both: a rewrite made it, its op, shape or inputs differ, or its values do);
  a collapsed module holding differences takes their colour;
- the list of differences -- the first value difference first, then what changed, what was
  removed and added -- is stepped through with *Previous* / *Next* (or the arrow keys); each
  one is selected and centred on both sides (a removed or added node's other side is centred
  on the partner of its nearest paired neighbour, or of the pair that took it away);
- selecting a node on one side selects and centres its partner on the other; collapsing or
  expanding a module collapses or expands the same module on the other side; with *Scroll
  together* a scroll or zoom (not a resize) centres the other side on the partner of the
  nearest paired node;
- *Heat* tints the right side by each pair's value difference, or, once *Measure times* has
  profiled both (interleaved), by the size of its time change (tagged -52 % for a pair that
  takes half the time, +25 % for one a quarter slower; a folded conv's before counts the
  BatchNorm it took away).

Esc or *Close* (Ctrl+W) closes it.  Closed, it is deleted, and nothing of it stays connected
to what outlives it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.edits.snapshots import Snapshot, detached, snapshot
from fxstudio.core.errors import UserError
from fxstudio.core.flows import DiffRequest, DiffResult, diff_flow
from fxstudio.core.flows.diff import Alignment, Times, Values
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.wording import for_window
from fxstudio.qt.canvas.items import NodeItem
from fxstudio.qt.screen import fit_to_screen
from fxstudio.qt.windows.compare_side import CompareSide
from fxstudio.qt.workers import Task

HEATS = ("No heat", "Value difference", "Time change")

#: Why *Measure times* is off when a side holds its structure only.
NO_TIMES = "Timing needs both models' weights: a side holds its structure only (no weights)"


class CompareWindow(QWidget):
    """Two graphs compared (see the module docstring).  ``ready`` is emitted once the
    alignment and values are shown, ``timed`` once the times are."""

    ready = Signal()
    timed = Signal()

    def __init__(
        self,
        left: GraphDocument,
        right: GraphDocument,
        titles: tuple[str, str],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent, Qt.WindowType.Window)
        self.setObjectName("compareWindow")
        self.titles = titles
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.alignment: Alignment | None = None
        self.values: Values | None = None
        self.times: Times | None = None
        self.diff: DiffResult | None = None
        self._task: Task | None = None
        self._syncing = False
        self.summary = QLabel("Aligning the two graphs and running both on the same inputs…")
        self.summary.setObjectName("compareSummary")
        self.summary.setWordWrap(True)
        self.left = CompareSide(left, "", self)
        self.right = CompareSide(right, "", self)
        self._titled()
        self.differences = QListWidget(self)
        self.differences.setObjectName("compareDifferences")
        self.previous = QPushButton("◀ Previous", self)
        self.next = QPushButton("Next ▶", self)
        self.heat = QComboBox(self)
        self.heat.addItems(HEATS)
        self.heat.setToolTip("Tint the right graph by each pair's value difference or time change")
        self.sync_scroll = QCheckBox("Scroll together", self)
        self.sync_scroll.setChecked(True)
        self.sync_scroll.setToolTip(
            "Scrolling one side centres the other on the partner of the node in the middle"
        )
        self.measure = QPushButton("Measure times", self)
        self.measure.setToolTip(
            "Profile both graphs node by node, interleaved, and compare each pair's time"
        )
        self.swap_button = QPushButton("⇄ Swap sides", self)
        self.swap_button.setToolTip(
            "Put the right graph on the left, as 'before', and compare the two again"
        )
        self._build()
        for side, other in ((self.left, self.right), (self.right, self.left)):
            side.selection.changed.connect(
                lambda names, side=side, other=other: self._selected(side, other, names)
            )
            side.session.changed.connect(
                lambda _event, side=side, other=other: self._collapsed(side, other)
            )
            side.view.scrolled.connect(  # (not a resize: the opening view stays as it is)
                lambda side=side, other=other: self._scrolled(side, other)
            )
        self.differences.currentRowChanged.connect(self._show_difference)
        self.previous.clicked.connect(lambda: self._step(-1))
        self.next.clicked.connect(lambda: self._step(1))
        self.heat.currentIndexChanged.connect(lambda _i: self._show_heat())
        self.measure.clicked.connect(self.measure_times)
        self.swap_button.clicked.connect(self.swap)
        for keys in (QKeySequence.StandardKey.Close, QKeySequence(Qt.Key.Key_Escape)):
            QShortcut(keys, self, self.close)  # Ctrl+W (Cmd+W), Esc
        self.left.show_document()
        self.right.show_document()
        self._start(lambda: self._work(left, right), self._aligned)

    def _build(self) -> None:
        panel = QWidget(self)
        side = QVBoxLayout(panel)
        side.setContentsMargins(4, 0, 0, 0)
        side.addWidget(QLabel("Differences", panel))
        side.addWidget(self.differences, 1)
        steps = QHBoxLayout()
        steps.addWidget(self.previous)
        steps.addWidget(self.next)
        side.addLayout(steps)
        side.addWidget(self.heat)
        side.addWidget(self.sync_scroll)
        side.addWidget(self.measure)
        side.addWidget(self.swap_button)
        split = self.split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.left)
        split.addWidget(self.right)
        split.addWidget(panel)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 3)
        split.setStretchFactor(2, 1)
        box = QVBoxLayout(self)
        box.addWidget(self.summary)
        box.addWidget(split, 1)
        for widget in (self.previous, self.next, self.heat, self.measure, self.swap_button):
            widget.setEnabled(False)

    def _titled(self) -> None:
        left, right = self.titles
        self.setWindowTitle(f"Compare — {left} vs {right}")
        self.left.title.setText(f"Left (before): {left}")
        self.right.title.setText(f"Right (after): {right}")

    # --- the work, in a worker ---------------------------------------------------------------

    def _start(self, work: Any, done: Any) -> None:
        self.swap_button.setEnabled(False)  # (until this work is done)
        task = Task(work, self)
        task.succeeded.connect(done)
        task.failed.connect(self._failed)
        self._task = task
        task.start()

    @staticmethod
    def _work(left: GraphDocument, right: GraphDocument) -> DiffResult:
        # different inputs, a side that fails: aligned all the same (keep_going)
        return diff_flow(DiffRequest(left, right, keep_going=True))

    def _failed(self, exc: BaseException) -> None:
        self._task = None
        self.measure.setEnabled(self.alignment is not None)
        self.swap_button.setEnabled(True)
        self.summary.setText(f"{self.summary.text()}\n\nCould not finish: {_in_words(exc)}")

    def _aligned(self, diff: DiffResult) -> None:
        self._task = None
        self.diff, self.alignment, self.values = diff, diff.alignment, diff.values
        a = self.alignment
        calls = diff.coverage()
        text = f"{a.describe()}; call nodes paired: {calls[0]:.0%} left, {calls[1]:.0%} right."
        if self.values is not None:
            text += f"\n{self.values.describe()}."
        else:
            text += f"\nValues not compared: {_in_words(diff.values_problem)}"
        self.summary.setText(text)
        self._fill()
        self._mark()
        for widget in (self.previous, self.next, self.heat, self.measure, self.swap_button):
            widget.setEnabled(True)
        if not (self.left.document.weights and self.right.document.weights):
            self.measure.setEnabled(False)  # a structure-only side: nothing to time
            self.measure.setToolTip(NO_TIMES)
        self.ready.emit()

    def measure_times(self) -> None:
        diff = self.diff
        if diff is None or self._task is not None:
            return
        self.measure.setEnabled(False)
        self.measure.setText("Measuring…")
        self._start(lambda: diff.measure_times(min_time=0.5), self._timed)

    def _timed(self, times: Times) -> None:
        self._task = None
        self.times = times
        self.measure.setText("Measure again")
        self.measure.setEnabled(True)
        self.swap_button.setEnabled(True)
        self.summary.setText(f"{self.summary.text()}\nTimes: {times.whole.describe()}")
        self.heat.setCurrentIndex(HEATS.index("Time change"))
        self._show_heat()
        self.timed.emit()

    def swap(self) -> None:
        """*Swap sides*: the right graph on the left, as "before", and the two compared
        again (the canvases move with their graphs: nothing is laid out again)."""
        if self._task is not None:
            return
        self.left, self.right = self.right, self.left
        self.split.insertWidget(0, self.left)
        self.titles = (self.titles[1], self.titles[0])
        self._titled()
        self.alignment = self.values = self.times = self.diff = None
        self.differences.clear()
        self.heat.setCurrentIndex(HEATS.index("No heat"))
        for side in (self.left, self.right):
            side.marks.status, side.marks.current = {}, set()
            side.heat.set_values({}, {}, "")
            side.redraw()
        for widget in (self.previous, self.next, self.heat, self.measure):
            widget.setEnabled(False)
        self.measure.setText("Measure times")
        self.summary.setText("Sides swapped: aligning the two graphs and running both again…")
        left, right = self.left.document, self.right.document
        self._start(lambda: self._work(left, right), self._aligned)

    # --- what is shown -----------------------------------------------------------------------

    def _fill(self) -> None:
        a = self.alignment
        assert a is not None
        self.differences.clear()
        rows: list[tuple[str, tuple[str, ...], tuple[str, ...], str]] = []
        if self.values is not None and self.values.first_difference is not None:
            first = self.values.first_difference
            pair = a.pair_of_right(first)
            row = self.values.of_right(first)
            what = (
                row.note
                if row is not None and row.max_rel_diff is None
                else (f"relative difference {row.max_rel_diff:.3g}" if row is not None else "")
            )
            rows.append(
                (
                    f"First difference: {first} — {what}",
                    pair.left if pair else (),
                    (first,),
                    "first",
                )
            )
        for p in a.changed():
            label = f"Changed ({p.why}): {' + '.join(p.left + p.absorbed)} → {' + '.join(p.right)}"
            rows.append((label, p.left + p.absorbed, p.right, "changed"))
        rows += [(f"Removed: {n}", (n,), (), "removed") for n in a.removed]
        rows += [(f"Added: {n}", (), (n,), "added") for n in a.added]
        for label, left, right, kind in rows:
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, (left, right))
            item.setToolTip(label)
            if kind == "first":
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            self.differences.addItem(item)
        if not rows:
            self.differences.addItem("No differences: every node is paired and the same.")

    def _mark(self) -> None:
        a = self.alignment
        assert a is not None
        changed = a.changed()
        self.left.marks.status = {n: "removed" for n in a.removed}
        self.right.marks.status = {n: "added" for n in a.added}
        if self.values is not None:  # a pair whose values differ is changed too
            differ = {v.right for v in self.values.nodes if v.differs}
            changed += [p for p in a.pairs if differ & set(p.right)]
        for p in changed:
            self.left.marks.status.update({n: "changed" for n in p.left})
            self.right.marks.status.update({n: "changed" for n in p.right})
        self.left.redraw()
        self.right.redraw()

    def _show_heat(self) -> None:
        mode = HEATS[self.heat.currentIndex()]
        values: dict[str, float] = {}
        labels: dict[str, str] = {}
        tip = ""
        if mode == "Value difference" and self.values is not None:
            for v in self.values.nodes:
                if v.max_rel_diff is not None and v.max_rel_diff > 0:
                    values[v.right] = v.max_rel_diff
                    labels[v.right] = f"{v.max_rel_diff:.1e}"
            tip = "value difference (relative to the left value's scale): {label}"
        elif mode == "Time change" and self.times is not None:
            for t in self.times.pairs:
                for name in t.right:
                    values[name] = abs(t.delta_s)
                    labels[name] = f"{t.after_s / t.before_s - 1:+.0%}" if t.before_s else "new"
            tip = "time change after vs before (negative: faster): {label}"
        elif mode == "Time change":
            self.measure_times()
        self.right.heat.set_values(values, labels, tip)
        self.right.redraw()

    def _step(self, by: int) -> None:
        count = self.differences.count()
        if count:
            self.differences.setCurrentRow((self.differences.currentRow() + by) % count)

    def _show_difference(self, row: int) -> None:
        item = self.differences.item(row)
        data = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if not data:
            return
        left, right = data
        self.left.marks.current, self.right.marks.current = set(left), set(right)
        # A removed (added) node has nothing on the other side: that side is centred where
        # it would be, so that both sides show the same place.
        centre = (
            list(left) or self._partners_near(self.right, right),
            list(right) or self._partners_near(self.left, left),
        )
        self._syncing = True
        try:
            for side, names, there in zip(
                (self.left, self.right), (left, right), centre, strict=True
            ):
                side.selection.select(names)
                side.canvas.center_on(there)
                side.marks.redraw(side.canvas.scene)
        finally:
            self._syncing = False

    def _partners_near(self, side: CompareSide, names: tuple[str, ...]) -> list[str]:
        """The other side's nodes for ``names`` of ``side``, which have no partner: those of
        the pair that took them away (a folded BatchNorm's conv), else those of their
        nearest paired neighbour in the graph (inputs and users, a step at a time)."""
        a = self.alignment
        if a is None or not names:
            return []
        on_left = side is self.left
        find = a.pair_of_left if on_left else a.pair_of_right
        if on_left:
            for p in a.pairs:
                if set(p.absorbed) & set(names):
                    return list(p.right)
        doc = side.document
        seen, frontier = set(names), [n for n in names if n in doc]
        while frontier:
            step: list[str] = []
            for name in frontier:
                for near in [n for _label, n in doc.inputs(name)] + doc.users(name):
                    if near in seen:
                        continue
                    seen.add(near)
                    pair = find(near)
                    if pair is not None:
                        return list(pair.right if on_left else pair.left)
                    step.append(near)
            frontier = step
        return []

    def _selected(self, side: CompareSide, other: CompareSide, names: list[str]) -> None:
        """A node picked on one side: its partners picked and centred on the other."""
        if self._syncing or self.alignment is None:
            return
        find = self.alignment.pair_of_left if side is self.left else self.alignment.pair_of_right
        partners: list[str] = []
        for name in names:
            pair = find(name)
            if pair is not None:
                partners += pair.right if side is self.left else pair.left
        self._syncing = True
        try:
            other.selection.select(partners)
            if partners:
                other.canvas.center_on(partners)
        finally:
            self._syncing = False

    def _collapsed(self, side: CompareSide, other: CompareSide) -> None:
        """A module collapsed or expanded on one side: the same on the other, where it has
        a module of that path (the same model, or one that shares its structure)."""
        if self._syncing:
            return
        mine, theirs = side.document, other.document
        groups = theirs.module_tree()
        paths = {g.path for g in groups.walk() if g.path}
        want = (theirs.collapsed - paths) | (mine.collapsed & paths)
        if want != theirs.collapsed:
            self._syncing = True
            try:
                theirs.set_collapsed_groups(want)
            finally:
                self._syncing = False

    def _scrolled(self, side: CompareSide, other: CompareSide) -> None:
        """One side scrolled: the other centred on the partner of the node in its middle."""
        if self._syncing or self.alignment is None or not self.sync_scroll.isChecked():
            return
        port = side.view.viewport().rect()
        middle = side.view.mapToScene(port.center())
        shown = side.view.mapToScene(port).boundingRect()
        items = [i for i in side.canvas.scene.items(shown) if isinstance(i, NodeItem)]
        if not items:
            return
        find = self.alignment.pair_of_left if side is self.left else self.alignment.pair_of_right
        items.sort(key=lambda i: _distance(i.sceneBoundingRect().center(), middle))
        pair = next(
            (p for i in items if (p := find(i.name)) is not None), None
        )  # the nearest paired
        if pair is None:
            return
        self._syncing = True
        try:
            other.canvas.center_on(list(pair.right if side is self.left else pair.left))
        finally:
            self._syncing = False

    def closeEvent(self, event: Any) -> None:  # noqa: N802
        if self._task is not None:
            self._task.cancel()
        for side in (self.left, self.right):
            side.canvas.cancel()
        super().closeEvent(event)


def _in_words(exc: BaseException | None) -> str:
    """A worker's failure as the window says it: a refusal as worded, anything else with
    the name of what was raised."""
    if exc is None:
        return ""
    return for_window(str(exc)) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"


def _distance(a: Any, b: Any) -> float:
    return float((a.x() - b.x()) ** 2 + (a.y() - b.y()) ** 2)


# --- opening one ------------------------------------------------------------------------------


def copy_of(doc: GraphDocument) -> GraphDocument:
    """The document as it is now, for the left side (edits made later do not reach it)."""
    return detached(snapshot(doc, held=True))


def show_compare(
    window: Any, left: GraphDocument, right: GraphDocument, titles: tuple[str, str]
) -> CompareWindow:
    view = CompareWindow(left, right, titles, window)
    fit_to_screen(view, max(1200, window.width()), max(760, window.height()))
    view.show()
    return view


def compare_snapshot(window: Any, baseline: Snapshot, label: str) -> CompareWindow:
    """The Run dock's pinned baseline (left) against the document now (right)."""
    doc = window.document
    name = doc.request.spec or "the model"
    return show_compare(window, detached(baseline), copy_of(doc), (label, f"{name} now"))
