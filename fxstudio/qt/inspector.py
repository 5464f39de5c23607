"""The inspector: everything about the current node, read from the document."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from fxstudio.core.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.qt.bridge import SelectionModel


class InspectorController(QObject):
    def __init__(
        self, tree: QTreeWidget, selection: SelectionModel, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.tree = tree
        self.selection = selection
        self.document: GraphDocument | None = None
        tree.setHeaderLabels(["Property", "Value"])
        tree.setColumnWidth(0, 110)
        selection.changed.connect(lambda _names: self.refresh())

    def set_document(self, document: GraphDocument | None) -> None:
        self.document = document
        self.refresh()

    def on_document_changed(self, event: DocumentEvent) -> None:
        if event.kind is not ChangeKind.VIEW_CHANGED:
            self.refresh()

    def properties(self) -> list[tuple[str, str]]:
        """What the inspector shows for the current node, as (label, value) pairs."""
        doc, name = self.document, self.selection.current
        if doc is None or name is None:
            return []
        try:
            row = doc.row(name)
        except KeyError:
            return []
        loc = doc.source_location(name)
        inputs = ", ".join(f"{label}: {src}" for label, src in doc.inputs(name))
        props = [
            ("name", row.name),
            ("op", row.opcode),
            ("target", row.target),
            ("args", row.args),
            ("kwargs", row.kwargs),
            ("shape", row.shape or "unknown"),
            ("dtype", row.dtype or "unknown"),
            ("module", row.module_path or "(top level)"),
            ("inputs", inputs or "none"),
            ("users", ", ".join(doc.users(name)) or "none"),
            ("source", f"{loc.filename}:{loc.lineno}\n{loc.text}" if loc else "unknown"),
        ]
        return props

    def refresh(self) -> None:
        self.tree.clear()
        items = [QTreeWidgetItem([label, value]) for label, value in self.properties()]
        for item in items:
            item.setToolTip(1, item.text(1))
        self.tree.addTopLevelItems(items)
