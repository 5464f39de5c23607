"""``DocumentPanel``: what every dock of the window is -- a dock widget over the session's
document, told when another document opens and when this one changes, saying what it wants
the status bar to show, and offering its actions to the window's menus.  Its widget sits in a
scroll area that asks for little (:class:`~fxstudio.qt.forms.DockScrollArea`): showing a dock
never grows the window past the screen, the dock's body scrolls instead.

A panel gets what it needs in a :class:`PanelContext` (the session, the shared selection, the
canvas) -- and, when it works with another panel, that panel by its class (``requires``), as
a plugin declares what it needs -- instead of reaching into the window.

Example (a panel that shows the node count)::

    class CountPanel(DocumentPanel):
        id, title = "count", "Count"

        def build(self) -> QWidget:
            self.label = QLabel()
            return self.label

        def on_document(self, doc):
            self.label.setText(f"{len(doc)} nodes" if doc else "")

        on_change = lambda self, event: self.on_document(self.document)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeVar

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractScrollArea, QDockWidget, QWidget

from fxstudio.core.errors import UserError
from fxstudio.core.graph.document import DocumentEvent, GraphDocument
from fxstudio.core.wording import for_window
from fxstudio.qt.canvas.controller import CanvasController
from fxstudio.qt.forms import DockScrollArea
from fxstudio.qt.seams import Session
from fxstudio.qt.selection import SelectionModel

P = TypeVar("P", bound="DocumentPanel")


def in_words(exc: BaseException) -> str:
    """What a worker's failure says in a dock: a refusal as it is worded (its command-line
    options named as the window's places), anything else with the name of what was raised."""
    return for_window(str(exc)) if isinstance(exc, UserError) else f"{type(exc).__name__}: {exc}"


@dataclass
class PanelContext:
    """What panels are given: the window (their Qt parent), the session, the selection, the
    canvas controller, and the panels made before them (by id)."""

    window: QWidget
    session: Session  # the window's DocumentSession
    selection: SelectionModel
    canvas: CanvasController
    panels: dict[str, DocumentPanel]


class DocumentPanel(QObject):
    """A dock over the session's document.  Subclasses set ``id`` and ``title``, build their
    widget in :meth:`build`, and override :meth:`on_document` and :meth:`on_change`.

    ``message(text)`` is something the user tried that was not done and why (the window shows
    it in the status bar, and in a message box when it is interactive); ``status(text, ms)``
    is a passing note for the status bar."""

    id: ClassVar[str] = ""
    title: ClassVar[str] = ""
    #: The other panels this one works with (made before it): :meth:`panel` hands them out.
    requires: ClassVar[tuple[type[DocumentPanel], ...]] = ()

    message = Signal(str)
    status = Signal(str, int)

    def __init__(self, ctx: PanelContext) -> None:
        super().__init__(ctx.window)
        self.ctx = ctx
        self.session = ctx.session
        self.selection = ctx.selection
        self.undo_stack = ctx.session.undo_stack
        self.dock = QDockWidget(self.title, ctx.window)
        self.dock.setObjectName(f"{self.id}Dock")
        body = self.build()  # (a scroll area of its own already scrolls)
        scrolls = isinstance(body, QAbstractScrollArea)
        self.dock.setWidget(body if scrolls else DockScrollArea(body, self.dock))
        self.session.documentChanged.connect(self.on_document)
        self.session.changed.connect(self.on_change)

    @property
    def document(self) -> GraphDocument | None:
        return self.session.document

    def panel(self, cls: type[P]) -> P:
        """The panel of class ``cls``, one this one ``requires``: typed, as what it is."""
        assert cls in self.requires, f"{self.id} does not require {cls.__name__}"
        panel = self.ctx.panels[cls.id]
        assert isinstance(panel, cls)
        return panel

    def build(self) -> QWidget:
        """The dock's widget."""
        raise NotImplementedError

    def on_document(self, doc: GraphDocument | None) -> None:
        """Another document is open (``None``: none)."""

    def on_change(self, event: DocumentEvent) -> None:
        """The open document changed."""

    def menu_actions(self) -> list[QAction]:
        """Actions for the window's menu named :attr:`menu` (none by default)."""
        return []

    menu: ClassVar[str] = ""  # the menu its actions go in ("" for none)
