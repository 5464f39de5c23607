"""The node table: a ``QAbstractTableModel`` over ``GraphDocument.rows()`` -- after a memory
estimate, *Bytes* (what each node's output allocates) and *Live after* (the activation bytes
live once it has run) columns, in GiB/MiB, sorted by the bytes -- and, after a per-node
profile, a *Time* column, the last (headed *Time (stale)*, greyed, once the graph is no
longer the one it was measured on; the bytes columns likewise)."""

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
from fxstudio.core.process.guard import format_bytes

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
BYTES_STALE_TIP = (
    "Estimated on the graph before its last change, not on the graph as it is now: "
    "Estimate again in the Memory dock."
)
STALE_BRUSH = QBrush(QColor("#8c8c8c"))
#: The bytes columns' headers: what a node's output allocates, what is live after it.
BYTES_HEADERS = ("Bytes", "Live after")
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
        self._bytes: dict[str, tuple[int, int]] = {}  # estimated: name -> (allocated, live)
        self.bytes_stale = False

    def set_times(self, times: dict[str, tuple[float, float]], stale: bool = False) -> None:
        """Show a *Time* column (the last per-node profile); ``{}`` takes it away.  ``stale``:
        measured on another version of the graph (the column says so, greyed)."""
        if not times and not self._times:
            return  # nothing shown, nothing to show: no reset of a big table
        if times == self._times:  # the same times, now stale or current again: no reset
            if stale != self.times_stale:
                self.times_stale = stale
                self._restyle(self._time_column(), self._time_column())
            return
        self.beginResetModel()
        self._times = dict(times)
        self.times_stale = stale
        self.endResetModel()

    def set_bytes(self, sizes: dict[str, tuple[int, int]], stale: bool = False) -> None:
        """Show the *Bytes* and *Live after* columns (``name -> (allocated, live after)``, the
        last memory estimate); ``{}`` takes them away.  ``stale``: of another version of the
        graph."""
        if not sizes and not self._bytes:
            return
        if sizes == self._bytes:
            if stale != self.bytes_stale:
                self.bytes_stale = stale
                first = len(NodeRow.COLUMNS)
                self._restyle(first, first + len(BYTES_HEADERS) - 1)
            return
        self.beginResetModel()
        self._bytes = dict(sizes)
        self.bytes_stale = stale
        self.endResetModel()

    def _restyle(self, first: int, last: int) -> None:
        """Columns ``first``..``last`` now say (or no longer say) that they are stale."""
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, first, last)
        if self._rows:
            end = self.index(len(self._rows) - 1, last)
            self.dataChanged.emit(self.index(0, first), end)

    def _time_column(self) -> int:
        return len(NodeRow.COLUMNS) + (len(BYTES_HEADERS) if self._bytes else 0)

    def _extra(self, column: int) -> str:
        """What column ``column`` shows past the document's rows: ``bytes``, ``live``,
        ``time`` -- or ``""`` (one of the rows' own)."""
        past = column - len(NodeRow.COLUMNS)
        if past < 0:
            return ""
        if self._bytes:
            if past < len(BYTES_HEADERS):
                return ("bytes", "live")[past]
            past -= len(BYTES_HEADERS)
        return "time" if past == 0 and self._times else ""

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
        if parent.isValid():
            return 0
        extra = (len(BYTES_HEADERS) if self._bytes else 0) + (1 if self._times else 0)
        return len(NodeRow.COLUMNS) + extra

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
        extra = self._extra(index.column())
        if extra in ("bytes", "live"):
            return self._bytes_data(row.name, extra, role)
        if extra == "time":  # the profiled time
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

    def _bytes_data(self, name: str, which: str, role: int) -> Any:
        sizes = self._bytes.get(name)
        value = None if sizes is None else sizes[0 if which == "bytes" else 1]
        if role == Qt.ItemDataRole.UserRole:  # sort key: the bytes (none: below every node)
            return -1 if value is None else value
        if role == NAME_ROLE:
            return name
        text = "" if value is None else format_bytes(value)
        if role == Qt.ItemDataRole.DisplayRole:
            return text
        if role == Qt.ItemDataRole.ToolTipRole:
            what = "its output allocates" if which == "bytes" else "live after it runs"
            tip = f"{text} {what}" if text else ""
            return f"{tip}\n{BYTES_STALE_TIP}" if tip and self.bytes_stale else tip
        if role == Qt.ItemDataRole.ForegroundRole and self.bytes_stale:
            return STALE_BRUSH
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:  # noqa: N802
        extra = self._extra(section) if orientation == Qt.Orientation.Horizontal else ""
        if role == Qt.ItemDataRole.ToolTipRole:
            if extra == "time" and self.times_stale:
                return STALE_TIP
            if extra in ("bytes", "live"):
                tip = (
                    "What the node's output allocates (a view or an in-place op: nothing)"
                    if extra == "bytes"
                    else "The activation bytes live once the node has run"
                )
                return f"{tip}\n{BYTES_STALE_TIP}" if self.bytes_stale else tip
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            if extra == "time":
                return "Time (stale)" if self.times_stale else "Time"
            if extra in ("bytes", "live"):
                title = BYTES_HEADERS[0 if extra == "bytes" else 1]
                return f"{title} (stale)" if self.bytes_stale else title
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
