"""Keeps the canvas in step with the document: layout in a worker thread, selection, groups."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from fxstudio.core.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.core.layout import Layout, LayoutCancelled, LayoutEngine, top_level_groups
from fxstudio.qt.bridge import SelectionModel
from fxstudio.qt.canvas import CanvasView, GraphScene, GroupItem, NodeItem
from fxstudio.qt.commands import MoveNodesCommand
from fxstudio.qt.minimap import Minimap
from fxstudio.qt.workers import Task

#: Graphs with more nodes than this open with their top-level modules collapsed.
COLLAPSE_ABOVE = 300


class CanvasController(QObject):
    """Owns the scene and the layout engine; the view shows what they produce.

    ``layoutDone(layout)`` is emitted once a layout is on screen; ``layoutFailed(exc)`` when
    one could not be made (the previous picture stays).
    """

    layoutDone = Signal(object)  # noqa: N815
    layoutFailed = Signal(object)  # noqa: N815
    layoutStarted = Signal()  # noqa: N815

    def __init__(
        self, view: CanvasView, selection: SelectionModel, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.view = view
        self.selection = selection
        self.engine = LayoutEngine()
        self.scene = GraphScene(self)
        view.setScene(self.scene)
        self.document: GraphDocument | None = None
        self.layout: Layout | None = None
        self._task: Task | None = None
        self._fit_next = False
        self._syncing = False
        self.scene.selectionChanged.connect(self._scene_selection)
        self.scene.groupToggled.connect(self.toggle_group)
        self.scene.nodesMoved.connect(self._moved)
        self.scene.jumpRequested.connect(lambda name: self.selection.select([name]))
        self.undo_stack = None  # the window's QUndoStack, for drags
        self.minimap = Minimap(view)
        self.minimap_enabled = True
        selection.changed.connect(self._show_selection)

    def set_document(self, document: GraphDocument | None, first_open: bool = False) -> None:
        self.cancel()
        self.document = document
        self.layout = None
        self.scene.build_empty()
        self.minimap.refresh()
        if document is None:
            return
        if first_open and len(document) > COLLAPSE_ABOVE and not document.collapsed:
            document.collapsed = top_level_groups(document)  # the first, quick picture
        self._fit_next = True
        self.relayout()

    def on_document_changed(self, event: DocumentEvent) -> None:
        doc = self.document
        if doc is not None and event.kind is ChangeKind.VIEW_CHANGED and event.names:
            # Positions only: move those items, no new layout.
            self.scene.move_nodes({n: doc.positions.get(n) for n in event.names})
            if self.minimap_enabled:
                self.minimap.schedule_refresh()
            return
        self.relayout()

    def relayout(self, from_scratch: bool = False) -> None:
        """Lay the document out again in a worker thread; the old picture stays until then."""
        doc = self.document
        if doc is None:
            return
        self.cancel()
        if from_scratch:
            self.engine.clear_cache()
        collapsed = set(doc.collapsed)
        holder: dict[str, Task] = {}
        task = Task(
            lambda: self.engine.layout(doc, collapsed, cancelled=lambda: holder["t"].cancelled),
            self,
        )
        holder["t"] = task
        task.succeeded.connect(lambda lay: self._show(doc, lay))
        task.failed.connect(self._failed)
        task.finished.connect(task.deleteLater)
        self._task = task
        self.layoutStarted.emit()
        task.start()

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    def _failed(self, exc: BaseException) -> None:
        self._task = None
        if not isinstance(exc, LayoutCancelled):
            self.layoutFailed.emit(exc)

    def _show(self, doc: GraphDocument, layout: Layout) -> None:
        self._task = None
        if doc is not self.document:
            return
        self.layout = layout
        self._syncing = True
        try:
            self.scene.build(doc, layout)
        finally:
            self._syncing = False
        self._show_selection(self.selection.names)
        if self._fit_next:
            self._fit_next = False
            self.view.first_view()
        self.show_minimap(self.minimap_enabled)
        self.layoutDone.emit(layout)

    def _moved(self, before: dict, after: dict) -> None:
        """A drag ended: record it as one undoable command (which sets the positions)."""
        doc = self.document
        if doc is None:
            return
        old = {name: doc.positions.get(name) for name in after}  # None: where layout put it
        command = MoveNodesCommand(doc, old, after)
        if self.undo_stack is not None:
            self.undo_stack.push(command)
        else:
            command.redo()

    def show_minimap(self, on: bool) -> None:
        self.minimap_enabled = on
        if on:
            self.minimap.refresh()
        else:
            self.minimap.hide()

    # --- groups --------------------------------------------------------------------------------

    def toggle_group(self, path: str) -> None:
        if self.document is not None:
            self.document.set_collapsed(path, path not in self.document.collapsed)

    def expand_all(self) -> None:
        if self.document is not None and self.document.collapsed:
            self.document.collapsed.clear()
            self.document.set_collapsed("", False)  # one change event for the whole view

    def collapse_top_level(self) -> None:
        if self.document is not None:
            self.document.collapsed = top_level_groups(self.document)
            self.document.set_collapsed("", False)

    # --- selection -----------------------------------------------------------------------------

    def _scene_selection(self) -> None:
        if self._syncing:
            return
        names = [i.name for i in self.scene.selectedItems() if isinstance(i, NodeItem)]
        groups = [i for i in self.scene.selectedItems() if isinstance(i, GroupItem)]
        if names or not groups:
            self.selection.select(names)

    def _show_selection(self, names: list[str]) -> None:
        if self.layout is None:
            return
        wanted = {self.layout.visible(n) for n in names}
        current = {i.name for i in self.scene.selectedItems()}
        if wanted == current:
            return
        self._syncing = True
        try:
            self.scene.clearSelection()
            first = None
            for key in wanted:
                item = self.scene.item(key)
                if item is not None:
                    item.setSelected(True)
                    first = first or item
            if first is not None and not self.view.viewport().rect().contains(
                self.view.mapFromScene(first.sceneBoundingRect().center())
            ):
                self.view.centerOn(first)
        finally:
            self._syncing = False
