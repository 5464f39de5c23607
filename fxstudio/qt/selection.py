"""The one selection all views share: node names."""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QObject, Signal


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
