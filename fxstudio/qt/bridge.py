"""Qt signals for the document's change events, and the one selection all views share."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Signal

from fxstudio.core.document import DocumentEvent, GraphDocument


class DocumentBridge(QObject):
    """Re-emits a :class:`GraphDocument`'s events as a Qt signal (``changed(event)``)."""

    changed = Signal(object)

    def __init__(self, document: GraphDocument, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document = document
        self._unsubscribe = document.subscribe(self._forward)

    def _forward(self, event: DocumentEvent) -> None:
        self.changed.emit(event)

    def detach(self) -> None:
        self._unsubscribe()


class SelectionModel(QObject):
    """The selected node names, shared by the table, code view, inspector and canvas.

    Views call :meth:`select` and redraw on ``changed``; a view that caused the change gets
    the signal too and must ignore a selection it already shows.
    """

    changed = Signal(list)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._names: list[str] = []

    @property
    def names(self) -> list[str]:
        return list(self._names)

    @property
    def current(self) -> str | None:
        return self._names[-1] if self._names else None

    def select(self, names: Iterable[str]) -> None:
        new = list(dict.fromkeys(names))
        if new != self._names:
            self._names = new
            self.changed.emit(list(new))

    def clear(self) -> None:
        self.select([])
