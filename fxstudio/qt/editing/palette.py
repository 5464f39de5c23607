"""The insert palette: search torch functions, ``torch.nn.functional``, Tensor methods, ``nn``
modules and the model's weights; the chosen entry is inserted by the edit controller."""

from __future__ import annotations

import builtins

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QWidget,
)

from fxstudio.core.flows.edit import Entry, search
from fxstudio.qt.forms import child, load_form

SHOWN = 400  # list at most this many matches (the catalogue has about 1,600 entries)


class InsertPalette(QDialog):
    filter_edit: QLineEdit
    list: QListWidget
    arguments_edit: QLineEdit

    def __init__(
        self, entries: builtins.list[Entry], where: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        load_form("insert_palette", self)
        self.entries = entries
        self.filter_edit = child(self, QLineEdit, "filterEdit")
        self.list = child(self, QListWidget, "entryList")
        self.arguments_edit = child(self, QLineEdit, "argumentsEdit")
        child(self, QLabel, "whereLabel").setText(where)
        buttons = child(self, QDialogButtonBox, "buttonBox")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.filter_edit.textChanged.connect(self.refilter)
        self.filter_edit.returnPressed.connect(self._return)
        self.list.itemDoubleClicked.connect(lambda _item: self.accept())
        self.refilter("")

    def refilter(self, text: str) -> None:
        self.list.clear()
        for entry in search(self.entries, text)[:SHOWN]:
            item = QListWidgetItem(f"{entry.text}    — {entry.kind}")
            item.setData(Qt.ItemDataRole.UserRole, entry)
            self.list.addItem(item)
        if self.list.count():
            self.list.setCurrentRow(0)

    def _return(self) -> None:
        if self.list.count():
            self.arguments_edit.setFocus()

    def chosen(self) -> Entry | None:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else None

    def arguments(self) -> str:
        return self.arguments_edit.text()
