"""Load Qt Designer forms shipped in ``fxstudio.ui`` into existing widgets; the small widget
makers the docks built in code share."""

from __future__ import annotations

import importlib.resources

from PySide6.QtCore import QFile, QIODevice, Qt
from PySide6.QtUiTools import QUiLoader
from PySide6.QtWidgets import QLabel, QWidget


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


def text_label(parent: QWidget, name: str) -> QLabel:
    """A wrapping label whose text can be selected and copied (a dock's readouts)."""
    label = QLabel(parent)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
