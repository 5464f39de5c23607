"""Load Qt Designer forms shipped in ``fxstudio.ui`` into existing widgets; the small widget
makers and layouts the docks built in code share (a wrapping row of buttons, a watcher that
rearranges a dock when it turns from a column into a strip)."""

from __future__ import annotations

import importlib.resources
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QEvent, QFile, QIODevice, QObject, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QFontMetricsF, QResizeEvent, QTextCursor, QTextDocument
from PySide6.QtUiTools import QUiLoader
from PySide6.QtWidgets import QFrame, QLabel, QLayout, QLayoutItem, QScrollArea, QWidget

#: Spaces a wrapped line of code goes on past its own indent (wrap_code_blocks).
WRAP_INDENT = 4

Child = TypeVar("Child", bound=QObject)


class _FormLoader(QUiLoader):
    """Builds a form's children into ``base`` instead of creating a new top-level widget."""

    def __init__(self, base: QWidget) -> None:
        super().__init__(base)
        self._base = base

    def createWidget(
        self, class_name: str, parent: QWidget | None = None, name: str = ""
    ) -> QWidget:  # noqa: N802
        if parent is None:
            return self._base
        return super().createWidget(class_name, parent, name)


def load_form(name: str, base: QWidget, custom: tuple[type[QWidget], ...] = ()) -> None:
    """Populate ``base`` from ``ui/<name>.ui``; children are found by ``objectName``.

    ``custom`` are the promoted widget classes the form uses (by class name).
    """
    resource = importlib.resources.files("fxstudio.ui") / f"{name}.ui"
    with importlib.resources.as_file(resource) as path:
        f = QFile(str(path))
        if not f.open(QIODevice.OpenModeFlag.ReadOnly):
            raise FileNotFoundError(f"cannot read the form {path}")
        try:
            loader = _FormLoader(base)
            for cls in custom:
                loader.registerCustomWidget(cls)
            if loader.load(f, None) is None:
                raise RuntimeError(f"cannot load the form {path}: {loader.errorString()}")
        finally:
            f.close()


def child(parent: QObject, cls: type[Child], name: str) -> Child:
    """The widget, layout or action ``name`` of the form loaded into ``parent``, a ``cls``
    (``LookupError`` if there is none: the .ui and the code disagree).  The attribute a class
    keeps it in is declared with the same class (``tests/qt/test_forms.py`` checks both
    against the .ui)."""
    found = parent.findChild(cls, name)
    if found is None:
        raise LookupError(f"the form has no {cls.__name__} named {name!r}")
    return found


class QuietLabel(QLabel):
    """A label that takes no room while it has nothing to say (a status line)."""

    def setText(self, text: str) -> None:  # noqa: N802
        super().setText(text)
        self.setVisible(bool(text))


def text_label(parent: QWidget, name: str, quiet: bool = False) -> QLabel:
    """A wrapping label whose text can be selected and copied (a dock's readouts);
    ``quiet``: hidden while empty (:class:`QuietLabel`)."""
    label = QuietLabel(parent) if quiet else QLabel(parent)
    if quiet:
        label.hide()
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class FlowLayout(QLayout):
    """Widgets in rows that wrap at the layout's width (a row of buttons that fits a narrow
    dock in two lines instead of forcing the dock wider)."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 4) -> None:
        super().__init__(parent)
        self.items: list[QLayoutItem] = []
        self._rows_height = 0  # the height of the rows as last laid out
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:  # noqa: N802
        self.items.append(item)

    def count(self) -> int:
        return len(self.items)

    def itemAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self.items[index] if 0 <= index < len(self.items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:  # noqa: N802
        return self.items.pop(index) if 0 <= index < len(self.items) else None

    def expandingDirections(self) -> Qt.Orientation:  # noqa: N802
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:  # noqa: N802
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        return self.place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:  # noqa: N802
        super().setGeometry(rect)
        height = self.place(rect, move=True)
        if height != self._rows_height:  # rows wrapped (or unwrapped) at this width: the
            self._rows_height = height  # layouts around ask again (a dock that keeps no
            self.invalidate()  # height for width would draw the next widget over them)

    def sizeHint(self) -> QSize:  # noqa: N802
        return self.minimumSize()

    def minimumSize(self) -> QSize:  # noqa: N802
        """The widest item, and as high as the rows are at the width the layout has."""
        size = QSize()
        for item in self.items:
            size = size.expandedTo(item.minimumSize())
        m = self.contentsMargins()
        size += QSize(m.left() + m.right(), m.top() + m.bottom())
        return size.expandedTo(QSize(0, self._rows_height))

    def place(self, rect: QRect, move: bool) -> int:
        """Lay the items out in ``rect`` (``move``: really); the height they take."""
        m = self.contentsMargins()
        area = rect.adjusted(m.left(), m.top(), -m.right(), -m.bottom())
        x, y, row = area.x(), area.y(), 0
        for item in self.items:
            widget = item.widget()
            if widget is not None and widget.isHidden():
                continue
            hint = item.sizeHint()
            if x > area.x() and x + hint.width() > area.right() + 1:
                x, y, row = area.x(), y + row + self.spacing(), 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + self.spacing()
            row = max(row, hint.height())
        return y + row - rect.y() + m.bottom()


class ShapeWatcher(QObject):
    """Calls ``arrange(shape)`` whenever ``widget`` changes shape (and once at first):
    ``"wide"`` -- at least ``ratio`` times as wide as it is tall and ``min_width`` pixels
    wide (a dock along the window's bottom: its parts side by side) --, ``"tall"`` (a column
    at least ``tall`` pixels high: its parts stacked) or ``"small"`` (a shorter column)."""

    def __init__(
        self,
        widget: QWidget,
        arrange: Callable[[str], None],
        ratio: float = 1.6,
        min_width: int = 720,
        tall: int = 460,
    ) -> None:
        super().__init__(widget)
        self.arrange, self.ratio, self.min_width, self.tall = arrange, ratio, min_width, tall
        self.shape: str | None = None
        widget.installEventFilter(self)
        self.follow(widget.width(), widget.height())

    def follow(self, width: int, height: int) -> None:
        if width >= self.min_width and width >= self.ratio * height:
            shape = "wide"
        else:
            shape = "tall" if height >= self.tall else "small"
        if shape != self.shape:
            self.shape = shape
            self.arrange(shape)
            widget = self.parent()
            layout = widget.layout() if isinstance(widget, QWidget) else None
            if layout is not None:
                layout.activate()  # laid out again now, not after the resize

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.Resize:
            if isinstance(event, QResizeEvent):
                self.follow(event.size().width(), event.size().height())
        return False


def wrap_code_blocks(document: QTextDocument) -> None:
    """Let the code blocks of Markdown shown in ``document`` wrap at the view's width (Qt
    keeps them on one line each: a horizontal scrollbar in a narrow dock).  A wrapped line
    goes on indented a step past its own indent, as an editor shows it, never at column 0."""
    cursor = QTextCursor(document)
    block = document.begin()
    while block.isValid():
        if block.blockFormat().nonBreakableLines():
            fmt = block.blockFormat()
            fmt.setNonBreakableLines(False)
            text = block.text()
            cursor.setPosition(block.position() + (1 if text else 0))  # (the first char's)
            space = QFontMetricsF(cursor.charFormat().font()).horizontalAdvance(" ")
            hang = (len(text) - len(text.lstrip(" ")) + WRAP_INDENT) * space
            fmt.setLeftMargin(fmt.leftMargin() + hang)
            fmt.setTextIndent(-hang)  # the first line where it was: its spaces indent it
            cursor.setBlockFormat(fmt)
        block = block.next()


class FitScrollArea(QScrollArea):
    """A frameless vertical scroll area that asks for the height of what it holds at its
    width (wrapped labels, a wrapping row of buttons), so a layout gives it just that and
    it scrolls only when there is less room."""

    def __init__(self, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(content)

    def sizeHint(self) -> QSize:  # noqa: N802
        content = self.widget()
        if content is None:  # (taken out: what an empty scroll area asks for)
            return super().sizeHint()
        hint = content.sizeHint()
        width = self.viewport().width() if self.isVisible() else hint.width()
        height = content.heightForWidth(width) if content.hasHeightForWidth() else -1
        return QSize(hint.width(), height if height >= 0 else hint.height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        content = self.widget()
        return QSize(content.minimumSizeHint().width() if content is not None else 0, 48)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the height it asks for follows its width


class DockScrollArea(QScrollArea):
    """A dock's body in a frameless scroll area that asks for little: a dock area's least
    height is the sum of its docks' (and a column's least width the widest dock's), so a
    body's own least size, added up, grew the window past the screen when a dock was
    shown.  Given less room than the body needs, the body scrolls instead; given more, it
    fills the dock as before."""

    def __init__(self, body: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dockScroll")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(body)

    def sizeHint(self) -> QSize:  # noqa: N802
        body = self.widget()  # (QScrollArea's is the body's first hint, capped: never again)
        return body.sizeHint() if body is not None else super().sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        body = self.widget()
        least = super().minimumSizeHint()  # (room for the scroll bars)
        return body.minimumSizeHint().boundedTo(least) if body is not None else least
