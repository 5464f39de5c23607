"""*Help ▸ About*: the versions of everything fxstudio runs on, and *Copy system info* for a
bug report."""

from __future__ import annotations

import platform
import shutil
import subprocess

import PySide6
import torch
from PySide6.QtCore import qVersion
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from fxstudio import __version__


def graphviz_version() -> str:
    dot = shutil.which("dot")
    if dot is None:
        return "not found (dot is not on PATH)"
    try:
        done = subprocess.run([dot, "-V"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({exc})"
    text = (done.stderr or done.stdout).strip()
    return text.split("version", 1)[-1].strip() if "version" in text else text


def system_info() -> str:
    """One line per component, as a bug report wants them."""
    import pygraphviz

    cuda = torch.version.cuda or "none (CPU build)"
    devices = (
        ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        if torch.cuda.is_available()
        else "none"
    )
    return "\n".join(
        [
            f"fxstudio {__version__}",
            f"torch {torch.__version__} (CUDA {cuda}; GPUs: {devices})",
            f"PySide6 {PySide6.__version__}, Qt {qVersion()}",
            f"Python {platform.python_version()} ({platform.python_implementation()})",
            f"graphviz {graphviz_version()}, pygraphviz {pygraphviz.__version__}",
            f"{platform.system()} {platform.release()} {platform.machine()}",
        ]
    )


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About fxstudio")
        self.setObjectName("aboutDialog")
        layout = QVBoxLayout(self)
        title = QLabel(
            f"<b>fxstudio {__version__}</b><p>A desktop editor for PyTorch torch.fx graphs.</p>"
            "<p>Opening a model file runs its code.</p>",
            self,
        )
        layout.addWidget(title)
        self.info = QPlainTextEdit(system_info(), self)
        self.info.setObjectName("aboutInfo")
        self.info.setReadOnly(True)
        self.info.setMinimumSize(460, 130)
        layout.addWidget(self.info)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.copy_button = QPushButton("Copy system info", self)
        self.copy_button.setObjectName("aboutCopy")
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.copy_button.clicked.connect(self.copy)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def copy(self) -> None:
        QApplication.clipboard().setText(self.info.toPlainText())
