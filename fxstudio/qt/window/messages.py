"""What the window tells the user in a message box: a failure (with *Open with the export
frontend* when symbolic tracing failed and export works), an edit that was not done, and
the offer to restore the work a crashed fxstudio left (and where its crash log is)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QMessageBox, QWidget

from fxstudio.core.errors import UserError
from fxstudio.core.flows.save import LastCrash
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.wording import for_window
from fxstudio.qt.window.autosave import find_recoveries
from fxstudio.qt.window.session import DocumentSession


def show_error(
    parent: QWidget,
    title: str,
    exc: BaseException,
    open_request: Callable[[OpenRequest], object] | None = None,
) -> QMessageBox:
    """A non-modal message box for ``exc``: the first line of a user error as its text, the
    rest as the detail (its command-line options named as the window's places: see
    :func:`fxstudio.core.wording.for_window`); an fxstudio bug says so."""
    box = QMessageBox(parent)
    alternative: Any = getattr(exc, "alternative", None)
    if isinstance(alternative, OpenRequest) and open_request is not None:
        button = box.addButton("Open with the export frontend", QMessageBox.ButtonRole.AcceptRole)
        button.clicked.connect(lambda: open_request(alternative))
        box.addButton(QMessageBox.StandardButton.Close)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(title)
    if isinstance(exc, UserError):
        head, _, rest = for_window(str(exc)).partition("\n")
        box.setText(head)
        box.setInformativeText(rest)
    else:
        box.setText(f"fxstudio hit an internal error: {type(exc).__name__}: {exc}")
        box.setInformativeText("This is a bug in fxstudio; please report it.")
    box.open()
    return box


def show_refusal(parent: QWidget, text: str) -> None:
    """An edit (or another request) that was not done, and why."""
    QMessageBox.warning(parent, "Not done", for_window(text))


def ask_restore(parent: QWidget, recovery: Path, crash: LastCrash | None = None) -> bool:
    """Offer the unsaved work a crashed fxstudio left in ``recovery``."""
    said = f"{crash.describe()}\n\nIt" if crash is not None else "fxstudio quit unexpectedly and"
    answer = QMessageBox.question(
        parent,
        "Restore unsaved work?",
        f"{said} left unsaved work from {time.ctime(recovery.stat().st_mtime)}. Restore it?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
    )
    return answer == QMessageBox.StandardButton.Yes


def offer_recovery(window: Any, session: DocumentSession, crash: LastCrash | None) -> bool:
    """At start: say that the last run crashed (``crash``) and where its log is, and offer
    the work a crashed fxstudio left, if any; True if it is being restored."""
    found = find_recoveries(session.autosaver.directory)
    if not found:
        if crash is not None:
            window.statusBar().showMessage(crash.describe(), 30000)
            if window.interactive:
                QMessageBox.warning(window, "fxstudio closed unexpectedly", crash.describe())
        return False
    if not ask_restore(window, found[0], crash):
        return False
    session.restore(found[0])
    return True
