"""Light and dark: the colours of the canvas, the code view's highlight and the widgets.

The theme follows the system (``QStyleHints.colorScheme()`` and its change signal) unless the
user chose one (*View ▸ Theme*, kept in the window's settings).  The canvas reads its colours
from :func:`colors` when it paints, so a switch repaints what is on screen; the widgets get a dark
palette (or, for light, their style's standard one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QActionGroup, QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QMenu, QWidget

MODES = ("system", "light", "dark")


@dataclass(frozen=True)
class Colors:
    name: str
    canvas: str
    fills: dict[str, str]  # node fill by opcode
    borders: dict[str, str]  # node border by opcode
    fill: str  # an unknown opcode's
    border: str
    text: str  # a node's name
    subtext: str  # its target
    faint: str  # its shape
    port: str
    edge: str
    selected: str
    problem: str
    group_fill: str  # a collapsed module
    group_border: str
    group_text: str
    frame: str  # an expanded module's dashed frame
    frame_fill: tuple[int, int, int, int]
    frame_text: str
    stub_fill: str
    stub_border: str
    stub_text: str
    code_line: str  # the selected node's line in the code view
    syntax: tuple[str, str, str, str, str, str]  # keyword, name, def, number, string, comment
    good: str  # a verdict: passed, the same
    bad: str  # failed, different, NaN
    pending: str  # not yet


LIGHT = Colors(
    "light",
    canvas="#fafafa",
    fills={
        "placeholder": "#d1fae5",
        "get_attr": "#fef3c7",
        "call_function": "#dbeafe",
        "call_method": "#e0e7ff",
        "call_module": "#fce7f3",
        "output": "#e5e7eb",
    },
    borders={
        "placeholder": "#059669",
        "get_attr": "#d97706",
        "call_function": "#2563eb",
        "call_method": "#4f46e5",
        "call_module": "#db2777",
        "output": "#4b5563",
    },
    fill="#f3f4f6",
    border="#6b7280",
    text="#111827",
    subtext="#374151",
    faint="#6b7280",
    port="#ffffff",
    edge="#6b7280",
    selected="#f59e0b",
    problem="#dc2626",
    group_fill="#ede9fe",
    group_border="#7c3aed",
    group_text="#4c1d95",
    frame="#a78bfa",
    frame_fill=(245, 243, 255, 120),
    frame_text="#6d28d9",
    stub_fill="#f9fafb",
    stub_border="#9ca3af",
    stub_text="#374151",
    code_line="#fde68a",
    syntax=("#7c3aed", "#0369a1", "#b45309", "#047857", "#be123c", "#6b7280"),
    good="#2e7d32",
    bad="#c62828",
    pending="#9a6700",
)

DARK = Colors(
    "dark",
    canvas="#1c1c21",
    fills={
        "placeholder": "#064e3b",
        "get_attr": "#713f12",
        "call_function": "#1e3a8a",
        "call_method": "#312e81",
        "call_module": "#701a45",
        "output": "#374151",
    },
    borders={
        "placeholder": "#34d399",
        "get_attr": "#fbbf24",
        "call_function": "#60a5fa",
        "call_method": "#818cf8",
        "call_module": "#f472b6",
        "output": "#9ca3af",
    },
    fill="#27272a",
    border="#9ca3af",
    text="#f9fafb",
    subtext="#d1d5db",
    faint="#a1a1aa",
    port="#18181b",
    edge="#a1a1aa",
    selected="#f59e0b",
    problem="#f87171",
    group_fill="#2e1065",
    group_border="#a78bfa",
    group_text="#ddd6fe",
    frame="#7c3aed",
    frame_fill=(46, 16, 101, 90),
    frame_text="#c4b5fd",
    stub_fill="#27272a",
    stub_border="#71717a",
    stub_text="#e4e4e7",
    code_line="#713f12",
    syntax=("#c4b5fd", "#7dd3fc", "#fbbf24", "#6ee7b7", "#fda4af", "#a1a1aa"),
    good="#4ade80",
    bad="#f87171",
    pending="#fbbf24",
)

_current = LIGHT
_listeners: list[Callable[[], object]] = []


def colors() -> Colors:
    """The colours to paint with now."""
    return _current


def on_change(callback: Callable[[], object]) -> None:
    """Call ``callback()`` after every switch (caches of pens and pictures drop theirs)."""
    _listeners.append(callback)


def system_is_dark() -> bool:
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def dark_palette() -> QPalette:
    p = QPalette()
    roles = QPalette.ColorRole
    for role, colour in (
        (roles.Window, "#26262b"),
        (roles.WindowText, "#e4e4e7"),
        (roles.Base, "#1c1c21"),
        (roles.AlternateBase, "#26262b"),
        (roles.ToolTipBase, "#26262b"),
        (roles.ToolTipText, "#e4e4e7"),
        (roles.Text, "#e4e4e7"),
        (roles.Button, "#2f2f35"),
        (roles.ButtonText, "#e4e4e7"),
        (roles.BrightText, "#f87171"),
        (roles.Highlight, "#2563eb"),
        (roles.HighlightedText, "#ffffff"),
        (roles.Link, "#60a5fa"),
        (roles.PlaceholderText, "#71717a"),
        (roles.Mid, "#3f3f46"),
    ):
        p.setColor(role, QColor(colour))
    for role in (roles.Text, roles.WindowText, roles.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#71717a"))
    return p


def set_colors(dark: bool) -> None:
    """Switch the colours (and the application's palette) without a window (tests, export)."""
    global _current
    _current = DARK if dark else LIGHT
    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.setPalette(dark_palette() if dark else app.style().standardPalette())
    for callback in list(_listeners):
        callback()


class ThemeController(QObject):
    """*View ▸ Theme*: System (follows the desktop), Light, Dark; the choice is remembered."""

    changed = Signal(str)  # "light" or "dark": what caches colours draws again

    def __init__(self, window: QWidget, settings: QSettings) -> None:
        super().__init__(window)
        self.settings = settings
        mode = str(settings.value("view/theme", "system"))
        self.mode = mode if mode in MODES else "system"
        self.menu = menu = QMenu("&Theme", window)
        menu.setObjectName("menuTheme")
        group = QActionGroup(menu)
        self.actions: dict[str, QAction] = {}
        for m in MODES:
            action = QAction(m.title() if m != "system" else "Follow the system", menu)
            action.setObjectName(f"actionTheme{m.title()}")
            action.setCheckable(True)
            action.setChecked(m == self.mode)
            action.triggered.connect(lambda _on=False, m=m: self.choose(m))
            group.addAction(action)
            menu.addAction(action)
            self.actions[m] = action
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._system_changed)

    @property
    def dark(self) -> bool:
        return self.mode == "dark" or (self.mode == "system" and system_is_dark())

    def choose(self, mode: str) -> None:
        self.mode = mode
        self.actions[mode].setChecked(True)
        self.settings.setValue("view/theme", mode)
        self.apply()

    def _system_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self.mode == "system":
            self.apply()

    def apply(self) -> None:
        if colors().name != ("dark" if self.dark else "light") or self.mode != "system":
            set_colors(self.dark)
        self.changed.emit(colors().name)
