"""Saving, from the window's menus: the session file (asking for a name when it has none),
the model in other formats (in a worker thread, editing locked meanwhile), the canvas as a
picture, and asking before unsaved changes are lost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox

from fxstudio.core.errors import UserError
from fxstudio.core.flows import ExportResult, export
from fxstudio.core.flows.save import DESCRIPTIONS, weights_path
from fxstudio.core.graph.request import SESSION_SUFFIX
from fxstudio.qt.file_dialogs import FileType, ask_save_path
from fxstudio.qt.window.image_export import export_image
from fxstudio.qt.workers import Task

#: The model's formats, each dialog offering them all (the menu's selected): a name typed
#: with another's extension saves in that format.
MODEL_TYPES = (
    FileType("Standalone Python module, weights beside it", (".py",), "py"),
    FileType("Generated forward code", (".py",), "code"),
    FileType("TorchScript", (".pt",), "torchscript"),
    FileType("torch.export program", (".pt2",), "pt2"),
    FileType("ONNX", (".onnx",), "onnx"),
)
SESSION_TYPES = (FileType("fxstudio session", (SESSION_SUFFIX,)),)
#: The picture: its format, and what of the canvas it shows (``kind``).
PICTURE_TYPES = (
    FileType("PNG image, whole graph", (".png",), "whole"),
    FileType("SVG drawing, whole graph", (".svg",), "whole"),
    FileType("PDF document, whole graph", (".pdf",), "whole"),
    FileType("PNG image, visible area", (".png",), "visible"),
    FileType("SVG drawing, visible area", (".svg",), "visible"),
)


class SaveController(QObject):
    """File ▸ Save … / Export for ``window``.  Signals: ``exported(ExportResult)``,
    ``exportFailed(exception)``; ``error(title, exception)`` for the window to show.

    ``extras()`` gives what else a saved session holds (the lesson's state)."""

    exported = Signal(object)
    exportFailed = Signal(object)  # noqa: N815
    error = Signal(str, object)

    def __init__(self, window: Any, extras: Callable[[], dict[str, Any]]) -> None:
        super().__init__(window)
        self.window = window
        self.session = window.session
        self.extras = extras
        self.task: Task | None = None
        # every command that replaces the document asks this first (DocumentSession.replace)
        self.session.may_replace = self.maybe_save_changes

    # --- the session file ----------------------------------------------------------------

    def save_session(self, path: str | Path | None = None, ask: bool = False) -> bool:
        """Write the session (asking for a name when it has none); True when written."""
        if self.session.document is None:
            return False
        target = Path(path) if path else None if ask else self.session.path
        if target is None:
            chosen = ask_save_path(
                self.window, "Save session", self.session.suggest(SESSION_SUFFIX), SESSION_TYPES
            )
            if chosen is None:
                return False
            target = chosen[0]
        try:
            self.session.save(target, **self.extras())
        except UserError as exc:
            self.error.emit("Could not save the session", exc)
            return False
        return True

    def ask_save_changes(self) -> QMessageBox.StandardButton:
        """Ask whether to save unsaved changes (Save, Discard or Cancel)."""
        buttons = (
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel
        )
        return QMessageBox.question(
            self.window,
            "Unsaved changes",
            "The document has changes that no session file holds. Save them first?",
            buttons,
            QMessageBox.StandardButton.Save,
        )

    def maybe_save_changes(self) -> bool:
        """True when it is fine to drop the document (saved, discarded or unchanged)."""
        if not self.session.modified:
            return True
        if not self.window.interactive:  # nobody to ask: keep the work in the recovery file
            self.session.autosave_pending = True
            self.window.keep_recovery = self.session.autosaver.save_now()
            return True
        answer = self.ask_save_changes()
        if answer == QMessageBox.StandardButton.Save:
            return self.save_session()
        return answer == QMessageBox.StandardButton.Discard

    # --- other formats -------------------------------------------------------------------

    def export_dialog(self, fmt: str) -> None:
        """Ask for a file name, then save the model in ``fmt`` -- or the format whose extension
        the name typed has -- in a worker thread."""
        if self.session.document is None:
            return
        kind = next(t for t in MODEL_TYPES if t.kind == fmt)
        chosen = ask_save_path(
            self.window,
            f"Save {DESCRIPTIONS[fmt]}",
            self.session.suggest(kind.suffixes[0]),
            MODEL_TYPES,
            kind,
        )
        if chosen is None:
            return
        path, fmt = chosen[0], chosen[1].kind
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
        doc = self.session.document
        self.session.lock(f"{path.name} is being saved; edit once it is written.")
        self.session.status.emit(f"Saving {path}…", 0)
        self.session.busy.emit(True)

        def start() -> None:
            task = Task(lambda: export(doc, path, fmt, force=True), self)
            task.succeeded.connect(self._exported)
            task.failed.connect(lambda exc: self._export_failed(path, exc))
            self.task = task
            task.start()

        self.session.catch_up.when_idle(start)

    def _exported(self, result: ExportResult) -> None:
        self.task = None
        self.session.unlock()
        self.session.busy.emit(False)
        names = ", ".join(p.name for p in result.paths)
        note = f" — {result.notes[0]}" if result.notes else ""
        self.session.status.emit(f"Saved {names}{note}", 10000)
        self.exported.emit(result)

    def _export_failed(self, path: Path, exc: BaseException) -> None:
        self.task = None
        self.session.unlock()
        self.session.busy.emit(False)
        self.session.status.emit(f"Could not save {path.name}.", 10000)
        self.error.emit(f"Could not save {path.name}", exc)
        self.exportFailed.emit(exc)

    # --- the picture ---------------------------------------------------------------------

    def export_image_dialog(self) -> None:
        """Ask where, and in which format (the name's extension says it), then save the
        picture."""
        if self.session.document is None:
            return
        chosen = ask_save_path(
            self.window, "Export picture", self.session.suggest(".png"), PICTURE_TYPES
        )
        if chosen is not None:
            self.export_image(chosen[0], visible_only=chosen[1].kind == "visible")

    def export_image(self, path: Path, visible_only: bool = False) -> bool:
        """Save the canvas picture (PNG, SVG or PDF by suffix); True when written."""
        canvas = self.window.canvas
        area = canvas.mapToScene(canvas.viewport().rect()).boundingRect() if visible_only else None
        try:
            export_image(canvas.scene(), path, area, self.session.document)
        except UserError as exc:
            self.error.emit(f"Could not save {path.name}", exc)
            return False
        self.session.status.emit(f"Saved {path}", 10000)
        return True
