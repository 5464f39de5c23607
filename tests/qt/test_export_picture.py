"""*File ▸ Export picture* of the whole graph as SVG and PDF: ``fxstudio render``'s drawing
of what the canvas shows -- its collapsed modules, vector, the text searchable, the SVG one
node group per node on the canvas; the PNG and the visible area stay the scene painted."""

from __future__ import annotations

import json
import zipfile
from xml.etree import ElementTree

from pypdf import PdfReader
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox

from fxstudio.qt.window import report_export
from tests.qt.conftest import open_and_wait

SVG = "{http://www.w3.org/2000/svg}"


def test_the_whole_graph_as_svg_and_pdf_is_the_canvas_as_shown(qtbot, window, tmp_path):
    open_and_wait(qtbot, window, "examples:resnet", signal="layoutShown")
    with qtbot.waitSignal(window.layoutShown, timeout=60000):
        window.document.set_collapsed("layer1", True)  # as a double-click on its frame
    scene = window.canvas.scene()
    assert window.saving.export_image(tmp_path / "g.svg")
    root = ElementTree.parse(tmp_path / "g.svg").getroot()
    nodes = {g.get("data-name") for g in root.iter(f"{SVG}g") if g.get("class") == "node"}
    assert nodes == set(scene.nodes)  # what the canvas draws, layer1 as one box
    assert root.get("data-collapsed") == "layer1"
    assert window.saving.export_image(tmp_path / "g.pdf")
    words = set(PdfReader(tmp_path / "g.pdf").pages[0].extract_text().split())
    assert set(scene.nodes) <= words
    # a PDF of the visible area is refused (nothing written); its PNG is the scene's
    assert not window.saving.export_image(tmp_path / "part.pdf", visible_only=True)
    assert not (tmp_path / "part.pdf").exists()
    assert window.saving.export_image(tmp_path / "part.png", visible_only=True)


def _answer_save_dialog(qtbot, name_filter: str, path) -> list[str]:
    """The next save dialog (Qt's own: offscreen has no native one) answered with the type
    ``name_filter`` chosen in its box and ``path`` typed; returns the types it offered."""
    offered: list[str] = []

    def answer():
        chooser = QApplication.activeModalWidget()
        assert isinstance(chooser, QFileDialog), chooser
        offered.extend(chooser.nameFilters())
        chooser.selectNameFilter(name_filter)
        chooser.selectFile(str(path))
        chooser.accept()

    QTimer.singleShot(0, answer)
    return offered


def test_the_name_typed_chooses_the_pictures_format_whatever_the_type_box_says(
    qtbot, window, tmp_path
):
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    export = window.action("actionExportImage")
    offered = _answer_save_dialog(qtbot, "PNG image, whole graph (*.png)", tmp_path / "net.svg")
    export.trigger()
    assert "PDF document, whole graph (*.pdf)" in offered
    assert not (tmp_path / "net.svg.png").exists()
    root = ElementTree.parse(tmp_path / "net.svg").getroot()  # an SVG, not a PNG so named
    assert root.tag == f"{SVG}svg" and root.get("data-nodes") == str(len(window.document))
    # a name without an extension, or with one no picture has, gets the chosen type's
    _answer_save_dialog(qtbot, "PDF document, whole graph (*.pdf)", tmp_path / "net.v2")
    export.trigger()
    assert (tmp_path / "net.v2.pdf").read_bytes().startswith(b"%PDF")
    _answer_save_dialog(qtbot, "SVG drawing, visible area (*.svg)", tmp_path / "part.png")
    export.trigger()  # the visible area, as a PNG
    assert (tmp_path / "part.png").read_bytes().startswith(b"\x89PNG")


def test_every_save_dialog_takes_the_names_extension_as_its_format(
    qtbot, window, tmp_path, monkeypatch
):
    open_and_wait(qtbot, window, "examples:negrelu", signal="layoutShown")
    offered = _answer_save_dialog(
        qtbot, "Standalone Python module, weights beside it (*.py)", tmp_path / "net.pt2"
    )
    with qtbot.waitSignal(window.saving.exported, timeout=120000) as saved:
        window.action("actionSavePython").trigger()
    assert "torch.export program (*.pt2)" in offered
    assert [p.name for p in saved.args[0].paths] == ["net.pt2"]
    assert zipfile.is_zipfile(tmp_path / "net.pt2") and not (tmp_path / "net.pt2.py").exists()
    _answer_save_dialog(qtbot, "fxstudio session (*.fxstudio)", tmp_path / "work")
    window.action("actionSaveSessionAs").trigger()
    assert json.loads((tmp_path / "work.fxstudio").read_text())  # the suffix a session needs
    (tmp_path / "r.html").write_text("kept")  # "r" + the added suffix exists: asked first
    asked: list[str] = []
    no = QMessageBox.StandardButton.No
    monkeypatch.setattr(QMessageBox, "question", lambda _w, _t, text, *a: asked.append(text) or no)
    _answer_save_dialog(qtbot, "HTML report (*.html *.htm)", tmp_path / "r")
    assert report_export.export_report(window) is None
    assert asked == [f"r.html already exists in {tmp_path}. Replace it?"]
    assert (tmp_path / "r.html").read_text() == "kept"
