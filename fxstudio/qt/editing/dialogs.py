"""The Edit menu's dialogs: insert a node (the palette), add an input, rename a node, change
a node's target.  Each asks, then hands the answer to the edit controller (one undo step)."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QWidget

from fxstudio.core.flows.edit import catalogue
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import format_target
from fxstudio.qt.editing.controller import EditController
from fxstudio.qt.editing.palette import InsertPalette

#: What a node's target is, by op, as the Change target dialog asks for it.
TARGET_KINDS = {
    "call_function": "function (e.g. torch.nn.functional.gelu)",
    "call_method": "Tensor method (e.g. sigmoid)",
    "call_module": "submodule path (e.g. layer1.0.relu)",
}


class EditDialogs:
    """The dialogs over ``parent`` for ``edits``; ``selected_edge()`` is the canvas's."""

    def __init__(self, parent: QWidget, edits: EditController) -> None:
        self.parent = parent
        self.edits = edits

    @property
    def document(self) -> GraphDocument | None:
        return self.edits.document

    def insert(self) -> None:
        """The insert palette (after the selected node, or on the selected edge)."""
        if self.document is None:
            return
        edge = self.edits.selected_edge()
        current = self.edits.selection.current
        where = (
            f"On the edge {edge[0]} → {edge[1]}."
            if edge
            else f"After {current}: it takes {current}'s value as its first argument, and "
            f"the nodes that used {current} take the new node's value instead."
            if current
            else "Select a node or an edge first to feed the new node."
        )
        palette = InsertPalette(catalogue(self.document), where, self.parent)
        entry = palette.chosen() if palette.exec() else None
        if entry is not None:
            self.edits.insert(entry, palette.arguments())

    def add_input(self) -> None:
        if self.document is None:
            return
        text, ok = QInputDialog.getText(
            self.parent,
            "Add input",
            "Name, optionally : a type and = a default value (e.g. scale: float = 1.0):",
        )
        if ok and text.strip():
            self.edits.add_input(text)

    def rename(self) -> None:
        name = self.edits.selection.current
        if name is None:
            self.edits.refused.emit("Select the node to rename first.")
            return
        new, ok = QInputDialog.getText(
            self.parent, "Rename node", f"New name for {name}:", text=name
        )
        if ok and new and new != name:
            self.edits.rename(name, new.strip())

    def change_target(self) -> None:
        name, doc = self.edits.selection.current, self.document
        if name is None or doc is None:
            self.edits.refused.emit("Select the node whose target to change first.")
            return
        node = doc.node(name)
        what = TARGET_KINDS.get(node.op)
        if what is None:
            self.edits.refused.emit(f"A {node.op} node has no target to change.")
            return
        current = format_target(node)
        target, ok = QInputDialog.getText(
            self.parent, "Change target", f"New {what} for {name}:", text=current
        )
        if ok and target and target != current:
            self.edits.change_target(name, target.strip())
