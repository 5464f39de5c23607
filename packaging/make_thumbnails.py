"""Draw the welcome page's thumbnails of the built-in examples (resources/examples/thumbs):
each example opened in the real window, its canvas rendered.  Run after changing an example:

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/make_thumbnails.py
"""

import sys
import tempfile
from pathlib import Path

from PySide6.QtCore import QEventLoop, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication

WIDTH, HEIGHT = 480, 320  # the image (the welcome page shows it at 240x160: sharp at 200 %)
VIEW_W, VIEW_H = 540, 360  # the part of the scene every thumbnail shows: the same zoom for all
OUT = Path(__file__).resolve().parent.parent / "resources" / "examples" / "thumbs"


def shown(scene) -> QRectF:
    """The part of the graph a thumbnail shows, the same way for every example: VIEW_W x
    VIEW_H of the scene around the graph's nodes, centred; a graph taller than that from its
    inputs (the top down)."""
    graph = QRectF()
    for item in scene.nodes.values():
        graph = graph.united(item.sceneBoundingRect())
    left = graph.center().x() - VIEW_W / 2
    top = graph.center().y() - VIEW_H / 2 if graph.height() <= VIEW_H - 10 else graph.top() - 10
    return QRectF(left, top, VIEW_W, VIEW_H)


def main() -> int:
    app = QApplication(sys.argv)  # noqa: F841 - kept alive while the window draws
    from fxstudio.core.graph.request import OpenRequest
    from fxstudio.core.model.modelspec import list_examples
    from fxstudio.qt.window.main_window import MainWindow

    window = MainWindow(interactive=False, autosave_s=0, recovery=Path(tempfile.mkdtemp()))
    OUT.mkdir(parents=True, exist_ok=True)
    for name in list_examples():
        loop = QEventLoop()
        window.layoutShown.connect(loop.quit)
        window.session.loadFailed.connect(loop.quit)
        window.session.open(OpenRequest(f"examples:{name}"))
        QTimer.singleShot(120000, loop.quit)
        loop.exec()
        window.layoutShown.disconnect(loop.quit)
        window.session.loadFailed.disconnect(loop.quit)
        if window.document is None or window.document.request.spec != f"examples:{name}":
            print(f"{name}: does not trace (the gallery shows it without a picture)")
            continue
        scene = window.canvas.scene()
        rect = shown(scene)
        image = QImage(WIDTH, HEIGHT, QImage.Format.Format_ARGB32)
        image.fill(QColor("#fafafa"))
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        scene.render(painter, QRectF(0, 0, WIDTH, HEIGHT), rect, Qt.AspectRatioMode.KeepAspectRatio)
        painter.end()
        image.save(str(OUT / f"{name}.png"))
        print(f"{name}: {OUT / (name + '.png')}")
        window.session.set_document(None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
