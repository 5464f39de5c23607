"""``fxstudio render`` headless, as a user meets its files: the SVG opens as XML with the
nodes drawn, the PDF holds the text (read back by pypdf, as a reader would), the PNG is an
image of the picture's size; bad input is said plainly and writes nothing."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest
from pypdf import PdfReader

from fxstudio import cli
from fxstudio.core.flows import open_document
from fxstudio.core.flows.layout import top_level_groups
from tests.conftest import run_fxstudio

SVG = "{http://www.w3.org/2000/svg}"


def drawn_names(path) -> list[str]:
    root = ElementTree.parse(path).getroot()
    return [g.get("data-name") for g in root.iter(f"{SVG}g") if g.get("class") == "node"]


def test_svg_pdf_and_png_of_one_picture(tmp_path, capsys):
    svg, pdf, png = (tmp_path / f"resnet.{s}" for s in ("svg", "pdf", "png"))
    doc = open_document("examples:resnet")
    for out in (svg, pdf, png):
        assert cli.main(["render", "examples:resnet", "-o", str(out)]) == 0
    said = capsys.readouterr()
    assert f"drew {len(doc)} of {len(doc)} nodes" in said.out and f"wrote {png}" in said.err
    assert sorted(drawn_names(svg)) == sorted(doc.node_names())
    root = ElementTree.parse(svg).getroot()
    width, height = float(root.get("width")), float(root.get("height"))
    # the PDF: one page the picture's size (1 px = 0.75 pt), every node's name as text
    reader = PdfReader(pdf)
    assert len(reader.pages) == 1
    page = reader.pages[0]
    assert float(page.mediabox.width) == pytest.approx(width * 0.75, abs=1)
    assert float(page.mediabox.height) == pytest.approx(height * 0.75, abs=1)
    words = set(page.extract_text().split())
    assert set(doc.node_names()) <= words
    assert reader.metadata.title == "fxstudio: examples:resnet"
    # the PNG: two pixels per point of the drawing, and not blank
    from PySide6.QtGui import QImage

    image = QImage(str(png))
    assert (image.width(), image.height()) == (round(width * 2), round(height * 2))
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, 400, 7)}
    assert len(colours) > 10


def test_collapse_expanded_json_and_a_memory_heat(tmp_path, capsys):
    out, data = tmp_path / "t.svg", tmp_path / "t.json"
    args = ["render", "examples:resnet", "-o", str(out), "--collapse", "layer1"]
    assert cli.main([*args, "--collapse", "layer2.0", "--heat", "memory", "--json", str(data)]) == 0
    assert "heat by memory" in capsys.readouterr().out
    summary = json.loads(data.read_text())
    assert summary["collapsed"] == 2 and summary["drawn_nodes"] == len(drawn_names(out))
    assert summary["heat"]["kind"] == "memory" and summary["heat"]["top"][0]["label"]
    root = ElementTree.parse(out).getroot()
    boxes = {
        g.get("data-module") for g in root.iter(f"{SVG}g") if g.get("class") == "group collapsed"
    }
    assert boxes == {"layer1", "layer2.0"}
    assert any(r.get("class") == "heat" for r in root.iter(f"{SVG}rect"))
    # a session keeps the view it was saved with; --expanded draws every node all the same
    assert cli.main(["render", "examples:resnet", "-o", str(out), "--expanded", "--force"]) == 0
    assert len(drawn_names(out)) == len(open_document("examples:resnet"))


def test_a_big_model_opens_collapsed_as_in_the_window(tmp_path):
    spec = "hf:gpt2(n_layer=6, n_embd=64, n_head=4, n_positions=64, vocab_size=128)"
    out = tmp_path / "g.svg"
    assert cli.main(["render", spec, "-o", str(out)]) == 0
    root = ElementTree.parse(out).getroot()
    collapsed = set(root.get("data-collapsed").split(","))
    folded = {
        m
        for g in root.iter(f"{SVG}g")
        if g.get("data-fold")
        for m in g.get("data-members").split(",")
    }
    assert len(folded) == 6  # the six identical blocks: one box, ×6
    assert top_level_groups(open_document(spec)) <= collapsed | folded
    assert len(drawn_names(out)) < 20


def test_a_diff_heat_against_a_baseline(tmp_path, write_model, capsys):
    out = tmp_path / "d.svg"
    args = ["render", "examples:negrelu", "-o", str(out), "--against", "examples:simple"]
    assert cli.main(args) == 0
    assert "heat by diff" in capsys.readouterr().out
    root = ElementTree.parse(out).getroot()
    tags = [g for g in root.iter(f"{SVG}g") if g.get("class") == "heat-tag"]
    assert tags


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-o", "{tmp}/out.jpg"], "Cannot write a picture as '.jpg'"),
        (["-o", "{tmp}/missing/out.svg"], "does not exist"),
        (["-o", "{tmp}/a-file/out.png"], "is not a folder"),
        (["-o", "{tmp}/out.pdf", "--collapse", "layer9"], "No module 'layer9'"),
        (["-o", "{tmp}/out.svg", "--heat", "diff"], "--against BASE"),
        (["-o", "{tmp}/out.svg", "--against", "examples:simple", "--heat", "memory"], "baseline"),
    ],
)
def test_bad_input_is_said_and_writes_nothing(tmp_path, capsys, args, said):
    (tmp_path / "a-file").write_text("not a folder")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    argv = ["render", "examples:resnet", *(a.replace("{tmp}", str(tmp_path)) for a in args)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_an_existing_picture_is_kept_without_force(tmp_path, capsys):
    out = tmp_path / "g.svg"
    out.write_text("mine")
    assert cli.main(["render", "examples:simple", "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and out.read_text() == "mine"
    assert cli.main(["render", "examples:simple", "-o", str(out), "--force"]) == 0
    assert drawn_names(out)


def test_headless_in_a_real_process_without_a_display(tmp_path):
    out = tmp_path / "g.pdf"
    env = {"DISPLAY": "", "WAYLAND_DISPLAY": "", "QT_QPA_PLATFORM": ""}
    proc = run_fxstudio("render", "examples:negrelu", "-o", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    assert {"neg", "relu", "add", "mul"} <= set(PdfReader(out).pages[0].extract_text().split())


def test_the_picture_has_the_canvas_colours_and_fonts(qapp):
    """The SVG's palette (Qt-free) is the canvas's light theme, its font widths the canvas's
    fonts measured here -- the picture matches the window."""
    from PySide6.QtGui import QFont, QFontInfo

    from fxstudio.core.share.palette import LIGHT, METRICS
    from fxstudio.qt import theme
    from fxstudio.qt.canvas.items import text_metrics

    family = QFontInfo(QFont()).family()
    if family != "DejaVu Sans" or qapp.primaryScreen().logicalDotsPerInch() != 96:
        pytest.skip(f"the canvas's font here is {family}, not the one measured (DejaVu Sans)")

    canvas = theme.LIGHT
    for key, value in LIGHT.items():
        assert getattr(canvas, key) == value, key
    measured = text_metrics()
    assert measured.bold == METRICS.bold and measured.plain == METRICS.plain
