"""The *Nodes* dock: every node in a table (the ``print_tabular`` view plus shapes, modules,
-- after a memory estimate -- bytes and -- after a per-node profile -- times), filtered as you
type, on the shared selection."""

from __future__ import annotations

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt
from PySide6.QtWidgets import QHeaderView, QLineEdit, QTableView, QWidget

from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.qt.forms import child, load_form
from fxstudio.qt.panels.base import DocumentPanel
from fxstudio.qt.panels.table.model import NAME_ROLE, NodeFilterProxy, NodeTableModel


class TablePanel(DocumentPanel):
    id, title = "table", "Nodes"
    view: QTableView  # the form's tableView
    filter: QLineEdit  # and tableFilter

    def build(self) -> QWidget:
        body = QWidget()
        load_form("table_panel", body)
        self.view = child(body, QTableView, "tableView")
        self.filter = child(body, QLineEdit, "tableFilter")
        self.model = NodeTableModel(self)
        self._reload_due = False  # a big graph's rows are read again in a turn of their own
        self.proxy = NodeFilterProxy(self)
        self.proxy.setSourceModel(self.model)
        self.view.setModel(self.proxy)
        self.view.verticalHeader().setVisible(False)
        self.view.verticalHeader().setDefaultSectionSize(22)
        header = self.view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.view.selectionModel().selectionChanged.connect(self._table_selection_changed)
        self.selection.changed.connect(self._show_selection)
        self.session.profileChanged.connect(self._profiled)
        return body

    def on_document(self, doc: GraphDocument | None) -> None:
        self._reload_due = False
        self.model.set_document(doc)
        if doc is not None:
            self._size_columns()

    def on_change(self, event: DocumentEvent) -> None:
        if event.kind is ChangeKind.VIEW_CHANGED:
            return
        if event.kind is ChangeKind.GRAPH_REPLACED or self._reload_due:  # all rows again
            self._reload_due = True
            self.session.soon(self._reload)
            return
        self.model.on_document_changed(event)

    def _reload(self) -> None:
        if self._reload_due:
            self._reload_due = False
            self.model.reload()
            self._show_selection(self.selection.names)

    def _profiled(self, profile: object) -> None:
        """A per-node profile (or none), or the same one now stale or current again: the
        Time column follows."""
        nodes = getattr(profile, "nodes", None) or []
        times = {n.name: (n.time_s, n.share) for n in nodes}
        self.model.set_times(times, stale=bool(times) and not self.session.profile_current)

    def show_bytes(self, sizes: dict[str, tuple[int, int]], stale: bool = False) -> None:
        """The Memory dock's estimate (``name -> (bytes allocated, live after)``; ``{}``: none)
        as the *Bytes* and *Live after* columns, greyed while ``stale``."""
        had = self.model.columnCount()
        self.model.set_bytes(sizes, stale)
        if self.model.columnCount() != had and self.document is not None:
            self._size_columns()

    def _size_columns(self, sample: int = 50) -> None:
        """Fit the columns to their first rows (Qt's resizeColumnsToContents asks every row
        of a 10,000-node table for its text: a second of frozen window)."""
        model, metrics = self.model, self.view.fontMetrics()
        rows = min(model.rowCount(), sample)
        for col in range(model.columnCount()):
            texts = [str(model.headerData(col, Qt.Orientation.Horizontal) or "")]
            texts += [str(model.index(row, col).data() or "") for row in range(rows)]
            width = max(metrics.horizontalAdvance(t) for t in texts) + 18
            self.view.setColumnWidth(col, min(width, 180))

    def _table_selection_changed(self, *_args: object) -> None:
        rows = self.view.selectionModel().selectedRows()
        names = [self.proxy.data(i, NAME_ROLE) for i in rows]
        if set(names) != set(self.selection.names):
            self.selection.select(names)

    def _show_selection(self, names: list[str]) -> None:
        sm = self.view.selectionModel()
        current = {self.proxy.data(i, NAME_ROLE) for i in sm.selectedRows()}
        if current == set(names):
            return
        selection = QItemSelection()
        last = None
        for name in names:
            row = self.model.row_of(name)
            if row is None:
                continue
            idx = self.proxy.mapFromSource(self.model.index(row, 0))
            if idx.isValid():
                selection.select(idx, idx.siblingAtColumn(self.model.columnCount() - 1))
                last = idx
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        sm.select(selection, flags)
        if last is not None:
            self.view.scrollTo(last)
