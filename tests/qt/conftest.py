"""Two ways to test the window's parts.

- ``docks``: a dock (or a few) over a small panel context -- a plain ``QMainWindow`` holding
  the real canvas, a real ``DocumentSession`` given a small document at once (opened on the
  test's thread, no open worker), the ``SelectionModel``, the ``CanvasController`` and the
  edit controller -- the way :class:`~fxstudio.qt.panels.base.PanelContext` gives them to a
  panel, without the menus, status bar, welcome page, layouts and saved window state.
- ``window``: the whole ``MainWindow``, for what is about the window itself (menus, saving,
  the Open dialog, recovery) and the journeys across docks (``test_journeys.py``).
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow

from fxstudio.core.flows import open_document
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.layout.groups import collapse_big_graph
from fxstudio.qt.canvas.controller import CanvasController
from fxstudio.qt.canvas.view import CanvasView
from fxstudio.qt.editing.controller import EditController
from fxstudio.qt.panels.base import DocumentPanel, PanelContext
from fxstudio.qt.selection import SelectionModel
from fxstudio.qt.window.main_window import PANELS, MainWindow
from fxstudio.qt.window.session import DocumentSession


def _window(qtbot, tmp_path, interactive):
    w = MainWindow(interactive=interactive, autosave_s=0, recovery=tmp_path / "recovery")
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    return w


@pytest.fixture
def window(qtbot, tmp_path):
    """A non-interactive main window (no dialogs) with its own recovery folder."""
    return _window(qtbot, tmp_path, interactive=False)


@pytest.fixture
def interactive(qtbot, tmp_path):
    """A window that shows its messages in message boxes, as a user's does."""
    return _window(qtbot, tmp_path, interactive=True)


class Docks:
    """Panels (by id, with those they ``require``) made from one :class:`PanelContext` over a
    real session, selection and canvas, docked in a plain ``QMainWindow`` around the canvas.

    ``open(spec)`` gives the session a document opened here and now (the first picture's
    collapsed modules, as an open in the window makes it) and, with ``drawn=True``, waits
    until the canvas shows it."""

    def __init__(self, qtbot, tmp_path, ids: tuple[str, ...]) -> None:
        self.qtbot = qtbot
        self.window = QMainWindow()
        qtbot.addWidget(self.window)
        self.canvas = CanvasView(self.window)  # the view (MainWindow.canvas)
        self.canvas.setObjectName("canvas")  # (as the window's form names it)
        self.window.setCentralWidget(self.canvas)
        self.session = DocumentSession(tmp_path / "recovery", 0, self.window)
        self.selection = SelectionModel(self.window)
        self.canvas_controller = CanvasController(
            self.canvas, self.selection, self.session, self.window
        )
        self.edits = EditController(
            self.session, self.selection, self.canvas_controller.selected_edge
        )
        self.edits.setParent(self.window)
        self.canvas_controller.rewireRequested.connect(self.edits.connect_wire)
        self.layoutShown = self.canvas_controller.layoutDone  # as MainWindow.layoutShown
        self.panels: dict[str, DocumentPanel] = {}
        ctx = PanelContext(
            self.window, self.session, self.selection, self.canvas_controller, self.panels
        )
        wanted = _with_required(ids)
        for cls in PANELS:  # (in the window's order: a panel after those it requires)
            if cls.id in wanted:
                panel = cls(ctx)
                self.panels[cls.id] = panel
                self.window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, panel.dock)
        if "inspector" in self.panels:
            self.panels["inspector"].edit = self.edits.set_property  # as the window does
        self.session.documentChanged.connect(self.canvas_controller.set_document)
        self.window.resize(1200, 800)
        self.window.show()

    @property
    def document(self) -> GraphDocument | None:
        return self.session.document

    def open(self, spec: str, drawn: bool = True, **kw) -> GraphDocument:
        """``spec`` opened on this thread and shown (the session's ``loaded`` is not told)."""
        request = OpenRequest(spec, **kw)
        doc = open_document(request)
        if not request.is_session:
            collapse_big_graph(doc)
        self.session.request = request
        if not drawn:
            self.session.set_document(doc)
            return doc
        with self.qtbot.waitSignal(self.canvas_controller.layoutDone, timeout=60000):
            self.session.set_document(doc)
        return doc


def _with_required(ids: tuple[str, ...]) -> set[str]:
    by_id = {cls.id: cls for cls in PANELS}
    wanted, todo = set(), list(ids)
    while todo:
        panel_id = todo.pop()
        if panel_id not in wanted:
            wanted.add(panel_id)
            todo.extend(cls.id for cls in by_id[panel_id].requires)
    return wanted


@pytest.fixture
def docks(qtbot, tmp_path):
    """``docks("run", "table")``: those panels (and the ones they require) over a small
    panel context -- see :class:`Docks`."""
    return lambda *ids: Docks(qtbot, tmp_path, ids)


def open_and_wait(qtbot, window, spec, signal="loaded", **kw):
    """Open ``spec`` and wait for the session's ``signal`` (``loaded``, ``loadFailed``) or the
    window's ``layoutShown``; returns what it carried."""
    source = window if signal == "layoutShown" else window.session
    with qtbot.waitSignal(getattr(source, signal), timeout=60000) as blocker:
        window.session.open(OpenRequest(spec, **kw))
    return blocker.args[0]


def move(window, positions):
    """Move nodes as a drag on the canvas does: one undo step (the session is modified)."""
    from fxstudio.qt.editing.commands import MoveNodesCommand

    doc = window.document
    before = {name: doc.positions.get(name) for name in positions}
    window.session.undo_stack.push(MoveNodesCommand(doc, before, positions))


def select_row(view, row):
    """Select ``row`` of a table view alone, as a plain click does.  Not ``selectRow``: it
    reads the keyboard's modifiers as the application last saw them, and a Shift+Return an
    earlier test sent in this process leaves Shift held -- a range from no anchor, which
    selects nothing (the canvas test failed so under a parallel run)."""
    from PySide6.QtCore import QItemSelectionModel

    flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
    flags |= QItemSelectionModel.SelectionFlag.Rows
    view.selectionModel().setCurrentIndex(view.model().index(row, 0), flags)
