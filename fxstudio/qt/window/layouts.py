"""Task layouts: the docks arranged for one job -- *Edit*, *Rewrite*, *Profile*, *Learn* --
with the canvas given the room that job leaves it.

Each layout is data (:data:`LAYOUTS`): which panels it shows, where, which share a tab
group and how much of the window each side takes.  *View ▸ Layout* and the layout bar at the
right of the toolbar switch between them (Ctrl+1 … Ctrl+4).  What the user changes in a
layout (a dock dragged, resized or closed) is that layout's from then on: leaving a layout
keeps its arrangement, coming back puts it back, and the window starts in the layout it
was closed in.  *View ▸ Reset layout* puts the current layout back as built.  The docks'
sizes are kept as parts of the window, not pixels: on a smaller screen, or when the window
is resized, the canvas keeps its part.

A dock a layout does not show has a place to go when the user shows it (*View*, Ctrl+Shift+M
for Memory): the Run, Compile and Memory docks are strips along the bottom (:data:`ASIDE`:
tabs of one another, as in *Profile*), any other a column on the right.  Shown together,
Run and Memory are tabs of one strip; and every dock's body scrolls when it is given less
room than it needs (:class:`~fxstudio.qt.forms.DockScrollArea`) -- so showing docks never
grows the window past the screen.

    >>> [layout.title for layout in LAYOUTS]
    ['Edit', 'Rewrite', 'Profile', 'Learn']
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from PySide6.QtCore import QByteArray, QEvent, QObject, QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QResizeEvent
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QToolBar

RIGHT = Qt.DockWidgetArea.RightDockWidgetArea
BOTTOM = Qt.DockWidgetArea.BottomDockWidgetArea
LEFT = Qt.DockWidgetArea.LeftDockWidgetArea
STATE_VERSION = 7  # of a layout's saved dock arrangement: bump when the docks change


@dataclass(frozen=True)
class Group:
    """Docks in one place: the first in ``panels`` is a new column (or row) in ``area``
    (below ``below``'s group when that is given), the others are tabs behind it;
    ``front`` is the tab shown.  ``share`` is the part of the window it takes: of the width
    for a left/right area, of the height for the bottom, or of the column when ``below``."""

    area: Qt.DockWidgetArea
    panels: tuple[str, ...]
    share: float
    front: str = ""
    below: str = ""


@dataclass(frozen=True)
class TaskLayout:
    id: str
    title: str
    tip: str
    groups: tuple[Group, ...]

    def panels(self) -> list[str]:
        return [p for g in self.groups for p in g.panels]


LAYOUTS: tuple[TaskLayout, ...] = (
    TaskLayout(
        "edit",
        "Edit",
        "The graph with the node inspector and the generated code beside it",
        (
            Group(RIGHT, ("inspector", "history"), 0.32),
            Group(RIGHT, ("code", "table", "console", "step"), 0.55, below="inspector"),
        ),
    ),
    TaskLayout(
        "rewrite",
        "Rewrite",
        "Patterns and built-in rewrites beside the graph, their matches on it",
        (
            Group(RIGHT, ("patterns",), 0.38),
            Group(RIGHT, ("inspector", "code", "history"), 0.25, below="patterns"),
        ),
    ),
    TaskLayout(
        "profile",
        "Profile",
        "Run and time the model: results across the bottom, the times on the graph",
        (
            Group(RIGHT, ("inspector", "code"), 0.26),
            Group(BOTTOM, ("run", "table", "compile", "memory"), 0.38),
        ),
    ),
    TaskLayout(
        "learn",
        "Learn",
        "The guided lesson on the left, the code and the step-through on the right",
        (
            Group(LEFT, ("lesson",), 0.28),
            Group(RIGHT, ("code", "step", "inspector"), 0.3, front="code"),
        ),
    ),
)
BY_ID = {layout.id: layout for layout in LAYOUTS}
#: Where the docks made to lie along the window (their results side by side) go when a
#: layout that does not show them is shown them: the bottom, tabs of one another.
ASIDE = Group(BOTTOM, ("run", "compile", "memory"), 0.38)
DEFAULT = "edit"


class TaskLayouts(QObject):
    """Switches ``window``'s docks (``docks``: by panel id) between the :data:`LAYOUTS`,
    remembering each in ``settings``."""

    def __init__(
        self, window: QMainWindow, docks: dict[str, QDockWidget], settings: QSettings
    ) -> None:
        super().__init__(window)
        self.window = window
        self.docks = docks
        self.settings = settings
        self.current = ""
        self.menu = QMenu("&Layout", window)
        self.menu.setObjectName("menuLayout")
        self.bar = QToolBar("Layouts", window)
        self.bar.setObjectName("layoutBar")
        self.bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.actions: dict[str, QAction] = {}
        #: The shares of the layout arranged last, until the window is on screen.
        self.sizes: tuple[list, list] = ([], [])
        #: The docks' parts of the window (width, height) to give them once it is shown.
        self.shares: dict[str, float] = {}
        self._reshare = QTimer(self)  # after a resize of the window, once it is laid out
        self._reshare.setSingleShot(True)
        self._reshare.setInterval(0)
        self._reshare.timeout.connect(lambda: self.give_shares(self.window.size()))
        window.installEventFilter(self)
        self._arranging = False  # (docks shown by a layout are sized by it)
        for panel_id in ASIDE.panels:
            if panel_id in docks:
                dock = docks[panel_id]
                dock.visibilityChanged.connect(lambda on, d=dock: self._aside_shown(d, on))
        group = QActionGroup(self)
        for i, layout in enumerate(LAYOUTS, 1):
            action = QAction(layout.title, self)
            action.setObjectName(f"actionLayout{layout.title}")
            action.setCheckable(True)
            action.setShortcut(QKeySequence(f"Ctrl+{i}"))
            action.setToolTip(f"{layout.title} layout: {layout.tip} (Ctrl+{i})")
            action.setStatusTip(layout.tip)
            action.triggered.connect(lambda _=False, lid=layout.id: self.use(lid))
            group.addAction(action)
            self.menu.addAction(action)
            self.bar.addAction(action)
            self.actions[layout.id] = action

    # --- switching -------------------------------------------------------------------------

    def use(self, layout_id: str) -> None:
        """Arrange the docks as ``layout_id`` was left (or as built, the first time)."""
        if layout_id == self.current:
            return
        if self.current:
            self.keep()
        self._reshare.stop()
        self.shares = {}
        self.current = layout_id
        saved = self.settings.value(f"layouts/{layout_id}")
        self._arranging = True
        try:
            restored = isinstance(saved, QByteArray)
            restored = restored and self.window.restoreState(saved, STATE_VERSION)
        finally:
            self._arranging = False
        if restored:
            self.shares = self._saved_shares(layout_id)
            if self.window.isVisible():
                self.give_shares(self.window.size())
        else:
            self.arrange(BY_ID[layout_id])
        self.actions[layout_id].setChecked(True)
        self.settings.setValue("layouts/current", layout_id)

    def keep(self) -> None:
        """Remember the current layout as the user left it."""
        if self.current:
            key = f"layouts/{self.current}"
            self.settings.setValue(key, self.window.saveState(STATE_VERSION))
            shares = self.measure(self.window.size()) if self.window.isVisible() else {}
            self.settings.setValue(f"{key}-shares", json.dumps(shares or self.shares))

    def measure(self, size: QSize) -> dict[str, float]:
        """Each dock area's part of a window of ``size`` (a side's of the width, the bottom's
        of the height), by one shown dock in it."""
        if size.width() <= 0 or size.height() <= 0:
            return {}
        widest: dict[Qt.DockWidgetArea, tuple[float, str]] = {}
        for panel_id, dock in self.docks.items():
            if not dock.isVisible() or dock.isFloating():
                continue
            area = self.window.dockWidgetArea(dock)
            across = area in (LEFT, RIGHT)
            part = dock.width() / size.width() if across else dock.height() / size.height()
            if part > widest.get(area, (0.0, ""))[0]:
                widest[area] = (part, panel_id)
        return {panel_id: part for part, panel_id in widest.values()}

    def give_shares(self, size: QSize) -> None:
        """Size the dock areas to :attr:`shares` of a window of ``size``."""
        shares, self.shares = self.shares, {}
        for panel_id, part in shares.items():
            dock = self.docks.get(panel_id)
            if dock is None or not isinstance(part, float) or dock.isFloating():
                continue
            if self.window.dockWidgetArea(dock) in (LEFT, RIGHT):
                extent, orientation = size.width(), Qt.Orientation.Horizontal
            else:
                extent, orientation = size.height(), Qt.Orientation.Vertical
            self.window.resizeDocks([dock], [int(part * extent)], orientation)

    def _saved_shares(self, layout_id: str) -> dict[str, float]:
        try:
            shares = json.loads(str(self.settings.value(f"layouts/{layout_id}-shares", "{}")))
        except ValueError:
            return {}
        return shares if isinstance(shares, dict) else {}

    def restore(self) -> None:
        """At start: the layout the window was closed in (else :data:`DEFAULT`)."""
        last = self.settings.value("layouts/current")
        self.use(last if isinstance(last, str) and last in BY_ID else DEFAULT)

    def reset(self) -> None:
        """The current layout as built (what the user changed in it is forgotten)."""
        self.settings.remove(f"layouts/{self.current}")
        self.settings.remove(f"layouts/{self.current}-shares")
        self.arrange(BY_ID[self.current or DEFAULT])

    def arrange(self, layout: TaskLayout) -> None:
        self._arranging = True
        try:
            self._arrange(layout)
        finally:
            self._arranging = False

    def _arrange(self, layout: TaskLayout) -> None:
        window, docks = self.window, self.docks
        shown = set(layout.panels())
        for panel_id, dock in docks.items():
            if panel_id not in shown:
                dock.hide()
                dock.setFloating(False)
        aside = [docks[p] for p in ASIDE.panels if p not in shown and p in docks]
        for dock in aside:  # (hidden: where they go when shown)
            window.addDockWidget(ASIDE.area, dock)
            dock.hide()
        for dock in aside[1:]:
            window.tabifyDockWidget(aside[0], dock)
            dock.hide()
        firsts: dict[str, QDockWidget] = {}
        across: list[tuple[QDockWidget, float, Qt.Orientation]] = []
        down: list[tuple[QDockWidget, QDockWidget, float]] = []
        for group in layout.groups:  # first the columns and rows (a split of a tab adds a tab)
            first = docks[group.panels[0]]
            first.setFloating(False)
            if group.below:
                window.splitDockWidget(firsts[group.below], first, Qt.Orientation.Vertical)
                down.append((firsts[group.below], first, group.share))
            else:
                window.addDockWidget(group.area, first)
                vertical = group.area == BOTTOM
                across.append(
                    (
                        first,
                        group.share,
                        Qt.Orientation.Vertical if vertical else Qt.Orientation.Horizontal,
                    )
                )
            firsts[group.panels[0]] = first
            first.show()
        for group in layout.groups:  # then the tabs behind them
            first = docks[group.panels[0]]
            for panel_id in group.panels[1:]:
                docks[panel_id].setFloating(False)
                window.tabifyDockWidget(first, docks[panel_id])
                docks[panel_id].show()
            docks[group.front or group.panels[0]].raise_()
        self.sizes = (across, down)
        if window.isVisible():
            self.resize_docks()

    def _aside_shown(self, dock: QDockWidget, shown: bool) -> None:
        """A dock of :data:`ASIDE` shown by the user where the layout has none: the strip
        it opens along the bottom takes the layout's share of the height (its body's size
        hint would take half the window)."""
        layout = BY_ID.get(self.current)
        if not shown or self._arranging or layout is None or not self.window.isVisible():
            return
        panel_id = next(p for p, d in self.docks.items() if d is dock)
        strip = [self.docks[p] for p in ASIDE.panels if p in self.docks]
        others = [d for d in strip if d is not dock and not d.isHidden()]
        if panel_id in layout.panels() or others or dock.isFloating():
            return
        size = int(self.window.height() * ASIDE.share)
        QTimer.singleShot(
            0, lambda: self.window.resizeDocks([dock], [size], Qt.Orientation.Vertical)
        )

    def resize_docks(self) -> None:
        """Give the docks of the layout just arranged their shares of the window (Qt sizes
        docks right only in a window on screen: the first show calls this again)."""
        across, down = self.sizes
        self.sizes = ([], [])
        window = self.window
        size = window.size()
        for dock, share, orientation in across:
            extent = size.height() if orientation == Qt.Orientation.Vertical else size.width()
            window.resizeDocks([dock], [int(extent * share)], orientation)
        for upper, lower, share in down:
            column = upper.height() + lower.height()
            window.resizeDocks(
                [upper, lower],
                [int(column * (1 - share)), int(column * share)],
                Qt.Orientation.Vertical,
            )

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is not self.window:
            return False
        if event.type() == QEvent.Type.Show:
            if self.sizes[0]:
                self.resize_docks()
            elif self.shares:
                self.give_shares(self.window.size())
        elif (
            isinstance(event, QResizeEvent)
            and self.window.isVisible()
            and event.oldSize().isValid()
            and not self.sizes[0]
        ):
            # (the docks still have their old sizes: the window lays out after this)
            if not self._reshare.isActive():  # (several resizes in a turn: the first size)
                self.shares = self.measure(event.oldSize())
            self._reshare.start()
        return False
