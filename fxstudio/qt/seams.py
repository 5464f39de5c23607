"""What the window's lower layers see of the window's own objects, typed: the panels, the canvas
controller and the edit controller are given the :class:`~fxstudio.qt.window.session.
DocumentSession` but may not import it (the layers import one way, down), so they name it by
this :class:`Session` protocol -- the part of it they use, checked by mypy where the window
hands the real one over.  A canvas needs only :class:`Changes` (the Compare window gives its
canvases a stand-in of its own)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtGui import QUndoStack

from fxstudio.core.flows.run import NodeProfile
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.request import OpenRequest


class Changes(Protocol):
    """What a canvas needs of a session: the document's changes (``changed(DocumentEvent)``:
    a module collapsed, nodes dragged) and an undo stack (a drag is one undo step)."""

    undo_stack: QUndoStack

    @property
    def changed(self) -> SignalInstance: ...


class Session(Changes, Protocol):
    """The open document, its undo stack and editing lock, the per-node profile shown, the
    version of the graph (to stamp results with), and their change signals."""

    document: GraphDocument | None
    locked: str | None  # why edits wait (None: they do not)
    profile: NodeProfile | None  # the per-node profile the views show

    @property
    def documentChanged(self) -> SignalInstance: ...  # noqa: N802 - (GraphDocument | None)

    @property
    def loaded(self) -> SignalInstance: ...  # (GraphDocument)

    @property
    def loadFailed(self) -> SignalInstance: ...  # noqa: N802 - (BaseException)

    @property
    def lockChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def profileChanged(self) -> SignalInstance: ...  # noqa: N802 - (NodeProfile | None)

    @property
    def graphStateChanged(self) -> SignalInstance: ...  # noqa: N802

    @property
    def profile_current(self) -> bool: ...

    def lock(self, reason: str) -> None: ...

    def unlock(self) -> None: ...

    def graph_state(self) -> object: ...

    def is_current(self, state: object) -> bool: ...

    def set_profile(self, profile: NodeProfile | None, state: object = None) -> None: ...

    def soon(self, fn: Callable[[], object]) -> None: ...

    def open(self, request: OpenRequest, tell: bool = True) -> None: ...

    def replace(self, request: OpenRequest, tell: bool = True) -> bool: ...
