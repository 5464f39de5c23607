"""The main window: the canvas in the middle, the panels of :data:`PANELS` docked around it,
the commands of :mod:`~fxstudio.qt.window.actions` in its menus and toolbar -- all over one
:class:`~fxstudio.qt.window.session.DocumentSession`.

The window only composes: the session owns the document; each panel is a
:class:`~fxstudio.qt.panels.base.DocumentPanel` that hears the session; the canvas has its
controller; edits go through the edit controller.  What the window itself does is ask the
user things (open, save, restore) and show what went wrong.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import QDialog, QMainWindow, QMenu, QStatusBar, QToolBar, QWidget

from fxstudio.core.edits import Edit
from fxstudio.core.errors import LoadError
from fxstudio.core.flows.save import LastCrash
from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.qt.canvas.controller import CanvasController
from fxstudio.qt.canvas.view import CanvasView
from fxstudio.qt.canvas.zoom import ZoomWidget
from fxstudio.qt.editing.controller import EditController
from fxstudio.qt.editing.dialogs import EditDialogs
from fxstudio.qt.forms import child, load_form
from fxstudio.qt.panels.base import DocumentPanel, PanelContext
from fxstudio.qt.panels.code import CodePanel
from fxstudio.qt.panels.compile.panel import CompilePanel
from fxstudio.qt.panels.console import ConsolePanel
from fxstudio.qt.panels.history import HistoryPanel
from fxstudio.qt.panels.inspector import InspectorPanel
from fxstudio.qt.panels.lesson.panel import LessonPanel
from fxstudio.qt.panels.memory.panel import MemoryPanel
from fxstudio.qt.panels.patterns.panel import PatternsPanel
from fxstudio.qt.panels.run.panel import RunPanel
from fxstudio.qt.panels.step.panel import StepPanel
from fxstudio.qt.panels.table.panel import TablePanel
from fxstudio.qt.resources import icon
from fxstudio.qt.selection import SelectionModel
from fxstudio.qt.theme import ThemeController
from fxstudio.qt.window import actions, messages, welcome
from fxstudio.qt.window.about import AboutDialog
from fxstudio.qt.window.autosave import DEFAULT_INTERVAL_S, recovery_dir
from fxstudio.qt.window.command_palette import CommandPalette
from fxstudio.qt.window.desktop import DropOpener, FileWatcher, ShortcutsDialog
from fxstudio.qt.window.idle import IdleCollector
from fxstudio.qt.window.open_dialog import OpenDialog
from fxstudio.qt.window.saving import SaveController
from fxstudio.qt.window.search import SearchController
from fxstudio.qt.window.session import DocumentSession
from fxstudio.qt.window.status import StatusArea
from fxstudio.qt.window.window_state import WindowState

#: How long a thread runs Python while another waits for the GIL (sys.setswitchinterval):
#: 1 ms against Python's 5 ms cut the longest stalls of opening a 10,000-node model from
#: 196-204 ms to 160-181 ms, edits unchanged.
GIL_SWITCH_S = 0.001
#: The panels, in the order they are made; where each goes is the task layout's
#: (:mod:`~fxstudio.qt.window.layouts`).
PANELS: tuple[type[DocumentPanel], ...] = (
    CodePanel,
    InspectorPanel,
    HistoryPanel,
    PatternsPanel,
    RunPanel,
    StepPanel,
    TablePanel,
    ConsolePanel,
    LessonPanel,
    CompilePanel,
    MemoryPanel,
)
P = TypeVar("P", bound=DocumentPanel)


class MainWindow(QMainWindow):
    """fxstudio's window over ``session``.  ``layoutShown(layout)`` once the canvas is drawn.
    A window made with ``interactive=False`` (tests, ``--screenshot``) shows no dialogs:
    errors go out as the session's signals, and closing it with unsaved changes keeps them
    in the recovery file."""

    layoutShown = Signal(object)  # noqa: N815 - a Layout is on the canvas
    actionStarted = Signal()  # noqa: N815 - a command of the menus starts (before it runs)
    canvas: CanvasView  # the form's canvas
    actions: dict[str, QAction]  # type: ignore[assignment]  # by objectName (over QWidget's)
    menus: dict[str, QMenu]  # by title ("&File")
    search: SearchController

    def __init__(
        self,
        parent: QWidget | None = None,
        *,
        interactive: bool = True,
        autosave_s: float = DEFAULT_INTERVAL_S,
        recovery: Path | None = None,
    ) -> None:
        super().__init__(parent)
        # Every virtual call Qt makes on a widget made from Python takes the GIL, so a paint
        # while a worker runs Python waits up to a switch interval per call.
        sys.setswitchinterval(GIL_SWITCH_S)
        load_form("main_window", self, custom=(CanvasView,))
        self.setObjectName("MainWindow")
        self.setWindowIcon(icon("fxstudio.svg"))
        self.interactive = interactive  # False: no dialogs (tests, --screenshot)
        self.keep_recovery = False  # closing leaves the recovery file (nobody was asked)
        self.session = session = DocumentSession(recovery or recovery_dir(), autosave_s, self)
        self.selection = SelectionModel(self)
        self.canvas = child(self, CanvasView, "canvas")
        self.canvas_controller = CanvasController(self.canvas, self.selection, session, self)
        self.canvas_controller.layoutDone.connect(self.layoutShown)
        self.edits = EditController(session, self.selection, self.canvas_controller.selected_edge)
        self.edits.setParent(self)
        self.canvas_controller.rewireRequested.connect(self.edits.connect_wire)
        self.dialogs = EditDialogs(self, self.edits)
        self.saving = SaveController(self, self._session_extras)
        self.panels: dict[str, DocumentPanel] = {}
        self._place_panels()
        # Last: it starts the layout thread, whose Python would slow every other view down.
        session.documentChanged.connect(self.canvas_controller.set_document)
        self._build_commands()
        self.status = StatusArea(
            child(self, QStatusBar, "statusbar"), session, self.canvas_controller, self
        )
        self.statusBar().addPermanentWidget(ZoomWidget(self.canvas))  # "75 %", click: 100 %
        self.welcome, show_welcome = welcome.install(self, self.canvas, session.recent)
        self.welcome.openRequested.connect(session.replace)
        self.welcome.openDialogRequested.connect(self.show_open_dialog)
        self.welcome.learnRequested.connect(self.learn)
        session.documentChanged.connect(show_welcome)
        self.drops = DropOpener(self, session.open, self.saving.maybe_save_changes)
        self.file_watcher = FileWatcher(self, session)
        self.idle = IdleCollector(session, self)
        self.window_state = WindowState.of(self)
        self.layouts = self.window_state.layouts
        self.actions.update({a.objectName(): a for a in self.layouts.actions.values()})
        actions.place(self.menus["&View"], "@layouts", [self.layouts.menu])
        self.window_state.place(child(self, QToolBar, "mainToolBar"), self.search.bar)
        actions.place(self.menus["&File"], "@recent", [self.window_state.recent_menu])
        self.theme = ThemeController(self, self.window_state.settings)
        actions.place(self.menus["&View"], "@theme", [self.theme.menu])
        self.theme.changed.connect(lambda _name: self._restyle())
        self.theme.apply()
        self.window_state.restore()
        self._connect_messages()
        actions.update(self, self.actions)
        self.status.show("Open a model with File ▸ Open model… (Ctrl+O)")

    @property
    def document(self) -> GraphDocument | None:
        """The open document (the session's), or None."""
        return self.session.document

    def action(self, name: str) -> QAction:
        return self.actions[name]

    def panel(self, cls: type[P]) -> P:
        """The window's panel of class ``cls``."""
        panel = self.panels[cls.id]
        assert isinstance(panel, cls)
        return panel

    # --- building --------------------------------------------------------------------------

    def _place_panels(self) -> None:
        ctx = PanelContext(self, self.session, self.selection, self.canvas_controller, self.panels)
        for cls in PANELS:
            panel = cls(ctx)
            self.panels[cls.id] = panel
            self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, panel.dock)
            panel.dock.hide()  # until the task layout places it
        self.panel(InspectorPanel).edit = self.edits.set_property

    def _build_commands(self) -> None:
        self.actions, self.menus = actions.build(self)
        undo = self.session.undo_stack.createUndoAction(self, "&Undo")
        redo = self.session.undo_stack.createRedoAction(self, "&Redo")
        for action, name, key, file in (
            (undo, "actionUndo", actions.SK.Undo, "undo.svg"),
            (redo, "actionRedo", actions.SK.Redo, "redo.svg"),
        ):
            action.setObjectName(name)
            action.setShortcuts(actions.standard_keys(key))
            action.setIcon(icon(file))
            self.actions[name] = action
        actions.place(self.menus["&Edit"], "@undo", [undo, redo])
        actions.fill_toolbar(child(self, QToolBar, "mainToolBar"), self.actions)
        docks = [p.dock.toggleViewAction() for p in self.panels.values()]
        actions.place(self.menus["&View"], "@docks", docks)
        for panel in self.panels.values():
            for action in panel.menu_actions():  # (what it runs ends an earlier refusal)
                action.triggered.connect(self.actionStarted)
                self.actions.setdefault(action.objectName(), action)
            if panel.menu:
                actions.place(self.menus[panel.menu], "@panel", panel.menu_actions())
        search_bar = QToolBar("Find", self)
        search_bar.setObjectName("searchBar")  # (placed below the layout bar, in __init__)
        self.search = SearchController(search_bar, self.selection, lambda: self.document, self)
        self.session.documentChanged.connect(lambda _doc: self.search.refresh())
        self.session.changed.connect(self._changed)
        for signal in (self.session.documentChanged, self.session.changed, self.selection.changed):
            signal.connect(lambda *_: actions.update(self, self.actions))
        self.session.lockChanged.connect(self._locked)

    def _connect_messages(self) -> None:
        for panel in self.panels.values():
            panel.message.connect(self.refused)
            panel.status.connect(self.status.show)
        self.edits.refused.connect(self.refused)
        self.edits.applied.connect(self._edit_applied)
        self.drops.refused.connect(lambda text: self.status.show(text, 10000, passing=True))
        self.saving.error.connect(self.show_error)
        self.panel(LessonPanel).resumed.connect(lambda: self.layouts.use("learn"))
        self.canvas_controller.layoutFailed.connect(
            lambda exc: self.show_error("Could not lay out the graph", exc)
        )
        self.session.loadFailed.connect(self._load_failed)

    def _restyle(self) -> None:
        self.canvas_controller.apply_theme()
        self.panel(CodePanel).restyle()

    def _session_extras(self) -> dict[str, Any]:
        lesson = self.panel(LessonPanel)
        return {"lesson": lesson.state.to_json()} if lesson.active else {}

    # --- what happens ----------------------------------------------------------------------

    def _changed(self, event: DocumentEvent) -> None:
        doc = self.document
        if event.kind is ChangeKind.VIEW_CHANGED or doc is None:
            return
        if not (doc.defer_heavy and event.kind is not ChangeKind.SHAPES_CHANGED):
            self.search.refresh()  # (a big graph's rows come with the catch-up)
        kept = [n for n in self.selection.names if n in doc]  # removed or renamed: deselected
        if kept != self.selection.names:
            self.selection.select(kept)

    def _locked(self) -> None:
        actions.update(self, self.actions)
        stack = self.session.undo_stack
        self.actions["actionUndo"].setEnabled(not self.session.locked and stack.canUndo())
        self.actions["actionRedo"].setEnabled(not self.session.locked and stack.canRedo())

    def refused(self, message: str) -> None:
        self.status.show(f"Not done: {message}", 15000, passing=True)
        if self.interactive:
            messages.show_refusal(self, message)

    def _edit_applied(self, edit: Edit) -> None:
        problem = self.document.shape_problem if self.document is not None else None
        if problem:
            text = f"{edit.label}. The shapes no longer fit at {problem[0]}: {problem[1]}"
            self.status.show(text, 20000, passing=True)
        else:
            self.status.show(edit.label, 5000)

    def show_error(self, title: str, exc: BaseException) -> None:
        if self.interactive:
            messages.show_error(self, title, exc, self.session.replace)

    def _load_failed(self, exc: BaseException) -> None:
        if self.session.tell_failure:
            self.show()  # (behind a .pt2's first picture until now: the message goes over it)
            if isinstance(exc, LoadError) and exc.choices and self.interactive:
                # a file with several models, none named: the Open dialog offers them
                QTimer.singleShot(0, lambda: self.show_open_dialog(ask=False))
            else:
                self.show_error("Could not open the model", exc)

    # --- asking the user -------------------------------------------------------------------

    def show_open_dialog(self, ask: bool = True) -> None:
        """File ▸ Open; ``ask``: about unsaved changes first (not when they were asked about
        for the open that failed, whose model the dialog shows)."""
        if ask and not self.saving.maybe_save_changes():
            return
        typed = self.session.failed_request is not None  # (its frontend stays as typed)
        dialog = OpenDialog(self, self.session.dialog_request(), self.session.recent.load(), typed)
        request = dialog.request() if modal(dialog) else None
        if request is not None and request.spec:
            self.session.open(request)  # (asked above, before the dialog)

    def close_document(self) -> None:
        """File ▸ Close model: ask to save changes, then show the welcome page."""
        if self.document is not None and self.saving.maybe_save_changes():
            self.session.close()

    def offer_recovery(self, crash: LastCrash | None = None) -> bool:
        """Say that the last run crashed (``crash``), and if a crashed fxstudio left a
        recovery file, offer to restore it; True if restoring."""
        return messages.offer_recovery(self, self.session, crash)

    def learn(self) -> None:
        """Help ▸ Learn FX: the Learn layout, the lesson at its step."""
        self.layouts.use("learn")
        self.panel(LessonPanel).start()

    def show_about(self) -> None:
        modal(AboutDialog(self))

    def show_shortcuts(self) -> None:
        modal(ShortcutsDialog(self))

    def show_command_palette(self) -> None:
        modal(CommandPalette(self))

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if not self.saving.maybe_save_changes():
            event.ignore()
            return
        self.window_state.save()
        self.session.cancel_open(quiet=True)  # a daemon thread: it never holds up quitting
        if self.saving.task is not None:
            self.saving.task.wait(30000)  # let a save under way finish its atomic write
        if not self.keep_recovery:
            self.session.autosaver.discard()
        super().closeEvent(event)


def modal(dialog: QDialog) -> int:
    """Run ``dialog`` modally and delete it after (each use left one more hidden dialog
    under the window); what exec() returned."""
    try:
        return dialog.exec()
    finally:
        dialog.deleteLater()
