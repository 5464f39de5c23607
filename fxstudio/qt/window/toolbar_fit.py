"""The main toolbar's buttons with their text when the window is wide enough for them,
icons only (their names in the tooltips) when it is not -- never a ``»`` overflow menu
hiding Zoom and Relayout at 1280 pixels, or the layout bar beside it.

A button's text is its action's as the bar was built ("Undo"), kept when the action's
text grows ("Undo fuse-attention (2 matches)": in the menu and the tooltip): the bar's
width is measured once, so no action's text may widen it after."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QMainWindow, QToolBar

TEXT = Qt.ToolButtonStyle.ToolButtonTextBesideIcon
ICONS = Qt.ToolButtonStyle.ToolButtonIconOnly


class ToolbarFit(QObject):
    """Switches ``bar`` between text beside icons and icons only as ``window`` resizes, so
    that it and the ``others`` on its row fit."""

    def __init__(self, window: QMainWindow, bar: QToolBar, others: list[QToolBar]) -> None:
        super().__init__(window)
        self.window, self.bar, self.others = window, bar, others
        for action in bar.actions():  # (the short text a button shows, kept)
            action.setIconText(action.iconText())
        style = bar.toolButtonStyle()
        bar.setToolButtonStyle(TEXT)
        self.text_width = bar.sizeHint().width()  # what the bar needs with its texts
        bar.setToolButtonStyle(style)
        window.installEventFilter(self)
        self.fit()

    def fit(self) -> None:
        others = sum(b.sizeHint().width() for b in self.others if not b.isHidden())
        wide = self.text_width + others + 24 <= self.window.width()
        self.bar.setToolButtonStyle(TEXT if wide else ICONS)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.window and event.type() == QEvent.Type.Resize:
            self.fit()
        return False
