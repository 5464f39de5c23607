"""The Open dialog: pick an example, a file or an importable model, and how to capture it."""

from __future__ import annotations

import os

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QInputDialog,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from fxstudio.core.loading import list_examples
from fxstudio.core.session import OpenRequest
from fxstudio.qt.forms import load_form


class OpenDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, current: OpenRequest | None = None) -> None:
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
        self.example_combo.addItem("(choose a built-in example)", "")
        for name in list_examples():
            self.example_combo.addItem(name, f"examples:{name}")
        self.example_combo.currentIndexChanged.connect(self._example_chosen)
        if current is not None:
            self.spec_edit.setText(current.spec)
            self.frontend_combo.setCurrentIndex(1 if current.frontend == "export" else 0)
            self.inputs_edit.setText(" ".join(current.inputs))
            self.seed_spin.setValue(current.seed)

    def _example_chosen(self, index: int) -> None:
        spec = self.example_combo.itemData(index)
        if spec:
            self.spec_edit.setText(spec)

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
        frontend = "export" if self.frontend_combo.currentIndex() == 1 else "fx"
        return OpenRequest(
            self.spec_edit.text().strip(),
            frontend,
            tuple(self.inputs_edit.text().split()),
            self.seed_spin.value(),
        )
