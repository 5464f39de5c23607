"""The Memory dock's training step, read from the result's JSON (``training``: what
``fxstudio memory --train --json`` writes): the whole step as one timeline -- forward,
backward, the optimizer's step, in execution order, the phases marked, the peak at its node
(:class:`StepTimeline`, drawn by :meth:`~fxstudio.qt.panels.memory.plot.MemoryPlot.show_step`)
-- and its tables (:class:`StepRowsModel`, one model for thousands of rows): the backward's
nodes in order, each with the document's node it comes from, and the values live at the
step's peak.

Example::

    step = step_timeline(result.to_json()["training"])
    step.phase_of(step.peak), step.names[step.peak]      # ('backward', 'mul_30')
    table.setModel(StepRowsModel(backward_rows(data), BACKWARD_COLUMNS))
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QObject, QPersistentModelIndex, Qt

from fxstudio.core.process.guard import format_bytes

#: What a click on a row selects: the document's node the row comes from ("" none).
ORIGIN_ROLE = Qt.ItemDataRole.UserRole + 1
NAME_ROLE = Qt.ItemDataRole.UserRole + 2  # the row's node
SORT_ROLE = Qt.ItemDataRole.UserRole
OPTIMIZER_STEP = "optimizer.step"
PHASES = (("forward", "forward"), ("backward", "backward"), ("optimizer", "optimizer step"))
HEADERS = {
    "index": "#",
    "name": "Node",
    "what": "What",
    "bytes": "Bytes",
    "live": "Live after",
    "origin": "From (document node)",
    "module": "Module",
}
BACKWARD_COLUMNS = ("index", "name", "what", "bytes", "live", "origin", "module")
LIVE_COLUMNS = ("name", "what", "bytes", "origin", "module")
NO_ORIGIN = (
    "comes from no node of the document: autograd's own (the loss's gradient, a gradient "
    "summed over a value's uses, a parameter's or a saved value's input)"
)
Index = QModelIndex | QPersistentModelIndex


def is_input(row: dict[str, Any]) -> bool:
    """Whether a step's row is one of its graph's inputs (a placeholder: its target is its
    name) rather than a call that runs."""
    return bool(row.get("target") == row.get("name"))


def what(row: dict[str, Any], phase: str) -> str:
    """What a row is, in words: its op, or what a backward input holds."""
    if not is_input(row):
        target = str(row.get("target") or "")
        return target.removeprefix("torch.ops.aten.").removesuffix(".default")
    name = str(row["name"])
    if name.startswith("tangents"):
        return "input: the loss's gradient"
    if name.startswith("primals"):
        return "input: a parameter or a model input"
    return "input: saved by the forward" if phase == "backward" else "input"


@dataclass(frozen=True)
class StepTimeline:
    """The step's points in execution order (the graphs' inputs left out: they run
    nothing): ``names``, ``phases`` (forward, backward, optimizer), ``origins`` (the
    document's node each comes from, "" none), ``during`` (activation bytes live while each
    runs: saved values and gradients included), ``allocated``; ``held`` (parameters,
    optimizer state, inputs: through the whole step), ``peak`` (the index of the step's
    peak), ``peak_bytes`` (held included), ``spans`` (each phase's label, first and last
    index), ``measured`` (one real step's peak, or None; ``measured_on``: where)."""

    names: tuple[str, ...]
    phases: tuple[str, ...]
    origins: tuple[str, ...]
    during: tuple[int, ...]
    allocated: tuple[int, ...]
    held: int
    peak: int
    peak_bytes: int
    spans: tuple[tuple[str, int, int], ...]
    measured: int | None = None
    measured_on: str = ""  # " on cpu"

    def phase_of(self, i: int) -> str:
        return self.phases[i]


def step_timeline(step: dict[str, Any]) -> StepTimeline:
    """The whole step from its JSON: each phase's ``during`` made from its rows (what was live
    after the node before and what this one allocates), the optimizer's step last (the
    gradients and its scratch)."""
    names: list[str] = []
    phases: list[str] = []
    origins: list[str] = []
    during: list[int] = []
    allocated: list[int] = []
    spans = []
    for phase, label in PHASES[:2]:
        rows = list(step.get(phase) or [])
        first, prev = len(names), 0  # (an input's bytes: live after it, to their last use)
        for row in rows:
            if not is_input(row):  # (the graphs' inputs run nothing: not points)
                names.append(str(row["name"]))
                phases.append(phase)
                origins.append(str(row.get("origin") or ""))
                during.append(prev + int(row["bytes"]))
                allocated.append(int(row["bytes"]))
            prev = int(row["live_bytes"])
        if len(names) > first:
            spans.append((label, first, len(names) - 1))
    grads, scratch = int(step.get("grads_bytes", 0)), int(step.get("scratch_bytes", 0))
    names.append(OPTIMIZER_STEP)
    phases.append("optimizer")
    origins.append("")
    during.append(grads + scratch)
    allocated.append(scratch)
    spans.append((PHASES[2][1], len(names) - 1, len(names) - 1))
    held = sum(int(step.get(k, 0)) for k in ("params_bytes", "optimizer_bytes", "inputs_bytes"))
    peak = _peak_index(step, names, phases, during)
    measured = step.get("measured_peak_bytes")
    return StepTimeline(
        tuple(names),
        tuple(phases),
        tuple(origins),
        tuple(during),
        tuple(allocated),
        held,
        peak,
        int(step.get("peak_bytes", held + during[peak])),
        tuple(spans),
        int(measured) if measured is not None else None,
        f" on {step['measured']['device']}" if isinstance(step.get("measured"), dict) else "",
    )


def _peak_index(
    step: dict[str, Any], names: list[str], phases: list[str], during: list[int]
) -> int:
    """The point the estimate names as the peak (its phase and node), else the highest."""
    phase, node = step.get("peak_phase"), step.get("peak_node")
    for i, (n, p) in enumerate(zip(names, phases, strict=True)):
        if p == phase and (n == node or p == "optimizer"):
            return i
    return max(range(len(during)), key=during.__getitem__)


# --- the tables ---------------------------------------------------------------------------


def backward_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The backward's nodes in order, each with what it is, its bytes, the live bytes after
    it, the document's node it comes from and its module (the backward's record, else that
    node's)."""
    step = data.get("training") or {}
    modules = {str(n["name"]): str(n.get("module") or "") for n in data.get("nodes") or []}
    out = []
    for i, row in enumerate(step.get("backward") or []):
        origin = str(row.get("origin") or "")
        out.append(
            {
                "index": i,
                "name": str(row["name"]),
                "what": what(row, "backward"),
                "bytes": int(row["bytes"]),
                "live": int(row["live_bytes"]),
                "origin": origin,
                "module": str(row.get("module") or "") or modules.get(origin, ""),
            }
        )
    return out


def live_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The values live at the step's peak, the largest first: each with what it is, the
    bytes its node allocated, the document's node it comes from."""
    step = data.get("training") or {}
    phase = step.get("peak_phase")
    modules = {str(n["name"]): str(n.get("module") or "") for n in data.get("nodes") or []}
    rows: dict[str, tuple[dict[str, Any], str]] = {}
    order = ("backward", "forward") if phase == "forward" else ("forward", "backward")
    for p in order:  # (a saved value is named in both: the peak's phase's row wins)
        for row in step.get(p) or []:
            rows[str(row["name"])] = (row, p)
    out: list[dict[str, Any]] = []
    for name in step.get("live_at_peak") or []:
        row, p = rows.get(str(name), ({"name": name, "bytes": 0}, phase or ""))
        kind = what(row, p) if is_input(row) else f"made in the {p}: {what(row, p)}"
        if phase == "optimizer":
            kind = "gradient"
        origin = str(row.get("origin") or "")
        out.append(
            {
                "index": len(out),
                "name": str(name),
                "what": kind,
                "bytes": int(row.get("bytes") or 0),
                "live": int(row.get("live_bytes") or 0),
                "origin": origin,
                "module": str(row.get("module") or "") or modules.get(origin, ""),
            }
        )
    out.sort(key=lambda r: -int(r["bytes"]))
    return out


def peak_words(step: dict[str, Any], live: list[dict[str, Any]], top: int = 6) -> str:
    """The step's peak in words (HTML): where, what is held, what is live by kind, the
    largest values live there."""
    parts = dict(step.get("peak_parts") or {})
    phase, node = step.get("peak_phase"), step.get("peak_node")
    place = "in the optimizer's step" if phase == "optimizer" else f"at {phase} node {node}"
    kinds = (
        ("saved", "saved for the backward"),
        ("gradient", "gradients"),
        ("activation", "made in the step"),
        ("optimizer_scratch", "the optimizer's scratch"),
    )
    said = ", ".join(f"{w} {format_bytes(int(parts[k]))}" for k, w in kinds if parts.get(k))
    largest = ", ".join(
        f"{html.escape(r['name'])} {format_bytes(r['bytes'])}" for r in live[:top] if r["bytes"]
    )
    more = f" and {len(live) - top} more" if len(live) > top else ""
    return (
        f"<p><b>Live at the step's peak</b> ({format_bytes(int(step.get('peak_bytes', 0)))} "
        f"{html.escape(place)}): {len(live)} value(s) -- {html.escape(said)}; largest "
        f"{largest}{more}. <i>Backward</i> lists them all and the backward's nodes.</p>"
    )


class StepRowsModel(QAbstractTableModel):
    """Rows of a training step (``backward_rows`` or ``live_rows``) under ``columns`` (keys
    of :data:`HEADERS`); bytes in GiB/MiB shown, sorted by the raw number
    (:data:`SORT_ROLE`); :data:`ORIGIN_ROLE` the document's node a row comes from."""

    def __init__(
        self, rows: list[dict[str, Any]], columns: tuple[str, ...], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.rows = rows
        self.columns = columns
        self.order: tuple[int, Qt.SortOrder] | None = None  # the column sorted by, how

    def set_rows(self, rows: list[dict[str, Any]]) -> None:
        self.beginResetModel()
        self.rows = self._sorted(rows)
        self.endResetModel()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Sorted by a column's raw values (the bytes as numbers), in Python (a proxy asks
        ``data()`` per comparison: 0.4 s for 5,600 rows); column -1: as given."""
        if column < 0 or column >= len(self.columns):
            return
        self.layoutAboutToBeChanged.emit()
        self.order = (column, order)
        self.rows = self._sorted(self.rows)
        self.layoutChanged.emit()

    def _sorted(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.order is None:
            return rows
        key, order = self.columns[self.order[0]], self.order[1]
        return sorted(rows, key=lambda r: r[key], reverse=order == Qt.SortOrder.DescendingOrder)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = 0) -> Any:  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return HEADERS[self.columns[section]]
        return None

    def data(self, index: Index, role: int = 0) -> Any:
        if not index.isValid():
            return None
        row, key = self.rows[index.row()], self.columns[index.column()]
        value = row[key]
        if role == ORIGIN_ROLE:
            return row["origin"]
        if role == NAME_ROLE:
            return row["name"]
        if role == SORT_ROLE:
            return value
        if role == Qt.ItemDataRole.DisplayRole:
            if key in ("bytes", "live"):
                return format_bytes(int(value)) if value or key == "live" else "—"
            if key == "origin" and not value:
                return "—"
            return str(value)
        if role == Qt.ItemDataRole.ToolTipRole:
            origin = row["origin"]
            if not origin:
                return f"{row['name']} {NO_ORIGIN}"
            return f"{row['name']} comes from the document's node {origin}: click to select it"
        if role == Qt.ItemDataRole.TextAlignmentRole and key in ("index", "bytes", "live"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
