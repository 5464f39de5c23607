"""The window's edit commands: each user action calls one function of :mod:`fxstudio.core.edits`
and pushes the result on the undo stack as one step; a refused edit is reported, and nothing
changes."""

from __future__ import annotations

import ast
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from fxstudio.core import edits
from fxstudio.core.catalogue import Entry
from fxstudio.core.document import GraphDocument
from fxstudio.core.edits import Edit, EditError, Ref, parse_arguments
from fxstudio.qt.bridge import SelectionModel
from fxstudio.qt.commands import EditCommand


class EditController(QObject):
    """``refused(message)`` when an edit was not made; ``applied(edit)`` when it was."""

    refused = Signal(str)
    applied = Signal(object)

    def __init__(
        self,
        document: Callable[[], GraphDocument | None],
        selection: SelectionModel,
        undo_stack: QUndoStack,
        selected_edge: Callable[[], tuple[str, str] | None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._document = document
        self.selection = selection
        self.undo_stack = undo_stack
        self.selected_edge = selected_edge
        self.clipboard: list[str] = []  # node names copied (pasted as new copies)
        self.locked: str | None = None  # why edits wait (a save is reading the document)

    @property
    def document(self) -> GraphDocument | None:
        return self._document()

    def apply(self, make: Callable[[GraphDocument], Edit]) -> Edit | None:
        """Make one edit and push it as one undo step; report a refusal instead."""
        doc = self.document
        if doc is None:
            return None
        if self.locked:
            self.refused.emit(self.locked)
            return None
        try:
            edit = make(doc)
        except EditError as exc:
            self.refused.emit(str(exc))
            return None
        self.undo_stack.push(EditCommand(edit))
        self.applied.emit(edit)
        return edit

    def lock(self, reason: str) -> None:
        """Refuse edits, saying ``reason``, until :meth:`unlock`."""
        self.locked = reason

    def unlock(self) -> None:
        self.locked = None

    # --- the actions ---------------------------------------------------------------------------

    def delete_selection(self) -> Edit | None:
        names = list(self.selection.names)
        if not names:
            self.refused.emit("Select the nodes to delete first.")
            return None
        return self.apply(lambda d: edits.delete(d, names))

    def copy_selection(self) -> None:
        self.clipboard = list(self.selection.names)

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

    def add_input(self, name: str, default: str = "", type_name: str = "") -> Edit | None:
        """A new input; ``default`` is a Python value written as text ("" for none),
        ``type_name`` its annotation ("float", "Tensor"; "" for none)."""

        def make(d: GraphDocument) -> Edit:
            annotation = type_name.strip() or None
            if not default.strip():
                return edits.add_input(d, name, annotation)
            try:
                value = ast.literal_eval(default.strip())
            except (ValueError, SyntaxError):
                raise EditError(f"'{default}' is not a Python value.") from None
            return edits.add_input(d, name, annotation, value)

        edit = self.apply(make)
        if edit is not None:
            self.selection.select([name])
        return edit

    def move_input(self, step: int) -> Edit | None:
        """Move the selected input one place earlier (-1) or later (+1)."""
        doc, name = self.document, self.selection.current
        if doc is None or name is None or doc.node(name).op != "placeholder":
            self.refused.emit("Select an input of the graph first.")
            return None
        inputs = [n.name for n in doc.graph.nodes if n.op == "placeholder"]
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
        """Insert ``entry``: spliced onto the selected edge, else fed by the selected node
        (``arguments``: more arguments as Python, e.g. ``1, dim=-1``; for a module, its
        constructor's arguments, e.g. ``0.1``)."""
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
        if entry.op == "get_attr":
            edit = self.apply(lambda d: edits.insert(d, "get_attr", entry.target))
        elif entry.op == "call_module":
            ctor = f"{entry.target}({arguments})"
            if edge is not None:
                edit = self.apply(lambda d: edits.splice(d, *edge, "call_module", ctor))
            else:
                feed = [Ref(selected)] if selected else []
                edit = self.apply(lambda d: edits.insert_module(d, ctor, feed, after=selected))
        elif edge is not None:
            edit = self.apply(lambda d: edits.splice(d, *edge, entry.op, entry.target, extra))
        else:
            feed = [Ref(selected)] if selected else []
            edit = self.apply(
                lambda d: edits.insert(d, entry.op, entry.target, [*feed, *extra], kwargs)
            )
        if edit is not None and edit.names:
            self.selection.select(sorted(edit.names))
        return edit
