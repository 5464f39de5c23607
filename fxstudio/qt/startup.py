"""The window's start, before torch is imported: the application (:func:`application`) and a
``.pt2``'s first picture (:func:`show_first_picture`).

Importing torch and reading an exported program take seconds; a ``.pt2`` holds its graph as
JSON, read in milliseconds (:mod:`fxstudio.core.flows.picture`).  So ``fxstudio FILE.pt2``
draws that graph first, with the canvas's own items, in a window that stays live while the
editor is imported in a thread (:func:`import_meanwhile`); the main window replaces it once
its canvas is drawn (:func:`take_first_picture` hands it over to ``fxstudio.qt.app``).
Nothing here imports torch: a test checks it.
"""

from __future__ import annotations

import sys
import threading

from PySide6.QtCore import (
    QEventLoop,
    QObject,
    Qt,
    QTimer,
    QtMsgType,
    Signal,
    qInstallMessageHandler,
)
from PySide6.QtGui import QCloseEvent, QColor, QPainter, QWheelEvent
from PySide6.QtWidgets import QApplication, QGraphicsScene, QGraphicsView, QLabel, QMainWindow

from fxstudio.core.flows.picture import FirstPicture, first_picture
from fxstudio.qt import theme
from fxstudio.qt.canvas.items import EdgeItem, NodeItem, text_metrics
from fxstudio.qt.screen import fit_to_screen

_QUIET = ("This plugin does not support propagateSizeHints()",)
#: The window's first size, as the main window's first run has it.
START_SIZE = (1400, 860)


def _qt_messages(kind: QtMsgType, _context: object, message: str) -> None:
    """Drop the offscreen platform's harmless chatter; pass everything else to stderr."""
    if message in _QUIET:
        return
    if kind != QtMsgType.QtDebugMsg:
        print(f"qt: {message}", file=sys.stderr)


def application(argv: list[str] | None = None) -> QApplication:
    qInstallMessageHandler(_qt_messages)
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else sys.argv[:1])
        app.setApplicationName("fxstudio")
        app.setOrganizationName("fxstudio")
        app.setDesktopFileName(
            "io.github.fxstudio.fxstudio"
        )  # = the .desktop file (Wayland app id)
    assert isinstance(app, QApplication)
    return app


class _PictureView(QGraphicsView):
    """The first picture: panned by dragging, zoomed with the wheel."""

    def __init__(self, scene: QGraphicsScene) -> None:
        super().__init__(scene)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802
        factor = 1.2 if event.angleDelta().y() > 0 else 1 / 1.2
        if 0.02 <= self.transform().m11() * factor <= 8:
            self.scale(factor, factor)


class FirstPictureWindow(QMainWindow):
    """A ``.pt2``'s graph as its file holds it, shown while the editor loads; its status bar
    says so.  ``dismissed`` once the user closes it (the start then stops)."""

    def __init__(self, picture: FirstPicture) -> None:
        super().__init__()
        self.picture = picture
        self.dismissed = False
        self.handed_over = False
        self.setWindowTitle(f"{picture.title} — fxstudio")
        scene = QGraphicsScene(self)
        scene.setBackgroundBrush(QColor(theme.colors().canvas))
        items: dict[str, NodeItem] = {}
        for node in picture.nodes:
            box = picture.boxes[node.name]
            item = NodeItem(node.name, node.op, node.target, node.shape, box)
            item.setFlags(item.flags() & ~item.GraphicsItemFlag.ItemIsMovable)
            scene.addItem(item)
            items[node.name] = item
        inputs: dict[str, list[tuple[str, str]]] = {}
        for source, user, argument in picture.edges:
            inputs.setdefault(user, []).append((source, argument))
        for user, sources in inputs.items():
            for i, (source, argument) in enumerate(sources):
                edge = EdgeItem(items[source], items[user], [argument], (i, len(sources)))
                scene.addItem(edge)
        self.view = _PictureView(scene)
        self.setCentralWidget(self.view)
        self.status = QLabel(
            f"{len(picture.nodes):,} nodes read from the file in {picture.seconds:.2f} s; "
            "opening it for editing…"
        )
        self.statusBar().addWidget(self.status, 1)
        fit_to_screen(self, *START_SIZE)

    def first_view(self) -> None:
        """As the canvas's first view: all of it where that stays readable, else its top at
        a readable zoom, around the model's first input."""
        view = self.view
        rect = view.sceneRect().adjusted(-20, -20, 20, 20)
        view.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        if view.transform().m11() > 1.5:
            view.resetTransform()
            view.scale(1.5, 1.5)
        elif view.transform().m11() < 0.6:
            view.resetTransform()
            view.scale(0.85, 0.85)
            boxes = self.picture.boxes
            first = next((n.name for n in self.picture.nodes if n.op == "placeholder"), None)
            x = boxes[first].center[0] if first is not None else rect.center().x()
            view.centerOn(x, rect.top() + view.viewport().height() / 2 / 0.85)

    def hand_over(self) -> None:
        """The main window is shown: this one goes."""
        self.handed_over = True
        self.close()
        self.deleteLater()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        self.dismissed = not self.handed_over
        super().closeEvent(event)


_SHOWN: list[FirstPictureWindow] = []


def show_first_picture(path: str, png: str | None = None) -> FirstPictureWindow | None:
    """Draw the ``.pt2`` at ``path`` from its archive and show it; ``None`` where it cannot
    be read that way (the normal open goes on and says why).  With ``png``, write the first
    picture there once painted and close it (the start then stops: ``dismissed``)."""
    app = application()
    picture = first_picture(path, text_metrics())
    if picture is None or not picture.nodes:
        return None
    window = FirstPictureWindow(picture)
    window.show()
    window.first_view()
    if png is not None:
        QApplication.processEvents()
        saved = window.grab().save(png, "PNG")
        if not saved:
            print(
                f"fxstudio: error: cannot write the picture to {png}; check that the folder "
                "exists and is writable.",
                file=sys.stderr,
            )
        window.close()
        app.processEvents()
        return window
    _SHOWN.append(window)
    return window


def take_first_picture() -> FirstPictureWindow | None:
    """The first picture shown, for the main window to replace (once)."""
    return _SHOWN.pop() if _SHOWN else None


class _Done(QObject):
    done = Signal()


def import_meanwhile(modules: tuple[str, ...], window: FirstPictureWindow) -> None:
    """Import ``modules`` in a thread while ``window`` stays live (its events handled here).
    An import that fails is left for the main thread to repeat and report."""
    loop = QEventLoop()
    signal = _Done()
    signal.done.connect(loop.quit, Qt.ConnectionType.QueuedConnection)

    def work() -> None:
        try:
            import importlib

            for module in modules:
                importlib.import_module(module)
        except Exception:  # noqa: BLE001 - imported again, and reported, by the main thread
            pass
        finally:
            signal.done.emit()

    thread = threading.Thread(target=work, name="fxstudio-imports", daemon=True)
    QTimer.singleShot(0, thread.start)
    loop.exec()
    thread.join()
