"""What the window tells the user in a message box: a failure (with *Open with the export
frontend* when symbolic tracing failed and export works), an edit that was not done, and
the offer to restore the work a crashed fxstudio left."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

from fxstudio.core.errors import UserError
from fxstudio.core.opening import OpenRequest


def show_error(
    parent: QWidget,
    title: str,
    exc: BaseException,
    open_request: Callable[[OpenRequest], None] | None = None,
) -> QMessageBox:
    """A non-modal message box for ``exc``: the first line of a user error as its text, the
    rest as the detail; an fxstudio bug says so."""
    box = QMessageBox(parent)
    alternative: Any = getattr(exc, "alternative", None)
    if isinstance(alternative, OpenRequest) and open_request is not None:
        button = box.addButton("Open with the export frontend", QMessageBox.ButtonRole.AcceptRole)
        button.clicked.connect(lambda: open_request(alternative))
        box.addButton(QMessageBox.StandardButton.Close)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    if isinstance(exc, UserError):
        head, _, rest = str(exc).partition("\n")
        box.setText(head)
        box.setInformativeText(rest)
    else:
        box.setText(f"fxstudio hit an internal error: {type(exc).__name__}: {exc}")
        box.setInformativeText("This is a bug in fxstudio; please report it.")
    box.open()
    return box


def show_refusal(parent: QWidget, text: str) -> None:
    """An edit (or another request) that was not done, and why."""
    QMessageBox.warning(parent, "Not done", text)


def ask_restore(parent: QWidget, recovery: Path) -> bool:
    """Offer the unsaved work a crashed fxstudio left in ``recovery``."""
    answer = QMessageBox.question(
        parent,
        "Restore unsaved work?",
        f"fxstudio quit unexpectedly and left unsaved work from "
        f"{time.ctime(recovery.stat().st_mtime)}. Restore it?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes
