"""The node table: a ``QAbstractTableModel`` over ``GraphDocument.rows()`` -- and, after a
per-node profile, a *Time* column (headed *Time (stale)*, greyed, once the graph is no longer
the one it was measured on)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QBrush, QColor

from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.core.graph.graphviews import NodeRow

HEADERS = {
    "opcode": "Op",
    "name": "Name",
    "target": "Target",
    "args": "Args",
    "kwargs": "Kwargs",
    "shape": "Shape",
    "dtype": "Dtype",
    "module_path": "Module",
}

NAME_ROLE = Qt.ItemDataRole.UserRole + 1
STALE_TIP = (
    "Measured on the graph before its last change, not on the graph as it is now: "
    "Run again to time it."
)
STALE_BRUSH = QBrush(QColor("#8c8c8c"))
Index = QModelIndex | QPersistentModelIndex


class NodeTableModel(QAbstractTableModel):
    """One row per node, in graph order (the ``print_tabular`` view plus shapes)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._document: GraphDocument | None = None
        self._rows: list[NodeRow] = []
        self._row_of: dict[str, int] = {}
        self._times: dict[str, tuple[float, float]] = {}  # profiled: name -> (seconds, share)
        self.times_stale = False  # the times are of another version of the graph

    def set_times(self, times: dict[str, tuple[float, float]], stale: bool = False) -> None:
        """Show a *Time* column (the last per-node profile); ``{}`` takes it away.  ``stale``:
        measured on another version of the graph (the column says so, greyed)."""
        if not times and not self._times:
            return  # nothing shown, nothing to show: no reset of a big table
        if times == self._times:  # the same times, now stale or current again: no reset
            if stale != self.times_stale:
                self.times_stale = stale
                column = len(NodeRow.COLUMNS)
                self.headerDataChanged.emit(Qt.Orientation.Horizontal, column, column)
                if self._rows:
                    last = self.index(len(self._rows) - 1, column)
                    self.dataChanged.emit(self.index(0, column), last)
            return
        self.beginResetModel()
        self._times = dict(times)
        self.times_stale = stale
        self.endResetModel()

    def set_document(self, document: GraphDocument | None) -> None:
        self.beginResetModel()
        self._document = document
        self._reload()
        self.endResetModel()

    def reload(self) -> None:
        """Read every row again (after changes the window did not pass on one by one)."""
        self.beginResetModel()
        self._reload()
        self.endResetModel()

    def _reload(self) -> None:
        self._rows = list(self._document.rows()) if self._document else []
        self._row_of = {r.name: i for i, r in enumerate(self._rows)}

    def on_document_changed(self, event: DocumentEvent) -> None:
        """Rows removed, inserted and changed one by one (a reset would make the view and
        its sort and filter read all 10,000 rows of a big graph again).  A replaced graph is
        the Nodes dock's to :meth:`reload` (in a turn of its own when the graph is big)."""
        doc = self._document
        if event.kind is ChangeKind.VIEW_CHANGED or doc is None:
            return
        names = doc.node_names()
        if len(names) != len(self._rows) or any(
            a != b.name for a, b in zip(names, self._rows, strict=True)
        ):
            if not self._insert_and_remove(names):
                self.reload()
                return
        touched = event.names | event.reshaped
        changed = sorted(self._row_of[n] for n in touched if n in self._row_of)
        if not changed:
            return
        rows = doc.rows() if len(changed) > 50 else None  # a catch-up has them ready
        for i in changed:
            self._rows[i] = rows[i] if rows is not None else doc.row(self._rows[i].name)
        last = self.columnCount() - 1
        for first, end in _runs(changed):
            self.dataChanged.emit(self.index(first, 0), self.index(end, last))

    def _insert_and_remove(self, names: list[str]) -> bool:
        """Make the rows follow ``names``; False when nodes changed places (reload then)."""
        doc = self._document
        assert doc is not None
        wanted = set(names)
        gone = [i for i, r in enumerate(self._rows) if r.name not in wanted]
        for first, last in reversed(_runs(gone)):
            self.beginRemoveRows(QModelIndex(), first, last)
            del self._rows[first : last + 1]
            self.endRemoveRows()
        kept = {r.name for r in self._rows}
        if [r.name for r in self._rows] != [n for n in names if n in kept]:
            return False
        new = [i for i, n in enumerate(names) if n not in kept]
        for first, last in _runs(new):
            self.beginInsertRows(QModelIndex(), first, last)
            self._rows[first:first] = [doc.row(n) for n in names[first : last + 1]]
            self.endInsertRows()
        self._row_of = {r.name: i for i, r in enumerate(self._rows)}
        return True

    def row_of(self, name: str) -> int | None:
        return self._row_of.get(name)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(NodeRow.COLUMNS) + (1 if self._times else 0)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        if index.column() == len(NodeRow.COLUMNS):  # the profiled time
            seconds, share = self._times.get(row.name, (-1.0, 0.0))
            if role == Qt.ItemDataRole.UserRole:
                return seconds
            text = f"{seconds * 1e3:.3f} ms ({share:.1%})" if seconds >= 0 else ""
            if role == Qt.ItemDataRole.DisplayRole:
                return text
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"{text}\n{STALE_TIP}" if text and self.times_stale else text
            if role == Qt.ItemDataRole.ForegroundRole and self.times_stale:
                return STALE_BRUSH
            return row.name if role == NAME_ROLE else None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return row.values()[index.column()]
        if role == NAME_ROLE:
            return row.name
        if role == Qt.ItemDataRole.UserRole:  # sort key: graph order for the name column
            return (
                index.row()
                if NodeRow.COLUMNS[index.column()] == "name"
                else row.values()[index.column()]
            )
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:  # noqa: N802
        time_column = orientation == Qt.Orientation.Horizontal and section == len(NodeRow.COLUMNS)
        if role == Qt.ItemDataRole.ToolTipRole and time_column and self.times_stale:
            return STALE_TIP
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            if time_column:
                return "Time (stale)" if self.times_stale else "Time"
            return HEADERS[NodeRow.COLUMNS[section]]
        return str(section)


class NodeFilterProxy(QSortFilterProxyModel):
    """Case-insensitive filter over every column; sorting keeps graph order as a tie-break."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)
        self.setSortRole(Qt.ItemDataRole.UserRole)


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """``[1, 2, 3, 7]`` -> ``[(1, 3), (7, 7)]`` (sorted input)."""
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs
