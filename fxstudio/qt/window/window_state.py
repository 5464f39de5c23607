"""What the window remembers between runs: its geometry and dock layout (restored at start,
*View ▸ Reset layout* puts the layout it was built with back), and *File ▸ Open Recent*
(models and sessions opened before; those whose file is gone are left out; *Clear*).

The settings live in an INI file beside the recovery folder (one per user, one per test).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtWidgets import QMainWindow, QMenu

from fxstudio.core.opening import OpenRequest
from fxstudio.core.recent import RecentModels

STATE_VERSION = 4  # bump when the docks change, so an old saved layout is not applied


class WindowState:
    """The window's geometry and docks, saved and restored; the *Open Recent* menu."""

    def __init__(
        self,
        window: QMainWindow,
        settings_file: Path,
        recent: RecentModels,
        open_request: Callable[[OpenRequest], None],
    ) -> None:
        self.window = window
        self.settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
        self.recent = recent
        self.open_request = open_request
        self.default_state = window.saveState(STATE_VERSION)
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.setObjectName("menuRecent")
        self.recent_menu.aboutToShow.connect(self.fill_recent)

    def restore(self) -> bool:
        """Put back the geometry and docks saved last time; False when there are none."""
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        if isinstance(geometry, QByteArray):
            self.window.restoreGeometry(geometry)
        if isinstance(state, QByteArray):
            return bool(self.window.restoreState(state, STATE_VERSION))
        return False

    def save(self) -> None:
        self.settings.setValue("window/geometry", self.window.saveGeometry())
        self.settings.setValue("window/state", self.window.saveState(STATE_VERSION))
        self.settings.sync()

    def reset_layout(self) -> None:
        """The docks as the window was built: where they were, and shown or hidden."""
        self.window.restoreState(self.default_state, STATE_VERSION)

    def fill_recent(self) -> None:
        menu = self.recent_menu
        menu.clear()
        items = self.recent.existing()
        for i, request in enumerate(items, 1):
            action = menu.addAction(f"&{i % 10} {request.spec}" if i <= 10 else request.spec)
            action.triggered.connect(lambda _=False, r=request: self.open_request(r))
        if not items:
            menu.addAction("(nothing opened yet)").setEnabled(False)
        menu.addSeparator()
        clear = menu.addAction("&Clear the list")
        clear.setEnabled(bool(items))
        clear.triggered.connect(self.recent.clear)
