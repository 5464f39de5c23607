"""What the window remembers between runs: its geometry and its task layouts (each as the user
left it, :mod:`~fxstudio.qt.window.layouts`), and *File ▸ Open Recent* (models and sessions
opened before; those whose file is gone are left out; *Clear*).

The settings live in an INI file beside the recovery folder (one per user, one per test).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QToolBar

from fxstudio.core.flows.open import RecentModels
from fxstudio.core.graph.request import OpenRequest
from fxstudio.qt.screen import fit_to_screen
from fxstudio.qt.window.layouts import TaskLayouts
from fxstudio.qt.window.toolbar_fit import ToolbarFit


class WindowState:
    """The window's geometry and task layouts (of ``docks``, by panel id), saved and
    restored; the *Open Recent* menu."""

    def __init__(
        self,
        window: QMainWindow,
        settings_file: Path,
        docks: dict[str, QDockWidget],
        recent: RecentModels,
        open_request: Callable[[OpenRequest], object],
    ) -> None:
        self.window = window
        self.settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
        self.layouts = TaskLayouts(window, docks, self.settings)
        self.recent = recent
        self.open_request = open_request
        self.restored = False  # a geometry of last time was put back
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.setObjectName("menuRecent")
        self.recent_menu.aboutToShow.connect(self.fill_recent)

    @classmethod
    def of(cls, window: Any) -> WindowState:
        """The state of fxstudio's ``window``: settings beside its session's recovery
        folder, a task layout of its panels, the session's recent models."""
        session = window.session
        docks = {name: panel.dock for name, panel in window.panels.items()}
        path = session.autosaver.directory.parent / "window.ini"
        return cls(window, path, docks, session.recent, session.replace)

    def place(self, main_bar: QToolBar, search_bar: QToolBar) -> None:
        """The layout bar right of ``main_bar`` (which fits the row: :class:`ToolbarFit`),
        the find bar on a row of its own below."""
        window = self.window
        window.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.layouts.bar)
        self.toolbar_fit = ToolbarFit(window, main_bar, [self.layouts.bar])
        window.addToolBarBreak()
        window.addToolBar(search_bar)
        self.recent_menu = QMenu("Open &Recent", window)
        self.recent_menu.setObjectName("menuRecent")
        self.recent_menu.aboutToShow.connect(self.fill_recent)

    def restore(self) -> None:
        """Put back the geometry (no larger than this screen: it may be a smaller one than
        last time) and the task layout of last time."""
        geometry = self.settings.value("window/geometry")
        self.restored = isinstance(geometry, QByteArray) and self.window.restoreGeometry(geometry)
        if self.restored:
            fit_to_screen(self.window)
        self.layouts.restore()

    def start_size(self, width: int, height: int) -> None:
        """The first run's size (later runs restore theirs), as far as the screen allows."""
        if not self.restored:
            fit_to_screen(self.window, width, height)

    def save(self) -> None:
        self.settings.setValue("window/geometry", self.window.saveGeometry())
        self.layouts.keep()
        self.settings.sync()

    def reset_layout(self) -> None:
        """The current task layout as built: its docks where they were, shown or hidden."""
        self.layouts.reset()

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
