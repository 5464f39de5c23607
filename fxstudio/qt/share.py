"""A picture's SVG (:mod:`fxstudio.core.flows.render`'s) written as SVG, PDF or PNG: Qt's SVG
renderer paints it onto a PDF page (vector, the text kept as text: searchable, sharp) or an
image.  Used by ``fxstudio render`` (headless: :func:`ensure_gui` starts an offscreen Qt when
there is none) and the window's *File ▸ Export picture*.

Example:
    >>> import pathlib, tempfile
    >>> svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" '
    ...        'viewBox="0 0 40 20"><text x="2" y="14">relu</text></svg>')
    >>> _ = ensure_gui()
    >>> out = write_picture(svg, pathlib.Path(tempfile.mkdtemp()) / "g.png")
    >>> from PySide6.QtGui import QImage
    >>> QImage(str(out)).size().toTuple()
    (80, 40)
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QMarginsF, QRectF, QSizeF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QImage,
    QPageSize,
    QPainter,
    QPdfWriter,
)
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

from fxstudio.core.process.files import WriteError, atomic_path, atomic_write

__all__ = ["MAX_PDF_POINTS", "MAX_PNG_PIXELS", "MAX_PNG_SIDE", "ensure_gui", "write_picture"]

MAX_PNG_SIDE = 16000  # pixels; a bigger picture is scaled down to fit (as the window's export)
MAX_PNG_PIXELS = 64_000_000  # (256 MB of image): scaled down to fit too
#: A PDF page's side at most (200 inches: what PDF readers open); a bigger one is scaled.
MAX_PDF_POINTS = 14400.0


def ensure_gui() -> QGuiApplication:
    """The running Qt application, or a new offscreen one (no display needed) -- what
    drawing text needs (fonts).  A QApplication, so that widgets may come later (tests)."""
    app = QGuiApplication.instance()
    if app is None:
        if not os.environ.get("QT_QPA_PLATFORM"):  # (a platform the user chose is kept)
            os.environ["QT_QPA_PLATFORM"] = "offscreen"  # no window is shown: no display needed
        app = QApplication(["fxstudio"])
    assert isinstance(app, QGuiApplication)
    return app


def _renderer(svg: str) -> QSvgRenderer:
    renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
    if not renderer.isValid():
        raise WriteError("The picture's SVG could not be read by Qt; nothing was written.")
    renderer.setAspectRatioMode(Qt.AspectRatioMode.KeepAspectRatio)
    return renderer


def write_picture(
    svg: str, path: str | os.PathLike[str], scale: float = 2.0, title: str = "fxstudio graph"
) -> Path:
    """``svg`` written to ``path`` by its suffix: ``.svg`` as it is, ``.pdf`` one page the
    picture's size (1 px = 0.75 pt; scaled down past :data:`MAX_PDF_POINTS`), ``.png``
    ``scale`` pixels per SVG pixel (scaled down past :data:`MAX_PNG_SIDE` or
    :data:`MAX_PNG_PIXELS`).  Written atomically; a failure leaves nothing behind."""
    out = Path(path)
    suffix = out.suffix.lower()
    if suffix == ".svg":
        atomic_write(out, svg)
        return out
    if suffix not in (".pdf", ".png"):
        raise WriteError(f"Save the picture as .svg, .pdf or .png, not '{out.suffix or out.name}'.")
    ensure_gui()
    renderer = _renderer(svg)
    size = renderer.viewBoxF().size()
    w, h = max(size.width(), 1.0), max(size.height(), 1.0)
    with atomic_path(out) as tmp:
        if suffix == ".pdf":
            _pdf(renderer, tmp, w, h, title)
        else:
            _png(renderer, tmp, w, h, scale)
    return out


def _unshaped() -> QFont:
    """The font the SVG's text starts from: no ligatures, so that "flatten" is written (and
    found in a PDF) as f-l-a-t-t-e-n, not with the "ﬂ" ligature."""
    font = QFont()
    font.setStyleStrategy(QFont.StyleStrategy.PreferNoShaping)
    return font


def _pdf(renderer: QSvgRenderer, tmp: Path, w: float, h: float, title: str) -> None:
    fit = min(1.0, MAX_PDF_POINTS / (max(w, h) * 0.75))
    page = QSizeF(w * 0.75 * fit, h * 0.75 * fit)
    writer = QPdfWriter(str(tmp))
    writer.setCreator("fxstudio")
    writer.setTitle(title)
    writer.setResolution(72)  # a device unit is a point
    writer.setPageSize(
        QPageSize(page, QPageSize.Unit.Point, "", QPageSize.SizeMatchPolicy.ExactMatch)
    )
    writer.setPageMargins(QMarginsF(0, 0, 0, 0))
    painter = QPainter()
    if not painter.begin(writer):
        raise WriteError(f"Could not start a PDF at {tmp.parent}.")
    try:
        painter.setFont(_unshaped())
        renderer.render(painter, QRectF(0, 0, page.width(), page.height()))
    finally:
        painter.end()


def _png(renderer: QSvgRenderer, tmp: Path, w: float, h: float, scale: float) -> None:
    scale = min(scale, MAX_PNG_SIDE / max(w, h), (MAX_PNG_PIXELS / (w * h)) ** 0.5)
    image = QImage(max(1, round(w * scale)), max(1, round(h * scale)), QImage.Format.Format_ARGB32)
    if image.isNull():
        raise WriteError("Not enough memory for the picture; write it as .svg or .pdf instead.")
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
    painter.setFont(_unshaped())
    renderer.render(painter, QRectF(image.rect()))
    painter.end()
    if not image.save(str(tmp), "PNG"):  # type: ignore[call-overload]  # (takes str)
        raise WriteError(f"Could not encode the picture as PNG for {tmp.name}.")
