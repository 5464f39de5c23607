"""Keeps the canvas in step with the document: layout in a worker thread, selection, groups."""

from __future__ import annotations

import time
from collections.abc import Iterator

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRectF, QTimer, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QGraphicsItem, QMenu

from fxstudio.core.flows.layout import (
    Drawing,
    Layout,
    LayoutCancelled,
    LayoutEngine,
    canvas_layout,
    top_level_groups,
)
from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.core.process import collector
from fxstudio.qt.canvas import menu, tools
from fxstudio.qt.canvas.items import BoxItem, EdgeItem, GroupItem, NodeItem, text_metrics
from fxstudio.qt.canvas.minimap import Minimap
from fxstudio.qt.canvas.scene import BUILD_BUDGET_S, GraphScene
from fxstudio.qt.canvas.view import CanvasView
from fxstudio.qt.editing.commands import MoveNodesCommand
from fxstudio.qt.seams import Changes
from fxstudio.qt.selection import SelectionModel
from fxstudio.qt.workers import Task

#: Changes shown by updating a few items instead of a new layout.
PATCHABLE = (
    ChangeKind.NODES_ADDED,
    ChangeKind.NODES_REMOVED,
    ChangeKind.NODES_CHANGED,
    ChangeKind.SHAPES_CHANGED,
)


class CanvasController(QObject):
    """Owns the scene and the layout engine; the view shows what they produce.

    ``layoutDone(layout)`` is emitted once a layout is on screen; ``layoutFailed(exc)`` when
    one could not be made (the previous picture stays).
    """

    layoutDone = Signal(object)  # noqa: N815
    layoutFailed = Signal(object)  # noqa: N815
    layoutStarted = Signal()  # noqa: N815
    rewireRequested = Signal(str, str, float)  # noqa: N815 - see GraphScene
    layoutProgress = Signal(int, int)  # noqa: N815 - groups laid out, of how many
    layoutStopped = Signal()  # noqa: N815 - stop_layout(): the old picture stays
    menuRequested = Signal(object, object)  # noqa: N815 - (QMenu, menu.Target): add your actions

    def __init__(
        self,
        view: CanvasView,
        selection: SelectionModel,
        session: Changes,  # the window's DocumentSession (the document's changes, undo stack)
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.view = view
        self.selection = selection
        self.engine = LayoutEngine(metrics=text_metrics())  # boxes fit the canvas's text
        self._unactivated = _Unactivated(self)
        self.minimap = Minimap(view)
        self.minimap_enabled = True
        self.scene = self._new_scene()
        view.setScene(self.scene)
        self.document: GraphDocument | None = None
        self.layout: Layout | None = None
        self._task: Task | None = None
        self._fit_next = False
        self._toggled: str | None = None  # a group expanded or collapsed: shown once laid out
        self._syncing = False
        self._building: tuple[GraphScene, Iterator[float], GraphDocument, Layout] | None = None
        self._generation = 0  # of scene builds: a newer one makes older steps stale
        self._pause: collector.Pause | None = None  # the collector's, while a big scene comes
        self.undo_stack = session.undo_stack  # a drag is one undo step
        selection.changed.connect(self._show_selection)
        view.menuAsked.connect(self._show_menu)
        session.changed.connect(self.on_document_changed)
        # (the session tells the window, which sets the document last: see MainWindow)

    def _new_scene(self) -> GraphScene:
        scene = GraphScene(self)
        scene.installEventFilter(self._unactivated)
        tools.install(scene)
        # Bound methods of QObjects only: Qt drops such a connection when its receiver goes.
        # A lambda has no receiver, so it outlived the view (and its minimap), and a scene
        # going last (a Compare window closed) called into a deleted view.
        scene.selectionChanged.connect(self._scene_selection)
        scene.selectionChanged.connect(self.minimap.reposition)
        scene.groupToggled.connect(self.toggle_group)
        scene.nodesMoved.connect(self._moved)
        scene.jumpRequested.connect(self._jump)
        scene.rewireRequested.connect(self.rewireRequested)
        return scene

    def set_document(self, document: GraphDocument | None) -> None:
        self.cancel()
        self.document = document
        self.layout = None
        self.scene.build_empty()
        self.minimap.refresh()
        if document is None:
            return
        self._fit_next = True
        self.relayout()

    def on_document_changed(self, event: DocumentEvent) -> None:
        doc = self.document
        if doc is not None and event.kind is ChangeKind.VIEW_CHANGED and event.names:
            # Positions only: move those items, no new layout.
            if self._building is not None:  # the scene being made must read them again
                self._build(doc, self._building[3])
            self.scene.move_nodes({n: doc.positions.get(n) for n in event.names})
            if self.minimap_enabled:
                self.minimap.schedule_refresh()
            return
        if (
            doc is not None
            and event.kind in PATCHABLE
            and self._task is None
            and self._building is None
            and self.layout is not None
        ):
            # A few nodes changed: update those items in place, no new layout.
            self.scene.place_hint = self.cursor_point()
            self._syncing = True
            try:
                patched = self.scene.patch(doc, event.names, event.reshaped)
            finally:
                self._syncing = False
            if patched:
                self._show_selection(self.selection.names)
                if self.minimap_enabled:
                    self.minimap.schedule_refresh()
                self.layoutDone.emit(self.layout)
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

        def work() -> tuple[Layout, Drawing]:
            with collector.sparing(len(doc)):  # thousands of boxes: no full collection meanwhile
                return canvas_layout(
                    self.engine,
                    doc,
                    collapsed,
                    cancelled=lambda: task.cancelled,  # (bound before the thread starts)
                    progress=lambda done, total: task.report(done, total),
                )

        task = Task(work, self)
        # A result that arrives after a newer request (the graph changed again) is dropped.
        task.succeeded.connect(lambda made: self._show(doc, *made) if task is self._task else None)
        task.failed.connect(lambda exc: self._failed(exc) if task is self._task else None)
        task.progress.connect(
            lambda done, total: (
                self.layoutProgress.emit(done, total) if task is self._task else None
            )
        )
        self._task = task
        self.layoutStarted.emit()
        task.start()

    def busy(self) -> bool:
        """A layout is being made or drawn."""
        return self._task is not None or self._building is not None

    def stop_layout(self) -> None:
        """The user stopped a long layout: the picture on screen stays."""
        self.cancel()
        self.layoutStopped.emit()

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        self._generation += 1
        self._building = None
        self._resume()

    def _resume(self) -> None:
        """The scene is made (or will not be): what it made is kept out of the collector's
        sight rather than scanned."""
        pause, self._pause = self._pause, None
        collector.resume(pause)

    def _failed(self, exc: BaseException) -> None:
        self._task = None
        if not isinstance(exc, LayoutCancelled):
            self.layoutFailed.emit(exc)

    def _show(self, doc: GraphDocument, layout: Layout, plan: Drawing) -> None:
        self._task = None
        if doc is not self.document:
            return
        self._build(doc, layout, plan)

    def _build(self, doc: GraphDocument, layout: Layout, plan: Drawing | None = None) -> None:
        """Make the items in a new scene, a chunk per turn of the event loop (a big graph
        takes about a second), while the old picture stays on screen and usable."""
        self._generation += 1
        scene = self._new_scene()
        steps = scene.build_steps(doc, layout, plan)
        self._building = (scene, steps, doc, layout)
        if len(layout.nodes) + len(layout.groups) >= collector.BIG and self._pause is None:
            self._pause = collector.pause()  # thousands of items: no scan while they come
        self._build_step(self._generation)

    def _build_step(self, generation: int) -> None:
        if generation != self._generation or self._building is None:
            return  # replaced by a newer layout or build
        scene, steps, doc, layout = self._building
        try:
            next(steps)
        except StopIteration:
            self._building = None
            self._finish(scene, doc, layout)
            return
        except Exception as exc:  # an fxstudio bug: said, and the old picture stays
            self._building = None
            self._resume()
            scene.deleteLater()
            self.layoutFailed.emit(exc)
            return
        QTimer.singleShot(1, self, lambda: self._build_step(generation))  # (gone with it)

    def _finish(self, scene: GraphScene, doc: GraphDocument, layout: Layout) -> None:
        old, self.scene = self.scene, scene
        self.layout = layout
        self._syncing = True
        try:
            self.view.setScene(scene)
        finally:
            self._syncing = False
        steps = _teardown(old)
        QTimer.singleShot(1, old, lambda: self._discard(old, steps))  # a turn of its own
        self._show_selection(self.selection.names)
        if self._fit_next:
            self._fit_next = False
            self._toggled = None
            self.view.first_view()
        else:
            self._show_toggled()
        if self.minimap_enabled:  # drawn in a turn of its own (80 ms at 10,000 nodes)
            self.minimap.schedule_refresh()
        else:
            self.minimap.hide()
        self._resume()
        self.layoutDone.emit(layout)

    def _discard(self, old: GraphScene, steps: Iterator[None]) -> None:
        """Delete the scene taken off screen, a chunk per turn of the event loop."""
        for _ in steps:  # (the timer dies with the scene, e.g. when the window closes)
            QTimer.singleShot(1, old, lambda: self._discard(old, steps))
            return
        old.deleteLater()

    def _moved(self, before: dict, after: dict) -> None:
        """A drag ended: record it as one undoable command (which sets the positions)."""
        doc = self.document
        if doc is None:
            return
        old = {name: doc.positions.get(name) for name in after}  # None: where layout put it
        self.undo_stack.push(MoveNodesCommand(doc, old, after))

    def cursor_point(self) -> QPointF:
        """The scene point under the mouse when it is over the canvas, else the centre of
        what the canvas shows."""
        viewport = self.view.viewport()
        at = viewport.mapFromGlobal(QCursor.pos())
        if not viewport.rect().contains(at):
            at = viewport.rect().center()
        return self.view.mapToScene(at)

    def selected_edge(self) -> tuple[str, str] | None:
        """The selected edge between two drawn nodes, as (producer, user) node names."""
        for item in self.scene.selectedItems():
            if isinstance(item, EdgeItem) and isinstance(item.target, NodeItem):
                source = item.stub or item.source_name
                if item.stub or isinstance(item.source, NodeItem):
                    return (source, item.target_name)
        return None

    def apply_theme(self) -> None:
        """Repaint in the theme's colours."""
        self.scene.apply_theme()
        self.minimap.refresh()

    def show_minimap(self, on: bool) -> None:
        self.minimap_enabled = on
        self.minimap.set_enabled(on)

    # --- groups --------------------------------------------------------------------------------

    def toggle_group(self, path: str) -> None:
        """Expand or collapse the group at ``path``; once laid out again the view shows it
        (an expanded layer of a big model is off screen, or larger than the screen)."""
        if self.document is not None:
            self._toggled = path
            self.document.set_collapsed(path, path not in self.document.collapsed)

    def _show_toggled(self) -> None:
        path, self._toggled = self._toggled, None
        item = self.scene.groups.get(path) if path is not None else None
        if item is None:
            return
        if item.collapsed:
            self.view.ensureVisible(item.sceneBoundingRect())
        else:
            self.view.show_part(item.sceneBoundingRect())

    def expand_all(self) -> None:
        if self.document is not None and self.document.collapsed:
            self.document.set_collapsed_groups(())  # one change event for the whole view

    def collapse_top_level(self) -> None:
        if self.document is not None:
            self.document.set_collapsed_groups(top_level_groups(self.document))

    # --- the context menu ---------------------------------------------------------------------

    def context_menu(self, pos: QPointF) -> QMenu | None:
        """The menu of what is drawn at ``pos``: the canvas's actions, then the docks'
        (``menuRequested``); None over the background or when it offers nothing."""
        doc = self.document
        target = menu.target_at(self.scene, doc, pos) if doc is not None else None
        if doc is None or target is None:
            return None
        group = target.group
        folded = group is not None and group in doc.collapsed
        shown = menu.build(self.view, target, folded, lambda: self.toggle_group(group or ""))
        self.menuRequested.emit(shown, target)
        return shown if not shown.isEmpty() else None

    def _show_menu(self, pos: QPointF, screen: QPoint) -> None:
        shown = self.context_menu(pos)
        if shown is not None:
            shown.exec(screen)
            shown.deleteLater()

    # --- selection -----------------------------------------------------------------------------

    def _scene_selection(self) -> None:
        if self._syncing:
            return
        names = [i.name for i in self.scene.selectedItems() if isinstance(i, NodeItem)]
        groups = [i for i in self.scene.selectedItems() if isinstance(i, GroupItem)]
        if names or not groups:
            self.selection.select(names)

    def _jump(self, name: str) -> None:
        self.selection.select([name])

    def center_on(self, names: list[str]) -> None:
        """Centre the view on what ``names`` are drawn as (a match stepped to)."""
        if self.layout is None:
            return
        rect = QRectF()
        for key in {self.layout.visible(n) for n in names}:
            item = self.scene.item(key)
            if item is not None:
                rect = rect.united(item.sceneBoundingRect())
        if not rect.isNull():
            self.view.centerOn(rect.center())

    def _show_selection(self, names: list[str]) -> None:
        if self.layout is None:
            return
        wanted = {self.layout.visible(n) for n in names}
        current = {i.name for i in self.scene.selectedItems() if isinstance(i, BoxItem)}
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


class _Unactivated(QObject):
    """Keeps the window's activation from the scenes.  Qt activates a scene as a view takes
    it and deactivates the one it drops, each by walking all its items in stacking order (25
    ms apiece at 20,000 nodes, in the turn the new picture appears), to activate panels and
    focus items -- the canvas has neither."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        return event.type() in (QEvent.Type.WindowActivate, QEvent.Type.WindowDeactivate)


def _teardown(scene: GraphScene, budget_s: float = BUILD_BUDGET_S) -> Iterator[None]:
    """Take a scene's items away a chunk at a time, pausing once ``budget_s`` of work is done
    (deleting 20,000 items at once holds the loop for a second).  The scene is off screen by
    then; what is left of it is empty."""
    scene.blockSignals(True)  # its items going must not read as the user deselecting
    # (Its index stays: dropping it for NoIndex holds the loop 80 ms at 20,000 nodes, in
    # one piece; taking items out of it costs ~20 microseconds each, paused between.)
    # The scene's own lists, not scene.items() (which sorts every item by stacking order):
    # groups last, edges first (popped from the end).
    items: list[QGraphicsItem] = [*scene.groups.values(), *scene.nodes.values(), *scene.edges]
    scene.nodes, scene.groups, scene.edges = {}, {}, []
    clock = time.perf_counter
    deadline = clock() + budget_s
    while items:
        scene.removeItem(items.pop())  # Python owns it now: it goes with its last reference
        if len(items) & 15 == 0 and clock() > deadline:
            yield
            deadline = clock() + budget_s
    for item in scene.items():  # the few others (pattern boxes, heat): no need to pause
        if item.parentItem() is None:
            scene.removeItem(item)
