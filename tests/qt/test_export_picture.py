"""*File ▸ Export picture* of the whole graph as SVG and PDF: ``fxstudio render``'s drawing
of what the canvas shows -- its collapsed modules, vector, the text searchable, the SVG one
node group per node on the canvas; the PNG and the visible area stay the scene painted."""

from __future__ import annotations

from xml.etree import ElementTree

from pypdf import PdfReader

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
