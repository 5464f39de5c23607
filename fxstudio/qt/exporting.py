"""Saving the model in other formats and the canvas as a picture, from the window's menus:
the file dialogs, the worker thread that writes (editing locked meanwhile), the messages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMessageBox

from fxstudio.core.errors import UserError
from fxstudio.core.export import DESCRIPTIONS, ExportResult, export, weights_path
from fxstudio.qt.image_export import export_image
from fxstudio.qt.workers import Task

_EXPORT_FILTERS = {
    "py": (".py", "Python module (*.py)"),
    "code": (".py", "Python file (*.py)"),
    "torchscript": (".pt", "TorchScript (*.pt)"),
    "pt2": (".pt2", "torch.export program (*.pt2)"),
    "onnx": (".onnx", "ONNX (*.onnx)"),
}


class ExportController(QObject):
    """File ▸ Save as … / Export: for ``window`` (a MainWindow), which emits ``exported``."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window

    def export_dialog(self, fmt: str) -> None:
        """Ask for a file name, then save the model in ``fmt`` in a worker thread."""
        if self.window.document is None:
            return
        suffix, filt = _EXPORT_FILTERS[fmt]
        chosen, _ = QFileDialog.getSaveFileName(
            self.window, f"Save {DESCRIPTIONS[fmt]}", self.window._suggest(suffix), filt
        )
        if not chosen:
            return
        path = Path(chosen if chosen.endswith(suffix) else chosen + suffix)
        if fmt == "py" and weights_path(path).exists() and not path.exists():
            answer = QMessageBox.question(
                self.window,
                "Replace the weights file?",
                f"{weights_path(path).name} already exists. Replace it with this model's weights?",
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
        self.export_to(path, fmt)

    def export_to(self, path: Path, fmt: str) -> None:
        """Save in a worker thread (the file dialog has already confirmed any overwrite).

        The worker reads the document, so edits wait until the file is written; a big
        graph's code and shapes are brought up to date first.
        """
        doc = self.window.document
        self.window._lock_editing(f"{path.name} is being saved; edit once it is written.")
        self.window.status_bar.showMessage(f"Saving {path}…")
        self.window._busy(True)
        self.window._cancel.hide()

        def start() -> None:
            task = Task(lambda: export(doc, path, fmt, force=True), self)
            task.succeeded.connect(self._exported)
            task.failed.connect(lambda exc: self._export_failed(path, exc))
            task.finished.connect(task.deleteLater)
            self.window._save_task = task
            task.start()

        self.window.catch_up.when_idle(start)

    def _exported(self, result: ExportResult) -> None:
        self.window._unlock_editing()
        self.window._busy(False)
        names = ", ".join(p.name for p in result.paths)
        note = f" — {result.notes[0]}" if result.notes else ""
        self.window.status_bar.showMessage(f"Saved {names}{note}", 10000)
        self.window.exported.emit(result)

    def _export_failed(self, path: Path, exc: BaseException) -> None:
        self.window._unlock_editing()
        self.window._busy(False)
        self.window.status_bar.showMessage(f"Could not save {path.name}.", 10000)
        self.window._error(f"Could not save {path.name}", exc)
        self.window.exportFailed.emit(exc)

    def export_image_dialog(self) -> None:
        if self.window.document is None:
            return
        chosen, chosen_filter = QFileDialog.getSaveFileName(
            self.window,
            "Export picture",
            self.window._suggest(".png"),
            "PNG image, whole graph (*.png);;SVG drawing, whole graph (*.svg);;"
            "PNG image, visible area (*.png);;SVG drawing, visible area (*.svg)",
        )
        if not chosen:
            return
        suffix = ".svg" if "SVG" in chosen_filter else ".png"
        path = Path(chosen if chosen.lower().endswith(suffix) else chosen + suffix)
        visible = "visible" in chosen_filter
        self.export_image(path, visible_only=visible)

    def export_image(self, path: Path, visible_only: bool = False) -> bool:
        """Save the canvas picture (PNG or SVG by suffix); True when written."""
        area = None
        if visible_only:
            area = self.window.canvas.mapToScene(
                self.window.canvas.viewport().rect()
            ).boundingRect()
        try:
            export_image(self.window.canvas.scene(), path, area)
        except UserError as exc:
            self.window._error(f"Could not save {path.name}", exc)
            return False
        self.window.status_bar.showMessage(f"Saved {path}", 10000)
        return True
