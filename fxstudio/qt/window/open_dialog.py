"""The Open dialog: a model spec (completed from the examples, the installed timm and
transformers, and the recent ones), how to capture it, its inputs and seed."""

from __future__ import annotations

import os

from PySide6.QtCore import QStringListModel, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QCompleter,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QInputDialog,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from fxstudio.core.modelspec import list_examples
from fxstudio.core.opening import OpenRequest
from fxstudio.qt.forms import load_form
from fxstudio.qt.workers import UserCodeTask

FRONTENDS = ("auto", "fx", "export")  # the frontend combo's items, in order


def completion_specs(recent: list[OpenRequest], zoo: list[str]) -> list[str]:
    """What the Model field completes, each spec once: the recent ones first (a recent
    ``timm:convnext_atto`` is also a timm name), then the examples, then the zoos' names."""
    specs = [r.spec for r in recent] + [f"examples:{n}" for n in list_examples()] + zoo
    return list(dict.fromkeys(specs))


def zoo_specs() -> list[str]:
    """``hf:`` model types and ``timm:`` names of the installed packages (importing timm
    and transformers takes seconds: call it off the GUI thread)."""
    from fxstudio.core.zoo import hf_model_types, timm_names

    return [f"hf:{t}" for t in hf_model_types()] + [f"timm:{n}" for n in timm_names()]


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
    def __init__(
        self,
        parent: QWidget | None = None,
        current: OpenRequest | None = None,
        recent: list[OpenRequest] | None = None,
    ) -> None:
        super().__init__(parent)
        load_form("open_dialog", self)
        self.example_combo = self.findChild(QComboBox, "exampleCombo")
        self.spec_edit = self.findChild(QLineEdit, "specEdit")
        self.frontend_combo = self.findChild(QComboBox, "frontendCombo")
        self.inputs_edit = self.findChild(QLineEdit, "inputsEdit")
        self.seed_spin = self.findChild(QSpinBox, "seedSpin")
        buttons = self.findChild(QDialogButtonBox, "buttonBox")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.findChild(QPushButton, "browseButton").clicked.connect(self._browse)
        self.recent = list(recent or [])
        self.example_combo.addItem("(choose a recent model or a built-in example)", None)
        for r in self.recent:
            self.example_combo.addItem(f"recent: {r.spec}", r)
        for name in list_examples():
            self.example_combo.addItem(name, OpenRequest(f"examples:{name}"))
        self.example_combo.currentIndexChanged.connect(self._example_chosen)
        # Completion: what is known at once now, the installed zoos when they are read.
        self.completions = QStringListModel(completion_specs(self.recent, []), self)
        completer = QCompleter(self.completions, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        completer.setMaxVisibleItems(15)
        self.spec_edit.setCompleter(completer)
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
        self.spec_edit.setText(request.spec)
        self.frontend_combo.setCurrentIndex(FRONTENDS.index(request.frontend))
        self.inputs_edit.setText(" ".join(request.inputs))
        self.seed_spin.setValue(request.seed)

    def _example_chosen(self, index: int) -> None:
        request = self.example_combo.itemData(index)
        if request is not None:
            self._fill(request)

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
        if path.endswith((".pt2", ".fxstudio")):
            self.spec_edit.setText(path)
            return
        name, ok = QInputDialog.getText(
            self,
            "Model name",
            "Name of the nn.Module class or factory function in the file:",
            text="Model",
        )
        if ok and name:
            self.spec_edit.setText(f"{path}:{name.strip()}")

    def request(self) -> OpenRequest:
        return OpenRequest(
            self.spec_edit.text().strip(),
            FRONTENDS[self.frontend_combo.currentIndex()],  # type: ignore[arg-type]
            tuple(self.inputs_edit.text().split()),
            self.seed_spin.value(),
        )
