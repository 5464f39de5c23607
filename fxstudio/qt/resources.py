"""Icons and other files from ``fxstudio.resources``, found through importlib.resources."""

from __future__ import annotations

import importlib.resources

from PySide6.QtGui import QIcon, QPixmap


def icon(name: str) -> QIcon:
    resource = importlib.resources.files("fxstudio.resources") / "icons" / name
    pixmap = QPixmap()
    pixmap.loadFromData(resource.read_bytes())
    return QIcon(pixmap)
