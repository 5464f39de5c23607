"""The node table: a ``QAbstractTableModel`` over ``GraphDocument.rows()``."""

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

from fxstudio.core.document import ChangeKind, DocumentEvent, GraphDocument, NodeRow

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
Index = QModelIndex | QPersistentModelIndex


class NodeTableModel(QAbstractTableModel):
    """One row per node, in graph order (the ``print_tabular`` view plus shapes)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._document: GraphDocument | None = None
        self._rows: list[NodeRow] = []
        self._row_of: dict[str, int] = {}

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
        if event.kind is ChangeKind.VIEW_CHANGED or self._document is None:
            return
        if event.kind is ChangeKind.NODES_CHANGED and set(event.names) <= set(self._row_of):
            rows = self._document.rows()
            for name in event.names:
                i = self._row_of[name]
                self._rows[i] = rows[i]
                self.dataChanged.emit(self.index(i, 0), self.index(i, self.columnCount() - 1))
            return
        self.reload()

    def row_of(self, name: str) -> int | None:
        return self._row_of.get(name)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008, N802
        return 0 if parent.isValid() else len(NodeRow.COLUMNS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row = self._rows[index.row()]
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
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        if orientation == Qt.Orientation.Horizontal:
            return HEADERS[NodeRow.COLUMNS[section]]
        return str(section)


class NodeFilterProxy(QSortFilterProxyModel):
    """Case-insensitive filter over every column; sorting keeps graph order as a tie-break."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(-1)
        self.setSortRole(Qt.ItemDataRole.UserRole)
