"""Icons and other files from ``fxstudio.resources``, found through importlib.resources."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from PySide6.QtGui import QIcon, QPixmap


def icon(name: str) -> QIcon:
    """An icon from ``resources/icons``: an SVG file is drawn at the size and device pixel
    ratio asked for (sharp at 125-200 %); anything else, or a zipped install, as a pixmap."""
    resource = importlib.resources.files("fxstudio.resources") / "icons" / name
    if isinstance(resource, Path) and resource.is_file():
        return QIcon(str(resource))
    pixmap = QPixmap()
    pixmap.loadFromData(resource.read_bytes())
    return QIcon(pixmap)
