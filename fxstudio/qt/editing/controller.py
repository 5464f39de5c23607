"""The window's edit commands: each user action calls one function of :mod:`fxstudio.core.edits`
and pushes the result on the undo stack as one step; a refused edit is reported, and nothing
changes."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from fxstudio.core import edits
from fxstudio.core.edits import Edit, EditError, parse_arguments
from fxstudio.core.flows.edit import Entry
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.editing.commands import EditCommand
from fxstudio.qt.seams import Session
from fxstudio.qt.selection import SelectionModel


class EditController(QObject):
    """``refused(message)`` when an edit was not made; ``applied(edit)`` when it was.

    Edits wait while ``session.locked`` says why (a worker reads the graph)."""

    refused = Signal(str)
    applied = Signal(object)

    def __init__(
        self,
        session: Session,  # the window's DocumentSession
        selection: SelectionModel,
        selected_edge: Callable[[], tuple[str, str] | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.selection = selection
        self.undo_stack: QUndoStack = session.undo_stack
        self.selected_edge = selected_edge
        self.clipboard: list[str] = []  # node names copied (pasted as new copies)

    @property
    def document(self) -> GraphDocument | None:
        return self.session.document

    def apply(self, make: Callable[[GraphDocument], Edit]) -> Edit | None:
        """Make one edit and push it as one undo step; report a refusal instead."""
        doc = self.document
        if doc is None:
            return None
        if self.session.locked:
            self.refused.emit(self.session.locked)
            return None
        try:
            edit = make(doc)
        except EditError as exc:
            self.refused.emit(str(exc))
            return None
        self.undo_stack.push(EditCommand(edit))
        self.applied.emit(edit)
        return edit

    # --- the actions ---------------------------------------------------------------------------

    def delete_selection(self) -> Edit | None:
        names = list(self.selection.names)
        if not names:
            self.refused.emit("Select the nodes to delete first.")
            return None
        return self.apply(lambda d: edits.delete(d, names))

    def copy_selection(self) -> None:
        self.clipboard = list(self.selection.names)

    def can_paste(self) -> bool:
        """Whether there are copied nodes, all still in the graph, to paste."""
        doc = self.document
        return doc is not None and bool(self.clipboard) and all(n in doc for n in self.clipboard)

    def paste(self) -> Edit | None:
        if not self.clipboard:
            self.refused.emit("Copy some nodes first (Ctrl+C).")
            return None
        names = list(self.clipboard)
        edit = self.apply(lambda d: edits.paste(d, names))
        if edit is not None:
            self.selection.select(sorted(edit.names))
        return edit

    def rename(self, name: str, new: str) -> Edit | None:
        edit = self.apply(lambda d: edits.rename(d, name, new))
        if edit is not None:
            self.selection.select([new])
        return edit

    def change_target(self, name: str, target: str) -> Edit | None:
        return self.apply(lambda d: edits.set_target(d, name, target))

    def add_input(self, declaration: str) -> Edit | None:
        """A new input, declared as ``name``, ``name: type`` or ``name: type = default``
        (:func:`fxstudio.core.edits.parse_input_declaration`)."""
        edit = self.apply(lambda d: edits.add_input_from_text(d, declaration))
        if edit is not None:
            self.selection.select(sorted(edit.names))
        return edit

    def _inputs(self) -> tuple[str | None, list[str]]:
        """The selected node if it is an input of the graph, and the inputs in order."""
        doc, name = self.document, self.selection.current
        if doc is None or name is None or name not in doc or doc.node(name).op != "placeholder":
            return None, []
        return name, [n.name for n in doc.graph.nodes if n.op == "placeholder"]

    def can_move_input(self, step: int) -> bool:
        """Whether the selected node is an input that can move ``step`` places."""
        name, inputs = self._inputs()
        return name in inputs and 0 <= inputs.index(name) + step < len(inputs)

    def move_input(self, step: int) -> Edit | None:
        """Move the selected input one place earlier (-1) or later (+1)."""
        name, inputs = self._inputs()
        if name is None or name not in inputs:
            self.refused.emit("Select an input of the graph first.")
            return None
        return self.apply(lambda d: edits.move_input(d, name, inputs.index(name) + step))

    def connect_wire(self, source: str, user: str, across: float) -> Edit | None:
        """A wire dropped on ``user``, ``across`` (0..1) of its width: the argument whose
        edge enters there takes ``source``'s value (the first argument, when none does)."""
        doc = self.document
        if doc is None:
            return None
        labels = [label for label, _ in doc.inputs(user)]
        label = "args[0]"
        if labels:
            spot = min(max((across - 0.15) / 0.7, 0.0), 1.0)
            label = labels[round(spot * (len(labels) - 1))]
        return self.apply(lambda d: edits.rewire(d, user, label, source))

    def set_property(self, name: str, prop: str, text: str) -> Edit | None:
        """An inspector edit: ``name``, ``target``, ``args`` or ``kwargs`` typed as text."""
        text = text.strip()
        if prop == "name":
            return self.rename(name, text)
        if prop == "target":
            return self.change_target(name, text)
        if prop == "args":

            def make(d: GraphDocument) -> Edit:
                args, kwargs = parse_arguments(d, text)
                if kwargs:
                    raise EditError("Keyword arguments go in the kwargs row.")
                return edits.set_inputs(d, name, args)

            return self.apply(make)
        if prop == "kwargs":
            return self.apply(
                lambda d: edits.set_inputs(d, name, None, edits.parse_kwargs(d, text))
            )
        return None

    def set_outputs(self, names: list[str]) -> Edit | None:
        if not names:
            self.refused.emit("Select the values the graph should return first.")
            return None
        return self.apply(lambda d: edits.set_outputs(d, names))

    def insert(self, entry: Entry, arguments: str = "") -> Edit | None:
        """Insert ``entry``: spliced onto the selected edge, else right after the selected
        node (which it takes as its first argument, its users taking the new node's value
        instead), else on its own (``arguments``: more arguments as Python, e.g.
        ``1, dim=-1``; for a module, its constructor's arguments, e.g. ``0.1``)."""
        doc = self.document
        if doc is None:
            return None
        try:
            extra, kwargs = (
                parse_arguments(doc, arguments) if entry.op != "call_module" else ((), {})
            )
        except EditError as exc:
            self.refused.emit(str(exc))
            return None
        edge = self.selected_edge()
        selected = self.selection.current
        before = set(doc.node_index())
        producer, user = edge if edge is not None else (selected, None)
        if entry.op == "get_attr":
            edit = self.apply(lambda d: edits.insert(d, "get_attr", entry.target))
        elif producer is None:  # nothing selected: a node of its own
            if entry.op == "call_module":
                ctor = f"{entry.target}({arguments})"
                edit = self.apply(lambda d: edits.insert_module(d, ctor))
            else:
                edit = self.apply(lambda d: edits.insert(d, entry.op, entry.target, extra, kwargs))
        elif entry.op == "call_module":
            ctor = f"{entry.target}({arguments})"
            edit = self.apply(lambda d: edits.splice(d, producer, user, "call_module", ctor))
        else:
            edit = self.apply(
                lambda d: edits.splice(d, producer, user, entry.op, entry.target, extra, kwargs)
            )
        if edit is not None and edit.names:
            self.selection.select(sorted(edit.names - before) or sorted(edit.names))
        return edit
