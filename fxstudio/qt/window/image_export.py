"""Save the canvas picture as PNG, SVG or PDF (the whole graph or the visible area).

The whole graph as SVG or PDF is ``fxstudio render``'s drawing of the document as the canvas
shows it (its collapsed modules, the user's moves): vector, the text kept as text
(searchable), the SVG structured by node, module and edge (:mod:`fxstudio.core.flows.render`,
written by :mod:`fxstudio.qt.share`).  A PNG, and the visible area, are the scene itself
painted -- what is on screen, overlays included.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsScene

from fxstudio.core.flows.render import RenderRequest, render_flow
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.process.files import WriteError, atomic_path
from fxstudio.qt.share import write_picture

MAX_PNG_SIDE = 16000  # pixels; a bigger picture is scaled down to fit


def export_image(
    scene: QGraphicsScene,
    path: str | Path,
    source: QRectF | None = None,
    document: GraphDocument | None = None,
) -> Path:
    """Render ``source`` (default: everything) of ``scene`` to ``path`` (.png, .svg or
    .pdf); the whole of ``document`` as SVG or PDF is its drawing (see above)."""
    out = Path(path)
    suffix = out.suffix.lower()
    if suffix not in (".png", ".svg", ".pdf"):
        raise WriteError(f"Save the picture as .png, .svg or .pdf, not '{out.suffix or out.name}'.")
    if suffix == ".pdf" or (suffix == ".svg" and source is None and document is not None):
        if document is None or source is not None:
            raise WriteError("A PDF is of the whole graph: save the visible area as PNG or SVG.")
        result = render_flow(RenderRequest(document, as_shown=True))
        return write_picture(result.svg, out, title=f"fxstudio: {document.request.spec}")
    rect = source if source is not None else scene.itemsBoundingRect().adjusted(-20, -20, 20, 20)
    with atomic_path(out) as tmp:
        if suffix == ".svg":
            generator = QSvgGenerator()
            generator.setFileName(str(tmp))
            generator.setSize(QSize(int(rect.width()), int(rect.height())))
            generator.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
            generator.setTitle("fxstudio graph")
            painter = QPainter(generator)
            scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
            painter.end()
        else:
            scale = min(2.0, MAX_PNG_SIDE / max(rect.width(), rect.height(), 1.0))
            image = QImage(
                max(1, int(rect.width() * scale)),
                max(1, int(rect.height() * scale)),
                QImage.Format.Format_ARGB32,
            )
            image.fill(QColor("white"))
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
            scene.render(painter, QRectF(image.rect()), rect, Qt.AspectRatioMode.KeepAspectRatio)
            painter.end()
            if not image.save(str(tmp), "PNG"):  # type: ignore[call-overload]  # (takes str)
                raise WriteError(f"Could not encode the picture for {out}.")
    return out
