"""The Open dialog: a model spec (completed from the examples, the installed timm and
transformers, and the recent ones), how to capture it, its inputs and seed, and whether to
open its structure only (no weights: any size, nothing to run).

How to capture, the inputs and *Structure only* belong to a model: they follow the spec
typed (a recent model's own, else *auto*, none and with weights) unless the user chose them
here.  A model file offers the models it defines to pick from.  What can be told without
running the model (a typo, a missing file or name, a bad input) is said in the dialog, which
stays open with what was typed."""

from __future__ import annotations

import os
from typing import Literal

from PySide6.QtCore import QEvent, QObject, QStringListModel, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QCheckBox,
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from fxstudio.core.errors import InputSpecError, LoadError
from fxstudio.core.flows.open import (
    FileModels,
    check_request,
    file_models,
    list_examples,
    zoo_specs,
)
from fxstudio.core.graph.request import Frontend, OpenRequest
from fxstudio.qt.forms import child, load_form
from fxstudio.qt.workers import UserCodeTask

#: The frontend combo's items, in order.
FRONTENDS: tuple[Frontend | Literal["auto"], ...] = ("auto", "fx", "export")


def completion_specs(recent: list[OpenRequest], zoo: list[str]) -> list[str]:
    """What the Model field completes, each spec once: the recent ones first (a recent
    ``timm:convnext_atto`` is also a timm name), then the examples, then the zoos' names."""
    specs = [r.spec for r in recent] + [f"examples:{n}" for n in list_examples()] + zoo
    return list(dict.fromkeys(specs))


_zoo: dict[str, object] = {}  # "task": the one reading them, "specs": what it read


def zoo_reader() -> UserCodeTask:
    """The task that reads :func:`zoo_specs` once per process (a daemon thread: quitting
    never waits for it); its result is kept for every later dialog (a failed read is tried
    again by the next)."""
    task = _zoo.get("task")
    if not isinstance(task, UserCodeTask):
        task = UserCodeTask(zoo_specs)
        task.succeeded.connect(lambda specs: _zoo.__setitem__("specs", specs))
        task.finished.connect(lambda: _zoo.pop("task", None))  # it deletes itself
        _zoo["task"] = task
        task.start()
    return task


class OpenDialog(QDialog):
    """``current``: the request it starts with; ``typed``: the user typed it (a failed
    open), so its frontend and inputs stay when the spec is corrected."""

    example_combo: QComboBox
    spec_edit: QLineEdit
    file_model_combo: QComboBox
    frontend_combo: QComboBox
    inputs_edit: QLineEdit
    seed_spin: QSpinBox
    structure_check: QCheckBox  # Structure only: OpenRequest.weights=False
    error_label: QLabel
    form: QFormLayout

    def __init__(
        self,
        parent: QWidget | None = None,
        current: OpenRequest | None = None,
        recent: list[OpenRequest] | None = None,
        typed: bool = False,
    ) -> None:
        super().__init__(parent)
        load_form("open_dialog", self)
        self.example_combo = child(self, QComboBox, "exampleCombo")
        self.spec_edit = child(self, QLineEdit, "specEdit")
        self.file_model_combo = child(self, QComboBox, "fileModelCombo")
        self.frontend_combo = child(self, QComboBox, "frontendCombo")
        self.inputs_edit = child(self, QLineEdit, "inputsEdit")
        self.seed_spin = child(self, QSpinBox, "seedSpin")
        self.structure_check = child(self, QCheckBox, "structureCheck")
        self.error_label = child(self, QLabel, "errorLabel")
        self.form = child(self, QFormLayout, "formLayout")
        buttons = child(self, QDialogButtonBox, "buttonBox")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        child(self, QPushButton, "browseButton").clicked.connect(self._browse)
        self.recent = list(recent or [])
        # Each model's own frontend and inputs: the recent ones, the newest winning.
        self.known = {r.spec: r for r in reversed(self.recent)}
        if current is not None and not typed:
            self.known[current.spec] = current
        self.chosen: set[str] = {"frontend", "inputs", "weights"} if typed else set()
        self._filling = False
        self._file: tuple[str, FileModels] | None = None  # the file the spec names, read
        self.example_combo.addItem("(choose a recent model or a built-in example)", None)
        for r in self.recent:
            self.example_combo.addItem(f"recent: {r.spec}", r)
        for name in list_examples():
            self.example_combo.addItem(name, OpenRequest(f"examples:{name}"))
        self.example_combo.currentIndexChanged.connect(self._example_chosen)
        self.frontend_combo.activated.connect(lambda _i: self.chosen.add("frontend"))
        self.inputs_edit.textEdited.connect(lambda _t: self.chosen.add("inputs"))
        self.structure_check.clicked.connect(lambda _on: self.chosen.add("weights"))
        self.inputs_edit.textEdited.connect(lambda _t: self.error_label.clear())
        self.spec_edit.textChanged.connect(self._spec_changed)
        self.file_model_combo.activated.connect(self._file_model_chosen)
        self.form.setRowVisible(self.file_model_combo, False)
        # Completion: what is known at once now, the installed zoos when they are read.
        self.completions = QStringListModel(completion_specs(self.recent, []), self)
        completer = QCompleter(self.completions, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setMaxVisibleItems(15)
        self.spec_edit.setCompleter(completer)
        # (after the completer's own filter, which closes the popup and eats the click)
        popup = completer.popup()
        if popup is not None:  # (a completer always has one)
            popup.installEventFilter(self)
        known = _zoo.get("specs")
        if isinstance(known, list):
            self._zoo_read(known)
        else:
            zoo_reader().succeeded.connect(self._zoo_read)
        if current is not None:
            self._fill(current)

    def _zoo_read(self, specs: list[str]) -> None:
        self.completions.setStringList(completion_specs(self.recent, specs))

    def _fill(self, request: OpenRequest) -> None:
        self._filling = True
        try:
            self.spec_edit.setText(request.spec)
            self.frontend_combo.setCurrentIndex(FRONTENDS.index(request.frontend))
            self.inputs_edit.setText(" ".join(request.inputs))
            self.seed_spin.setValue(request.seed)
            self.structure_check.setChecked(not request.weights)
        finally:
            self._filling = False

    def _example_chosen(self, index: int) -> None:
        request = self.example_combo.itemData(index)
        if request is not None:
            self.chosen.clear()  # a recent model's or example's own settings
            self._fill(request)

    def _spec_changed(self, text: str) -> None:
        """Another model: its own frontend, inputs and *Structure only* (a recent one's,
        else *auto*, none and with weights) unless the user chose them here; a model file's
        models offered."""
        self.error_label.clear()
        if not self._filling:
            known = self.known.get(text.strip())
            if "frontend" not in self.chosen:
                frontend = known.frontend if known is not None else "auto"
                self.frontend_combo.setCurrentIndex(FRONTENDS.index(frontend))
            if "inputs" not in self.chosen:
                self.inputs_edit.setText(" ".join(known.inputs) if known is not None else "")
            if "weights" not in self.chosen:
                self.structure_check.setChecked(known is not None and not known.weights)
        self._offer_file_models(text.strip())

    def _offer_file_models(self, spec: str) -> None:
        path, name = file_and_name(spec)
        found = None
        if path and os.path.isfile(os.path.expanduser(path)):
            if self._file is None or self._file[0] != path:
                self._file = (path, file_models(os.path.expanduser(path)))
            found = self._file[1]
        names = found.names if found is not None else []
        combo = self.file_model_combo
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(names)
        combo.setCurrentIndex(names.index(name) if name in names else -1)
        combo.blockSignals(False)
        self.form.setRowVisible(combo, bool(names))
        if found is not None and not name and found.to_choose():
            self.show_problem(
                f"{os.path.basename(path)} defines {len(names)} models ({found.choices()}): "
                "choose one under Model in file."
            )

    def _file_model_chosen(self, index: int) -> None:
        path, _name = file_and_name(self.spec_edit.text().strip())
        if path and index >= 0:
            self.spec_edit.setText(f"{path}:{self.file_model_combo.itemText(index)}")

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self,
            "Open model file",
            os.getcwd(),
            "Models and sessions (*.py *.pt2 *.fxstudio);;Python files (*.py);;"
            "Exported programs (*.pt2);;fxstudio sessions (*.fxstudio)",
        )
        if not path:
            return
        if not path.endswith(".py"):
            self.spec_edit.setText(path)
            return
        found = file_models(path)
        several = bool(found.to_choose())
        name = found.obvious or (found.names[0] if found.names else "")
        self.spec_edit.setText(path if several else f"{path}:{name}")  # several: asked which
        if found.problem:
            self.show_problem(f"{found.problem}.")
        elif not found.names:
            self.show_problem(
                f"{os.path.basename(path)} defines no nn.Module class or function that "
                "returns one: after the colon, type the name of the function that builds "
                "the model."
            )
            self.spec_edit.setFocus()
        elif len(found.names) > 1:
            self.file_model_combo.setFocus()

    def show_problem(self, text: str) -> None:
        self.error_label.setText(text)

    def accept(self) -> None:
        """Open, unless what can be told now is wrong: then say it here, and stay."""
        request = self.request()
        try:
            if not request.spec:
                raise LoadError("Type a model, or choose a recent one or an example.")
            check_request(request)
        except (LoadError, InputSpecError) as exc:
            self.show_problem(str(exc))
            (self.inputs_edit if isinstance(exc, InputSpecError) else self.spec_edit).setFocus()
            return
        super().accept()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        """A click outside the completion list closes it and still does what it clicks
        (Qt's completer takes the click only to close its list: Open needed two).  Return
        in the list opens the completion chosen (or, none chosen, what was typed): Qt's
        completer took the first Return only to complete.  A click fills it in, no more."""
        completer = self.spec_edit.completer()
        popup = completer.popup()
        if (
            watched is popup
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            chosen = popup.currentIndex()
            popup.hide()
            if chosen.isValid():
                self.spec_edit.setText(str(chosen.data(completer.completionRole())))
            self.accept()
            return True
        if (
            watched is popup
            and event.type() == QEvent.Type.MouseButtonPress
            and isinstance(event, QMouseEvent)
            and not popup.rect().contains(event.position().toPoint())
        ):
            target = QApplication.widgetAt(event.globalPosition().toPoint())
            if isinstance(target, QAbstractButton) and self.isAncestorOf(target):
                popup.hide()
                if target.isEnabled():
                    target.click()
                return True
        return super().eventFilter(watched, event)

    def request(self) -> OpenRequest:
        return OpenRequest(
            self.spec_edit.text().strip(),
            FRONTENDS[self.frontend_combo.currentIndex()],
            tuple(self.inputs_edit.text().split()),
            self.seed_spin.value(),
            weights=not self.structure_check.isChecked(),
        )


def file_and_name(spec: str) -> tuple[str, str]:
    """``model.py:Net`` -> ``("model.py", "Net")``, ``model.py`` -> ``("model.py", "")``;
    ``("", "")`` for a spec that names no Python file."""
    if spec.endswith(".py"):
        return spec, ""
    head, sep, name = spec.rpartition(":")
    return (head, name) if sep and head.endswith(".py") else ("", "")
