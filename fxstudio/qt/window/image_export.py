"""Save the canvas picture as PNG or SVG (the whole graph or the visible area)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsScene

from fxstudio.core.saving.files import WriteError, atomic_path

MAX_PNG_SIDE = 16000  # pixels; a bigger picture is scaled down to fit


def export_image(scene: QGraphicsScene, path: str | Path, source: QRectF | None = None) -> Path:
    """Render ``source`` (default: everything) of ``scene`` to ``path`` (.png or .svg)."""
    out = Path(path)
    rect = source if source is not None else scene.itemsBoundingRect().adjusted(-20, -20, 20, 20)
    suffix = out.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise WriteError(f"Save the picture as .png or .svg, not '{out.suffix or out.name}'.")
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
