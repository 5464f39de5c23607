"""The main window: node table, generated code and inspector over one ``GraphDocument``."""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QUndoStack
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QHeaderView,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QStatusBar,
    QTableView,
    QToolBar,
    QTreeWidget,
    QUndoView,
    QWidget,
)

from fxstudio.core.catalogue import catalogue
from fxstudio.core.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.core.errors import UserError
from fxstudio.core.graphviews import format_target
from fxstudio.core.modelspec import model_file
from fxstudio.core.opening import SESSION_SUFFIX, OpenRequest, open_document
from fxstudio.core.recent import RecentModels
from fxstudio.core.sessionfile import save_session
from fxstudio.qt import command_palette, desktop, welcome
from fxstudio.qt.about import AboutDialog
from fxstudio.qt.autosave import DEFAULT_INTERVAL_S, Autosaver, find_recoveries, recovery_dir
from fxstudio.qt.bridge import DocumentBridge, SelectionModel
from fxstudio.qt.canvas import CanvasView
from fxstudio.qt.canvas_controller import CanvasController
from fxstudio.qt.catch_up import CatchUpRunner
from fxstudio.qt.code_view import CodeViewController
from fxstudio.qt.console import ConsolePanel
from fxstudio.qt.edit_controller import EditController
from fxstudio.qt.exporting import ExportController
from fxstudio.qt.forms import load_form
from fxstudio.qt.inspector import InspectorController
from fxstudio.qt.lesson_panel import LessonPanel
from fxstudio.qt.open_dialog import OpenDialog
from fxstudio.qt.palette import InsertPalette
from fxstudio.qt.patterns_panel import PatternsPanel
from fxstudio.qt.resources import icon
from fxstudio.qt.run_panel import RunPanel
from fxstudio.qt.search import SearchController
from fxstudio.qt.step_panel import StepPanel
from fxstudio.qt.table_model import NAME_ROLE, NodeFilterProxy, NodeTableModel
from fxstudio.qt.theme import ThemeController
from fxstudio.qt.window_state import WindowState
from fxstudio.qt.workers import Task, UserCodeTask

#: Graphs with more nodes than this show an edit at once and get its code and shapes from a
#: worker thread, starting DEFER_MS after the last edit (fxstudio.core.catchup).
DEFER_ABOVE = 2000
WHERE_AFTER_S = 2.0  # opening takes this long: the status bar says where the model's code is
DEFER_MS = 30
#: How long a thread runs Python while another waits for the GIL (sys.setswitchinterval):
#: 1 ms against Python's 5 ms cut the longest stalls of opening a 10,000-node model from
#: 196-204 ms to 160-181 ms, edits unchanged.
GIL_SWITCH_S = 0.001


class MainWindow(QMainWindow):
    """fxstudio's window.  ``document`` is the open :class:`GraphDocument` (or ``None``).

    Signals: ``documentLoaded(document)`` once a model is shown, ``loadFailed(exception)``
    when opening failed (the previous document stays), ``layoutShown(layout)`` once the
    canvas is drawn.  A window made with ``interactive=False`` (tests, ``--screenshot``) shows
    no dialogs: errors go out as signals, and closing it with unsaved changes keeps them in
    the recovery file.
    """

    documentLoaded = Signal(object)  # noqa: N815 - Qt naming for signals
    loadFailed = Signal(object)  # noqa: N815
    sessionSaved = Signal(str)  # noqa: N815
    exported = Signal(object)  # an ExportResult
    exportFailed = Signal(object)  # noqa: N815
    layoutShown = Signal(object)  # noqa: N815 - a Layout is on the canvas
    caughtUp = Signal()  # noqa: N815 - a big graph's deferred recompile and shapes are done

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        interactive: bool = True,
        autosave_s: float = DEFAULT_INTERVAL_S,
        recovery: Path | None = None,
    ) -> None:
        super().__init__(parent)
        _out_of_the_collectors_way(document=False)  # torch, Qt and the rest, imported by now
        # Every virtual call Qt makes on a widget made from Python takes the GIL (to look for
        # a Python override), so a paint while a worker runs Python waits up to a switch
        # interval per call: at Python's 5 ms, 100-200 ms paints while a big model loads.
        sys.setswitchinterval(GIL_SWITCH_S)
        load_form("main_window", self, custom=(CanvasView,))
        self.setObjectName("MainWindow")
        self.setWindowIcon(icon("fxstudio.svg"))
        self.interactive = interactive  # False: no dialogs (tests, --screenshot)
        self._keep_recovery = False
        self._modules = 0  # the module count the status bar shows
        self.document: GraphDocument | None = None
        self.request: OpenRequest | None = None
        self._bridge: DocumentBridge | None = None
        self._task: UserCodeTask | None = None  # the model being opened
        self._dialog = True  # show a failure to open in a message box
        self._opening: OpenRequest | None = None
        self._save_task: Task | None = None
        self._started = 0.0
        self.session_path: Path | None = None
        self.modified = False  # changes no session file holds (asks before they are lost)
        self.autosave_pending = False  # changes the recovery file does not hold yet
        self._restored_from: Path | None = None
        self.autosaver = Autosaver(
            lambda: self.document,
            lambda: self.autosave_pending,
            self._autosaved,
            recovery or recovery_dir(),
            autosave_s,
            self,
        )
        # Beside the recovery folder, in fxstudio's data folder.
        self.recent = RecentModels(self.autosaver.directory.parent / "recent.json")

        self.selection = SelectionModel(self)
        self.table_view = self.findChild(QTableView, "tableView")
        self.table_filter = self.findChild(QLineEdit, "tableFilter")
        self.code_view = self.findChild(QPlainTextEdit, "codeView")
        self.inspector_tree = self.findChild(QTreeWidget, "inspector")
        self.status_bar: QStatusBar = self.findChild(QStatusBar, "statusbar")

        self.table_model = NodeTableModel(self)
        self.table_proxy = NodeFilterProxy(self)
        self.table_proxy.setSourceModel(self.table_model)
        self.table_view.setModel(self.table_proxy)
        self.table_view.verticalHeader().setVisible(False)
        self.table_view.verticalHeader().setDefaultSectionSize(22)
        header = self.table_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        self.table_view.sortByColumn(-1, Qt.SortOrder.AscendingOrder)
        self.table_filter.textChanged.connect(self.table_proxy.setFilterFixedString)
        self.table_view.selectionModel().selectionChanged.connect(self._table_selection_changed)
        self.selection.changed.connect(self._show_selection_in_table)

        self.canvas: CanvasView = self.findChild(CanvasView, "canvas")
        self.welcome = welcome.install(self)
        self.exporting = ExportController(self)
        self.canvas_controller = CanvasController(self.canvas, self.selection, self)
        self.canvas_controller.layoutDone.connect(self._layout_done)
        self.undo_stack = QUndoStack(self)
        self.canvas_controller.undo_stack = self.undo_stack
        undo = self.undo_stack.createUndoAction(self, "&Undo")
        undo.setObjectName("actionUndo")
        undo.setShortcut(QKeySequence.StandardKey.Undo)
        redo = self.undo_stack.createRedoAction(self, "&Redo")
        redo.setObjectName("actionRedo")
        redo.setShortcut(QKeySequence.StandardKey.Redo)
        edit_menu = self.findChild(QMenu, "menuEdit")
        first = edit_menu.actions()[0] if edit_menu.actions() else None
        edit_menu.insertActions(first, [undo, redo])
        edit_menu.insertSeparator(first)
        toolbar = self.findChild(QToolBar, "mainToolBar")
        before = self._action("actionInsert")
        toolbar.insertActions(before, [undo, redo])
        toolbar.insertSeparator(before)
        self.undo_view = QUndoView(self.undo_stack)
        self.undo_view.setEmptyLabel("<opened>")
        undo_dock = QDockWidget("History", self)
        undo_dock.setObjectName("undoDock")
        undo_dock.setWidget(self.undo_view)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, undo_dock)
        self.tabifyDockWidget(self.findChild(QDockWidget, "inspectorDock"), undo_dock)
        self.patterns = PatternsPanel(self, self.selection, self.undo_stack)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.patterns.dock)
        self.tabifyDockWidget(self.findChild(QDockWidget, "inspectorDock"), self.patterns.dock)
        self.run_panel = RunPanel(self)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.run_panel.dock)
        self.tabifyDockWidget(self.findChild(QDockWidget, "inspectorDock"), self.run_panel.dock)
        self.step_panel = StepPanel(self, self.selection)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.step_panel.dock)
        self.tabifyDockWidget(self.findChild(QDockWidget, "inspectorDock"), self.step_panel.dock)
        step_menu = QMenu("&Step", self)
        step_menu.setObjectName("menuStep")
        step_menu.addActions(self.step_panel.actions)
        help_menu = self.findChild(QMenu, "menuHelp")
        self.menuBar().insertMenu(help_menu.menuAction(), step_menu)
        self.console = ConsolePanel(self, self.undo_stack)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.console.dock)
        self.tabifyDockWidget(self.findChild(QDockWidget, "tableDock"), self.console.dock)
        self.findChild(QDockWidget, "tableDock").raise_()
        self.lesson = LessonPanel(self)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.lesson.dock)
        self.lesson.dock.hide()  # Help > Learn FX shows it
        learn = QAction("&Learn FX", self)
        learn.setObjectName("actionLearnFx")
        learn.setStatusTip("A guided lesson in ten checked steps, on this window")
        learn.triggered.connect(lambda: self.lesson.start())
        help_menu.insertAction(help_menu.actions()[0] if help_menu.actions() else None, learn)
        desktop.install(self, help_menu, self.findChild(QMenu, "menuFile"))
        command_palette.install(self, self.findChild(QMenu, "menuView"))
        self.drops.refused.connect(lambda text: self.status_bar.showMessage(text, 10000))
        self.findChild(QDockWidget, "inspectorDock").raise_()
        self.canvas_controller.layoutFailed.connect(
            lambda exc: self._error("Could not lay out the graph", exc)
        )
        self.edits = EditController(
            lambda: self.document,
            self.selection,
            self.undo_stack,
            self.canvas_controller.selected_edge,
            self,
        )
        self.edits.refused.connect(self._edit_refused)
        self.patterns.message.connect(self._edit_refused)
        self.canvas_controller.rewireRequested.connect(self.edits.connect_wire)
        self.edits.applied.connect(self._edit_applied)
        self.code = CodeViewController(self.code_view, self.selection, self)
        self.catch_up = CatchUpRunner(DEFER_MS, self)
        self.catch_up.caughtUp.connect(self.caughtUp)
        self.catch_up.failed.connect(lambda text: self.status_bar.showMessage(text, 15000))
        self.inspector = InspectorController(
            self.inspector_tree, self.selection, self, edit=self.edits.set_property
        )
        self.run_panel.profiled.connect(self._profile_shown)
        self.run_panel.nodeChosen.connect(self._show_node)
        self.run_panel.message.connect(self._edit_refused)
        self.step_panel.message.connect(self._edit_refused)

        self._progress = QProgressBar(self)
        self._progress.setRange(0, 0)
        self._progress.setMaximumWidth(160)
        self._progress.hide()
        self._cancel = QPushButton("Cancel", self)
        self._cancel.hide()
        self._cancel.clicked.connect(lambda: self.cancel_loading())
        self._watch = QTimer(self)  # where the model's code is, while opening takes long
        self._watch.setInterval(1000)
        self._watch.timeout.connect(self._watch_loading)
        # A layout that takes a while shows its progress and can be stopped.
        self._layout_progress = QProgressBar(self)
        self._layout_progress.setMaximumWidth(160)
        self._layout_progress.setFormat("layout %v/%m")
        self._layout_progress.hide()
        self._layout_stop = QPushButton("Stop layout", self)
        self._layout_stop.hide()
        self._layout_stop.clicked.connect(self.canvas_controller.stop_layout)
        self._layout_timer = QTimer(self)
        self._layout_timer.setSingleShot(True)
        self._layout_timer.timeout.connect(self._layout_progress.show)
        self._layout_timer.timeout.connect(self._layout_stop.show)
        self.canvas_controller.layoutStarted.connect(lambda: self._layout_timer.start(300))
        self.canvas_controller.layoutProgress.connect(self._layout_progressed)
        for signal in (
            self.canvas_controller.layoutDone,
            self.canvas_controller.layoutFailed,
            self.canvas_controller.layoutStopped,
        ):
            signal.connect(self._layout_finished)
        self._summary = QLabel(self)
        self.status_bar.addPermanentWidget(self._summary)
        self.status_bar.addPermanentWidget(self._layout_progress)
        self.status_bar.addPermanentWidget(self._layout_stop)
        self.status_bar.addPermanentWidget(self._progress)
        self.status_bar.addPermanentWidget(self._cancel)

        self._action("actionOpen").triggered.connect(self.show_open_dialog)
        self._action("actionSaveSession").triggered.connect(lambda: self.save_session())
        self._action("actionSaveSessionAs").triggered.connect(lambda: self.save_session(ask=True))
        for action, fmt in [
            ("actionSavePython", "py"),
            ("actionSaveCode", "code"),
            ("actionExportTorchScript", "torchscript"),
            ("actionExportPt2", "pt2"),
            ("actionExportOnnx", "onnx"),
        ]:
            self._action(action).triggered.connect(
                lambda _=False, f=fmt: self.exporting.export_dialog(f)
            )
        self._action("actionReload").triggered.connect(self.reload)
        self._action("actionQuit").triggered.connect(self.close)
        search_bar = QToolBar("Find", self)
        search_bar.setObjectName("searchBar")
        self.addToolBarBreak()
        self.addToolBar(search_bar)
        self.search = SearchController(search_bar, self.selection, lambda: self.document, self)
        self._action("actionFind").triggered.connect(self.search.show)
        self._action("actionAbout").triggered.connect(self._about)
        self._action("actionInsert").triggered.connect(self.insert_dialog)
        self._action("actionDelete").triggered.connect(self.edits.delete_selection)
        self._action("actionCopy").triggered.connect(self.edits.copy_selection)
        self._action("actionPaste").triggered.connect(self.edits.paste)
        self._action("actionRename").triggered.connect(self.rename_dialog)
        self._action("actionChangeTarget").triggered.connect(self.change_target_dialog)
        self._action("actionAddInput").triggered.connect(self.add_input_dialog)
        self._action("actionInputEarlier").triggered.connect(lambda: self.edits.move_input(-1))
        self._action("actionInputLater").triggered.connect(lambda: self.edits.move_input(+1))
        self._action("actionReturnSelected").triggered.connect(
            lambda: self.edits.set_outputs(list(self.selection.names))
        )
        self._action("actionFit").triggered.connect(self.canvas.fit)
        self._action("actionExportImage").triggered.connect(self.exporting.export_image_dialog)
        self._action("actionZoomIn").triggered.connect(self.canvas.zoom_in)
        self._action("actionZoomOut").triggered.connect(self.canvas.zoom_out)
        self._action("actionActualSize").triggered.connect(self.canvas.actual_size)
        self._action("actionRelayout").triggered.connect(
            lambda: self.canvas_controller.relayout(from_scratch=True)
        )
        self._action("actionMinimap").toggled.connect(self.canvas_controller.show_minimap)
        self._action("actionExpandAll").triggered.connect(self.canvas_controller.expand_all)
        self._action("actionCollapseAll").triggered.connect(
            self.canvas_controller.collapse_top_level
        )
        view_menu = self.findChild(QMenu, "menuView")
        for dock in self.findChildren(QDockWidget):
            view_menu.addAction(dock.toggleViewAction())
        code_dock = self.findChild(QDockWidget, "codeDock")
        inspector_dock = self.findChild(QDockWidget, "inspectorDock")
        table_dock = self.findChild(QDockWidget, "tableDock")
        self.resizeDocks([code_dock, inspector_dock], [520, 520], Qt.Orientation.Horizontal)
        self.resizeDocks([code_dock, inspector_dock], [480, 320], Qt.Orientation.Vertical)
        self.resizeDocks([table_dock], [220], Qt.Orientation.Vertical)
        self.window_state = WindowState(
            self,
            self.autosaver.directory.parent / "window.ini",
            self.recent,
            self.findChild(QMenu, "menuFile"),
            view_menu,
            self._action("actionReload"),
            self.open_model,
        )
        self.theme = ThemeController(self, self.window_state.settings, view_menu)
        self.window_state.restore()
        self.status_bar.showMessage("Open a model with File ▸ Open model… (Ctrl+O)")

    def _action(self, name: str) -> QAction:
        action = self.findChild(QAction, name)
        assert action is not None, name
        return action

    # --- opening -------------------------------------------------------------------------------

    def show_open_dialog(self) -> None:
        if not self.maybe_save_changes():
            return
        dialog = OpenDialog(self, self.request, self.recent.load())
        if dialog.exec() and dialog.request().spec:
            self.open_model(dialog.request())

    def reload(self) -> None:
        if self.request is not None:
            self.open_model(self.request)

    def open_model(self, request: OpenRequest, *, dialog: bool = True) -> None:
        """Load and capture in a worker thread; the current document stays until it is done.

        The model's code may run away (an endless loop, a trace that never ends): the status
        bar says which of its lines is running, and Cancel stops it there.  ``dialog=False``:
        a failure is not shown in a message box (the caller shows it: the lesson does).
        """
        self.cancel_loading(quiet=True)
        self._dialog = dialog
        task = UserCodeTask(lambda: _prepared(open_document(request)), self)
        task.succeeded.connect(lambda doc: self._loaded(request, doc))
        task.failed.connect(lambda exc: self._failed(request, exc))
        task.finished.connect(task.deleteLater)
        self._task, self._opening = task, request
        self._started = time.perf_counter()
        self._progress.show()
        self._cancel.show()
        self.status_bar.showMessage(f"Opening {request.spec} ({request.frontend})…")
        self._watch.start()
        task.start()

    def _watch_loading(self) -> None:
        """Once opening takes a while, say where in the model's code it is."""
        task, request = self._task, self._opening
        if task is None or request is None:
            self._watch.stop()
            return
        seconds = time.perf_counter() - self._started
        if seconds < WHERE_AFTER_S:
            return
        loc = task.where(model_file(request.spec))
        where = f" — running {Path(loc.filename).name}:{loc.lineno}: {loc.text}" if loc else ""
        self.status_bar.showMessage(
            f"Opening {request.spec} for {seconds:.0f} s{where}  (Cancel stops it)"
        )

    def cancel_loading(self, quiet: bool = False) -> None:
        """Stop opening: the model's code is stopped at its next line, its result dropped."""
        self._watch.stop()
        if self._task is not None:
            self._task.stop()
            self._task = None
            self._busy(False)
            if not quiet:
                self.status_bar.showMessage("Opening cancelled; its code was stopped.", 5000)

    def _layout_progressed(self, done: int, total: int) -> None:
        self._layout_progress.setRange(0, max(total, 1))
        self._layout_progress.setValue(done)

    def _layout_finished(self, *_args) -> None:
        self._layout_timer.stop()
        self._layout_progress.hide()
        self._layout_stop.hide()

    def _busy(self, busy: bool) -> None:
        self._progress.setVisible(busy)
        self._cancel.setVisible(busy)

    def _loaded(self, request: OpenRequest, document: GraphDocument) -> None:
        self._task = None
        self._watch.stop()
        self._busy(False)
        self.request = request
        is_session = request.spec.endswith(SESSION_SUFFIX)
        self.set_document(document, first_open=not is_session)
        # Next turn, once the old document's last holders (its bridge) are deleted.
        QTimer.singleShot(0, _out_of_the_collectors_way)
        restored = self._restored_from is not None
        self.session_path = Path(request.spec) if is_session and not restored else None
        self.modified = restored
        self.autosave_pending = not is_session or restored  # no session file holds it yet
        if restored:
            self._restored_from.unlink(missing_ok=True)
            self._restored_from = None
        self._update_summary()
        seconds = time.perf_counter() - self._started
        note = f" — {document.notes[0]}" if document.notes else ""
        self.status_bar.showMessage(f"Opened {request.spec} in {seconds:.2f} s{note}")
        self.recent.add(request)
        self.documentLoaded.emit(document)

    def _failed(self, request: OpenRequest, exc: BaseException) -> None:
        self._task = None
        self._watch.stop()
        self._busy(False)
        self._restored_from = None
        self.status_bar.showMessage(f"Could not open {request.spec}.", 10000)
        if self._dialog:
            self._error("Could not open the model", exc)
        self.loadFailed.emit(exc)

    # --- the document --------------------------------------------------------------------------

    def set_document(self, document: GraphDocument | None, first_open: bool = False) -> None:
        self.undo_stack.clear()  # commands belong to the document they changed
        if self._bridge is not None:
            self._bridge.detach()
            self._bridge.deleteLater()
            self._bridge = None
        self.selection.clear()
        self.document = document
        if document is not None:
            document.defer_heavy = len(document) > DEFER_ABOVE
        self.catch_up.set_document(document)
        self.table_model.set_document(document)
        self.code.set_document(document)
        self.inspector.set_document(document)
        self.patterns.set_document(document)
        self.run_panel.set_document(document)
        self.step_panel.set_document(document)
        self.console.set_document(document)
        welcome.show_for(self, document)
        self.file_watcher.watch(document.source.source_file if document is not None else None)
        self.search.refresh()
        if document is not None:
            self._bridge = DocumentBridge(document, self)
            self._bridge.changed.connect(self._document_changed)
            self._size_table_columns()
        self._update_summary()
        # Last: it starts the layout thread, whose Python would slow all of the above down
        # (each call from Qt into Python waits for the GIL; 0.19 s instead of 0.05 s at 10k).
        self.canvas_controller.set_document(document, first_open=first_open)

    def _size_table_columns(self, sample: int = 50) -> None:
        """Fit the columns to their first rows (Qt's resizeColumnsToContents asks every row
        of a 10,000-node table for its text: a second of frozen window)."""
        model, metrics = self.table_model, self.table_view.fontMetrics()
        rows = min(model.rowCount(), sample)
        for col in range(model.columnCount()):
            texts = [str(model.headerData(col, Qt.Orientation.Horizontal) or "")]
            texts += [str(model.index(row, col).data() or "") for row in range(rows)]
            width = max(metrics.horizontalAdvance(t) for t in texts) + 18
            self.table_view.setColumnWidth(col, min(width, 180))

    def _document_changed(self, event: DocumentEvent) -> None:
        self.modified = True
        self.autosave_pending = True
        doc = self.document
        # Every view shows an edit at once.  On a big graph the code and shapes come a moment
        # later, from a worker thread, as one SHAPES_CHANGED event (the code view keeps the
        # old code until then, and the search waits for the new rows).
        self.canvas_controller.on_document_changed(event)
        self.inspector.on_document_changed(event)
        self.table_model.on_document_changed(event)
        self.code.on_document_changed(event)
        if event.kind is ChangeKind.VIEW_CHANGED:  # a drag keeps the search position
            self._update_summary(recount=False)
            return
        # A big graph's rows and module tree come with the catch-up: search and count then.
        waits = doc is not None and doc.defer_heavy and event.kind is not ChangeKind.SHAPES_CHANGED
        if not waits:
            self.search.refresh()
        self.catch_up.schedule()
        if doc is not None:
            # Nodes an edit (or its undo) removed or renamed are no longer selected.
            kept = [n for n in self.selection.names if n in doc]
            if kept != self.selection.names:
                self.selection.select(kept)
        self._update_summary(recount=not waits)

    def _layout_done(self, layout) -> None:
        self.patterns.set_scene(self.canvas.scene())
        self.run_panel.set_scene(self.canvas.scene())
        for note in layout.notes:
            self.status_bar.showMessage(note, 15000)
        self.layoutShown.emit(layout)

    def _profile_shown(self, profile) -> None:
        """A per-node profile (or none): the table's Time column and the inspector follow."""
        times = {n.name: (n.time_s, n.share) for n in profile.nodes} if profile else {}
        self.table_model.set_times(times)
        self.inspector.set_profile(profile)

    def _show_node(self, name: str) -> None:
        if self.document is not None and name in self.document:
            self.selection.select([name])

    def _update_summary(self, recount: bool = True) -> None:
        doc = self.document
        if doc is None:
            self.setWindowTitle("fxstudio")
            self._summary.clear()
            return
        name = self.session_path.name if self.session_path else (doc.source.spec or "untitled")
        star = "*" if self.modified else ""
        self.setWindowTitle(f"{name}{star} — fxstudio")
        if recount:
            self._modules = sum(1 for _ in doc.module_tree().walk()) - 1
        self._summary.setText(f"{len(doc)} nodes · {self._modules} modules · {doc.source.frontend}")

    # --- selection -----------------------------------------------------------------------------

    def _table_selection_changed(self, *_args: object) -> None:
        rows = self.table_view.selectionModel().selectedRows()
        names = [self.table_proxy.data(i, NAME_ROLE) for i in rows]
        if set(names) != set(self.selection.names):
            self.selection.select(names)

    def _show_selection_in_table(self, names: list[str]) -> None:
        sm = self.table_view.selectionModel()
        current = {self.table_proxy.data(i, NAME_ROLE) for i in sm.selectedRows()}
        if current == set(names):
            return
        selection = QItemSelection()
        last = None
        for name in names:
            row = self.table_model.row_of(name)
            if row is None:
                continue
            src = self.table_model.index(row, 0)
            idx = self.table_proxy.mapFromSource(src)
            if idx.isValid():
                right = idx.siblingAtColumn(self.table_model.columnCount() - 1)
                selection.select(idx, right)
                last = idx
        flags = (
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows
        )
        sm.select(selection, flags)
        if last is not None:
            self.table_view.scrollTo(last)

    def _about(self) -> None:
        AboutDialog(self).exec()

    def closeEvent(self, event) -> None:  # noqa: N802
        if not self.maybe_save_changes():
            event.ignore()
            return
        self.window_state.save()
        self.cancel_loading(quiet=True)  # a daemon thread: it never holds up quitting
        for task in self.findChildren(Task):
            task.wait(30000)  # let a save that is under way finish its atomic write
        if not self._keep_recovery:
            self.autosaver.discard()
        super().closeEvent(event)

    # --- saving --------------------------------------------------------------------------------

    def _autosaved(self) -> None:
        self.autosave_pending = False

    def ask_save_changes(self) -> QMessageBox.StandardButton:
        """Ask whether to save unsaved changes (Save, Discard or Cancel)."""
        buttons = (
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel
        )
        return QMessageBox.question(
            self,
            "Unsaved changes",
            "The document has changes that no session file holds. Save them first?",
            buttons,
            QMessageBox.StandardButton.Save,
        )

    def close_document(self) -> None:
        """File ▸ Close model: ask to save changes, then show an empty window."""
        if self.document is None or not self.maybe_save_changes():
            return
        self.set_document(None)
        self.request = None
        self.session_path = None
        self.modified = False
        self.autosave_pending = False
        self.autosaver.discard()
        self._update_summary()

    def maybe_save_changes(self) -> bool:
        """True when it is fine to drop the document (saved, discarded or unchanged)."""
        if self.document is None or not self.modified:
            return True
        if not self.interactive:  # nobody to ask: keep the work in the recovery file
            self.autosave_pending = True
            self._keep_recovery = self.autosaver.save_now()
            return True
        answer = self.ask_save_changes()
        if answer == QMessageBox.StandardButton.Save:
            return self.save_session()
        return answer == QMessageBox.StandardButton.Discard

    def save_session(self, path: str | Path | None = None, ask: bool = False) -> bool:
        """Write the session (asking for a name when it has none); True when written."""
        if self.document is None:
            return False
        target = Path(path) if path else None if ask else self.session_path
        if target is None:
            chosen, _ = QFileDialog.getSaveFileName(
                self,
                "Save session",
                self._suggest(SESSION_SUFFIX),
                "fxstudio sessions (*.fxstudio)",
            )
            if not chosen:
                return False
            target = Path(chosen if chosen.endswith(SESSION_SUFFIX) else chosen + SESSION_SUFFIX)
        try:
            extra = {"lesson": self.lesson.state.to_json()} if self.lesson.active else {}
            save_session(self.document, target, **extra)
        except UserError as exc:
            self._error("Could not save the session", exc)
            return False
        self.session_path = target
        self.modified = False
        self.autosave_pending = False
        self.autosaver.discard()
        self._update_summary()
        self.status_bar.showMessage(f"Saved {target}", 5000)
        self.sessionSaved.emit(str(target))
        return True

    def _suggest(self, suffix: str) -> str:
        doc = self.document
        stem = "model"
        if self.session_path is not None:
            stem = self.session_path.stem
        elif doc is not None and doc.source.spec:
            stem = doc.source.spec.rpartition(":")[2] or stem
            stem = Path(stem).stem
        return str(Path.cwd() / f"{stem}{suffix}")

    def export_to(self, path: Path, fmt: str) -> None:
        """Save the model as ``fmt`` in a worker thread (see ExportController.export_to)."""
        self.exporting.export_to(path, fmt)

    def export_image(self, path: Path, visible_only: bool = False) -> bool:
        """Save the canvas picture (PNG or SVG by suffix); True when written."""
        return self.exporting.export_image(path, visible_only)

    # --- editing -------------------------------------------------------------------------------

    def _lock_editing(self, reason: str) -> None:
        """No edit, undo or redo until :meth:`_unlock_editing` (a worker reads the graph)."""
        self.edits.lock(reason)
        self._keep_undo_disabled()
        # A drag still pushes a move; these come after the stack has enabled its actions.
        self.undo_stack.canUndoChanged.connect(self._keep_undo_disabled)
        self.undo_stack.canRedoChanged.connect(self._keep_undo_disabled)

    def _keep_undo_disabled(self, *_args: object) -> None:
        for name in ("actionUndo", "actionRedo"):
            self._action(name).setEnabled(False)
        self.undo_view.setEnabled(False)

    def _unlock_editing(self) -> None:
        self.edits.unlock()
        self.undo_stack.canUndoChanged.disconnect(self._keep_undo_disabled)
        self.undo_stack.canRedoChanged.disconnect(self._keep_undo_disabled)
        self._action("actionUndo").setEnabled(self.undo_stack.canUndo())
        self._action("actionRedo").setEnabled(self.undo_stack.canRedo())
        self.undo_view.setEnabled(True)

    def _edit_refused(self, message: str) -> None:
        self.status_bar.showMessage(f"Not done: {message}", 15000)
        if self.interactive:
            QMessageBox.warning(self, "Edit refused", message)

    def _edit_applied(self, edit) -> None:
        problem = self.document.shape_problem if self.document else None
        if problem:
            self.status_bar.showMessage(
                f"{edit.label}. The shapes no longer fit at {problem[0]}: {problem[1]}", 20000
            )
        else:
            self.status_bar.showMessage(edit.label, 5000)

    def insert_dialog(self) -> None:
        """The insert palette (after the selected node, or on the selected edge)."""
        if self.document is None or not self.interactive:
            return
        edge = self.canvas_controller.selected_edge()
        current = self.selection.current
        where = (
            f"On the edge {edge[0]} → {edge[1]}."
            if edge
            else f"After {current}, which it takes as its first argument."
            if current
            else "Select a node or an edge first to feed the new node."
        )
        palette = InsertPalette(catalogue(self.document), where, self)
        if palette.exec() and palette.chosen() is not None:
            self.edits.insert(palette.chosen(), palette.arguments())

    def add_input_dialog(self) -> None:
        if self.document is None or not self.interactive:
            return
        text, ok = QInputDialog.getText(
            self,
            "Add input",
            "Name, optionally : a type and = a default value (e.g. scale: float = 1.0):",
        )
        if ok and text.strip():
            head, _, default = text.partition("=")
            name, _, type_name = head.partition(":")
            self.edits.add_input(name.strip(), default, type_name)

    def rename_dialog(self) -> None:
        name = self.selection.current
        if name is None or not self.interactive:
            return
        new, ok = QInputDialog.getText(self, "Rename node", f"New name for {name}:", text=name)
        if ok and new and new != name:
            self.edits.rename(name, new.strip())

    def change_target_dialog(self) -> None:
        name = self.selection.current
        if name is None or self.document is None or not self.interactive:
            return
        node = self.document.node(name)
        what = {
            "call_function": "function (e.g. torch.nn.functional.gelu)",
            "call_method": "Tensor method (e.g. sigmoid)",
            "call_module": "submodule path (e.g. layer1.0.relu)",
        }.get(node.op)
        if what is None:
            self.edits.refused.emit(f"A {node.op} node has no target to change.")
            return
        current = format_target(node)
        target, ok = QInputDialog.getText(
            self, "Change target", f"New {what} for {name}:", text=current
        )
        if ok and target and target != current:
            self.edits.change_target(name, target.strip())

    def _error(self, title: str, exc: BaseException) -> None:
        if not self.interactive:
            return
        box = QMessageBox(self)
        alternative = getattr(exc, "alternative", None)
        if isinstance(alternative, OpenRequest):  # symbolic tracing failed, export works
            button = box.addButton(
                "Open with the export frontend", QMessageBox.ButtonRole.AcceptRole
            )
            button.clicked.connect(lambda: self.open_model(alternative))
            box.addButton(QMessageBox.StandardButton.Close)
        box.setIcon(QMessageBox.Icon.Warning)
        box.setWindowTitle(title)
        if isinstance(exc, UserError):
            head, _, rest = str(exc).partition("\n")
            box.setText(head)
            box.setInformativeText(rest)
        else:
            box.setText(f"fxstudio hit an internal error: {type(exc).__name__}: {exc}")
            box.setInformativeText("This is a bug in fxstudio; please report it.")
        box.open()

    # --- recovery ------------------------------------------------------------------------------

    def offer_recovery(self) -> bool:
        """If a crashed fxstudio left a recovery file, offer to restore it; True if restoring."""
        found = find_recoveries(self.autosaver.directory)
        if not found:
            return False
        answer = QMessageBox.question(
            self,
            "Restore unsaved work?",
            f"fxstudio quit unexpectedly and left unsaved work from "
            f"{time.ctime(found[0].stat().st_mtime)}. Restore it?",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        self.restore_recovery(found[0])
        return True

    def restore_recovery(self, path: Path) -> None:
        """Open a recovery file; once it is shown the file is deleted (its changes stay unsaved)."""
        self._restored_from = Path(path)
        self.open_model(OpenRequest(str(path)))


_document_frozen = False  # a document has been moved out of the collector's way


def _out_of_the_collectors_way(document: bool = True) -> None:
    """Now and then Python's cycle collector walks every object it tracks, holding the GIL:
    with torch loaded that is 0.1-0.2 s, and with a 10,000-node graph (nodes, meta, 3,000
    modules and their weights) 0.2-0.3 s of frozen window, whichever thread set it off (the
    loading thread, an edit, the catch-up worker).  What is alive at start-up (modules,
    classes) and the document just opened are moved out of its sight; the scene's items,
    made and dropped by layouts, stay in it.  The document a new one replaces is collected
    first, once, so that it does not stay.
    """
    global _document_frozen
    if document and _document_frozen:
        gc.unfreeze()
        gc.collect()
    gc.freeze()
    _document_frozen = _document_frozen or document


def _prepared(doc: GraphDocument) -> GraphDocument:
    """Work the views will ask for, done in the loading thread rather than the GUI thread:
    the table rows, the code and its line map, the module tree (a second at 10,000 nodes)."""
    doc.rows()
    doc.code_line_map()
    doc.module_tree()
    return doc
