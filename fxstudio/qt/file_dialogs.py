"""Save dialogs whose file name and file type agree: every *Save …* and *Export …* of the window
asks through :func:`ask_save_path`.

The name's extension chooses the type: ``net.svg`` typed while the file-type box says PNG is
an SVG called ``net.svg`` (not a PNG called ``net.svg.png``); a name with no extension, or
one none of the dialog's types saves, gets the chosen type's.  Where that added extension
names a file that exists, the user is asked before it is replaced (the dialog asked about the
name typed, not this one).

Example:
    >>> png, svg = FileType("PNG image", (".png",)), FileType("SVG drawing", (".svg",))
    >>> path, kind = agreed("net.svg", (png, svg), png)
    >>> path.name, kind.label
    ('net.svg', 'SVG drawing')
    >>> agreed("net.v2", (png, svg), png)[0].name
    'net.v2.png'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

__all__ = ["JSON_TYPE", "FileType", "agreed", "ask_save_path"]


@dataclass(frozen=True)
class FileType:
    """One entry of a save dialog's file-type box: its ``label``, the ``suffixes`` it saves
    (the first is added to a name without one) and ``kind``: what the caller makes of it (a
    format, or the part of the canvas a picture shows)."""

    label: str
    suffixes: tuple[str, ...]
    kind: str = ""

    @property
    def name_filter(self) -> str:
        """As the dialog's box shows it: ``PNG image (*.png)``."""
        return f"{self.label} ({' '.join('*' + s for s in self.suffixes)})"

    def saves(self, suffix: str) -> bool:
        return suffix.lower() in self.suffixes


#: What most results are saved as.
JSON_TYPE = FileType("JSON", (".json",))


def agreed(typed: str | Path, types: Sequence[FileType], chosen: FileType) -> tuple[Path, FileType]:
    """The file and the type a save dialog's answer means: a name whose extension one of
    ``types`` saves is of that type -- the ``chosen`` one when it saves it too, else one of
    the same ``kind`` (a picture of the visible area stays one), else the first; any other
    name gets the chosen type's first suffix added."""
    path = Path(typed)
    suffix = path.suffix
    if chosen.saves(suffix):
        return path, chosen
    savers = [t for t in types if t.saves(suffix)]
    if savers:
        return path, next((t for t in savers if t.kind == chosen.kind), savers[0])
    return path.with_name(path.name + chosen.suffixes[0]), chosen


def ask_save_path(
    parent: QWidget | None,
    title: str,
    suggested: str | Path,
    types: Sequence[FileType],
    chosen: FileType | None = None,
) -> tuple[Path, FileType] | None:
    """Ask where to save (the file-type box offering ``types``, ``chosen`` selected); the
    file and type the answer means (:func:`agreed`), or None when the user cancels -- or
    declines to replace a file the added extension names."""
    chosen = chosen or types[0]
    name, picked = QFileDialog.getSaveFileName(
        parent,
        title,
        str(suggested),
        ";;".join(t.name_filter for t in types),
        chosen.name_filter,
    )
    if not name:
        return None
    selected = next((t for t in types if t.name_filter == picked), chosen)
    path, kind = agreed(name, types, selected)
    if path != Path(name) and path.exists():
        answer = QMessageBox.question(
            parent,
            "Replace the file?",
            f"{path.name} already exists in {path.parent}. Replace it?",
        )
        if answer != QMessageBox.StandardButton.Yes:
            return None
    return path, kind
