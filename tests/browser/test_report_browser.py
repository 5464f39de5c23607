"""The report in a real browser (Chromium through Playwright): it opens with no console error
and asks for nothing but itself, draws every node, a module collapses on a click on its frame
and expands on a click on its box, a node's click shows its details, the view pans and zooms,
the heat tints the nodes, and a diff report colours what was removed, added and changed and
rings the first divergence."""

from __future__ import annotations

import pytest

from fxstudio import cli
from fxstudio.core.flows import RewriteRequest, RewriteSpec, open_document, rewrite_flow
from fxstudio.core.flows.report import ReportRequest, report_flow
from fxstudio.core.flows.save import save_session
from fxstudio.core.share.picturelayout import picture

MAIN = ".fx-pane[data-pane=main]"


@pytest.fixture(scope="module")
def session_report(tmp_path_factory):
    """A session with a rewrite (resnet, fold-conv-bn), reported with its memory."""
    folder = tmp_path_factory.mktemp("report")
    doc = open_document("examples:resnet")
    rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    save_session(doc, folder / "folded.fxstudio")
    result = report_flow(ReportRequest(str(folder / "folded.fxstudio"), memory=True))
    result.write(folder / "report.html")
    return folder / "report.html", doc


def test_the_report_opens_offline_and_draws_every_node(session_report, open_report):
    path, doc = session_report
    opened = open_report(path)
    page = opened.page
    assert opened.errors == []
    assert opened.requests and all(u.startswith(("file:", "data:")) for u in opened.requests)
    assert opened.refused == []
    drawn = page.locator(f"{MAIN} g.node")
    assert drawn.count() == len(doc) == 54 - 15  # the batch norms folded away
    names = set(page.eval_on_selector_all(f"{MAIN} g.node", "els => els.map(e => e.dataset.name)"))
    assert names == {n.name for n in doc.graph.nodes}
    assert page.locator(f"{MAIN} g.node[data-name=layer1_0_conv1]").is_visible()
    history = page.locator("#history").inner_text()
    assert "fold-conv-bn (15 matches)" in history and "Check passed" in history


def test_clicking_a_module_collapses_it_and_clicking_its_box_expands_it(
    session_report, open_report
):
    page = open_report(session_report[0]).page
    group = page.locator(f'{MAIN} g.group[data-module="layer1"]')
    member = page.locator(f"{MAIN} g.node[data-name=layer1_0_conv1]")
    visible = "els => els.filter(e => e.getBoundingClientRect().width > 0).length"
    before = page.eval_on_selector_all(f"{MAIN} g.node", visible)
    group.locator(":scope > text.title").click()
    assert "fx-collapsed" in (group.get_attribute("class") or "")
    assert not member.is_visible()
    box = group.locator(":scope > g.fx-box")
    assert box.is_visible() and "layer1 — 10 nodes" in (box.text_content() or "")
    assert page.eval_on_selector_all(f"{MAIN} g.node", visible) == before - 10
    inside = page.locator(f"{MAIN} g.edge[data-from=layer1_0_conv1][data-to=layer1_0_relu]")
    assert not inside.is_visible()
    box.click()
    assert "fx-collapsed" not in (group.get_attribute("class") or "")
    assert member.is_visible() and inside.is_visible()
    assert page.eval_on_selector_all(f"{MAIN} g.node", visible) == before


def test_a_collapsed_module_is_a_box_as_on_the_canvas_and_the_graph_closes_up(
    session_report, open_report
):
    """Not an empty box of the expanded size: the canvas's box of a collapsed module (its
    size, its label), what was below it moved up to it, the edges into it ending at it."""
    path, doc = session_report
    page = open_report(path).page

    def frame(module):
        return page.locator(f'{MAIN} g.group[data-module="{module}"] > rect.frame').bounding_box()

    stem, layer1, layer2 = frame("stem"), frame("layer1"), frame("layer2")
    group = page.locator(f'{MAIN} g.group[data-module="layer1"]')
    group.locator(":scope > text.title").click()
    box = group.locator(":scope > g.fx-box > rect")
    size = box.evaluate("r => { const b = r.getBBox(); return [b.width, b.height]; }")
    canvas = picture(doc, {"layer1"}).groups["layer1"]  # the canvas's layout, layer1 collapsed
    assert size == pytest.approx([canvas.w, canvas.h], abs=0.01)
    assert group.locator(":scope > g.fx-box > text").text_content() == "▸ layer1 : Sequential"
    shown = box.bounding_box()
    assert (
        shown["height"] < layer1["height"] / 10
        and not group.locator(":scope > rect.frame").is_visible()
    )
    above = shown["y"] - (stem["y"] + stem["height"])  # the gaps around it: those of its frame
    assert above == pytest.approx(layer1["y"] - (stem["y"] + stem["height"]), abs=1)
    below = frame("layer2")["y"] - (shown["y"] + shown["height"])
    assert below == pytest.approx(layer2["y"] - (layer1["y"] + layer1["height"]), abs=1)
    arrow = page.locator(
        f"{MAIN} g.edge[data-from=stem_2][data-to=layer1_0_conv1] polygon"
    ).bounding_box()
    assert arrow["y"] + arrow["height"] == pytest.approx(shown["y"], abs=1)  # at its top
    assert arrow["x"] + arrow["width"] / 2 == pytest.approx(shown["x"] + shown["width"] / 2, abs=1)
    group.locator(":scope > g.fx-box").click()  # expanded: everything where it was drawn
    assert frame("layer1") == pytest.approx(layer1) and frame("layer2") == pytest.approx(layer2)


def test_clicking_a_node_shows_its_details(session_report, open_report):
    opened = open_report(session_report[0])
    page = opened.page
    page.locator(f"{MAIN} g.node[data-name=layer1_0_conv1]").click()
    details = page.locator(f"{MAIN} .fx-details").inner_text()
    for line in (
        "layer1_0_conv1",
        "op\tcall_module",
        "target\tlayer1.0.conv1",
        "shape\t1x16x32x32",
        "dtype\tfloat32",
        "module\tlayer1.0.conv1",
        "resnet.py:",
        "bytes\t64.0 KiB",
    ):
        assert line in details
    assert opened.errors == []


def test_the_view_zooms_and_pans_and_the_heat_tints_the_nodes(session_report, open_report):
    page = open_report(session_report[0]).page
    svg = page.locator(f"{MAIN} .fx-view svg")
    width = lambda: float(svg.get_attribute("data-fx-view").split()[2])  # noqa: E731
    x = lambda: float(svg.get_attribute("data-fx-view").split()[0])  # noqa: E731
    box = page.locator(f"{MAIN} .fx-view").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40)
    w0 = width()
    page.mouse.wheel(0, -300)
    page.wait_for_function(
        f"() => +document.querySelector('{MAIN} svg').dataset.fxView.split(' ')[2] < {w0}"
    )
    x0 = x()
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 + 150, box["y"] + 40, steps=5)
    page.mouse.up()
    assert x() < x0  # dragged right: the view moved left over the graph
    page.locator(f"{MAIN} select.fx-heat").select_option("memory")
    fill = page.eval_on_selector(
        f"{MAIN} g.node[data-name=layer1_0_conv1] > rect.box", "e => getComputedStyle(e).fill"
    )
    assert fill.startswith("rgb(") and fill != "rgb(252, 231, 243)"  # not the module's pink


BEFORE = """import torch
class Net(torch.nn.Module):
    def forward(self, x):
        y = torch.neg(x)
        s = torch.sin(y)
        return torch.relu(y) * 2 + s
def example_inputs():
    return (torch.randn(2, 3),)
"""
AFTER = BEFORE.replace("s = torch.sin(y)", "z = torch.tanh(y)").replace(
    "torch.relu(y) * 2 + s", "torch.relu(z) * 2"
)

LEFT, RIGHT = ".fx-pane[data-pane=left]", ".fx-pane[data-pane=right]"
RED, GREEN, AMBER = "rgb(254, 202, 202)", "rgb(187, 247, 208)", "rgb(253, 230, 138)"


def _fills(page, pane: str, cls: str) -> list[str]:
    return page.eval_on_selector_all(
        f"{pane} g.node.{cls} > rect.box", "els => els.map(e => getComputedStyle(e).fill)"
    )


def test_a_diff_report_colours_the_differences_and_rings_the_first_divergence(
    tmp_path, write_model, open_report
):
    a, b = write_model(BEFORE, "before.py"), write_model(AFTER, "after.py")
    out = tmp_path / "diff.html"
    argv = ["diff", f"{a}:Net", f"{b}:Net", "--html", str(out), "--fail-on-change"]
    assert cli.main(argv) == 3  # sin and add removed, tanh added
    opened = open_report(out)
    page = opened.page
    assert opened.errors == [] and opened.refused == []
    removed = page.eval_on_selector_all(
        f"{LEFT} g.node.fx-removed", "els => els.map(e => e.dataset.name)"
    )
    assert sorted(removed) == ["add", "sin"] and set(_fills(page, LEFT, "fx-removed")) == {RED}
    added = page.eval_on_selector_all(
        f"{RIGHT} g.node.fx-added", "els => els.map(e => e.dataset.name)"
    )
    assert added == ["tanh"] and _fills(page, RIGHT, "fx-added") == [GREEN]
    first = page.locator(f"{RIGHT} g.node.fx-first")
    assert first.count() == 1 and first.get_attribute("data-name") == "relu"
    assert "First divergence: relu" in page.locator("#compare").inner_text()
    page.locator("#compare [data-fx-goto='relu']").click()
    assert "value diff" in page.locator(f"{RIGHT} .fx-details").inner_text()
    page.locator(f"{RIGHT} g.node[data-name=neg]").click()  # its partner is selected too
    assert page.locator(f"{LEFT} .fx-details h3").inner_text() == "neg"


def test_a_rewrite_diffed_colours_the_changed_nodes_on_both_sides(tmp_path, open_report):
    out = tmp_path / "fold.html"
    argv = ["diff", "examples:resnet", "--rewrite", "fold-conv-bn", "--no-values"]
    assert cli.main([*argv, "--html", str(out)]) == 0  # no --fail-on-change: a report only
    page = open_report(out).page
    assert (
        set(_fills(page, LEFT, "fx-changed")) == {AMBER} == set(_fills(page, RIGHT, "fx-changed"))
    )
    assert len(_fills(page, RIGHT, "fx-changed")) == 15 == len(_fills(page, LEFT, "fx-removed"))


def test_a_large_report_packs_its_drawing_and_the_browser_unpacks_it(tmp_path, open_report):
    """Above ``COMPRESS_ABOVE`` bytes the SVG and the JSON go in gzip-compressed; the page's
    script inflates them in memory (DecompressionStream) -- the same page, no request."""
    from fxstudio.core.share.htmlreport import report_html
    from fxstudio.core.share.svg import drawing_svg

    doc = open_document("examples:resnet")
    page_text = report_html({"title": "packed"}, drawing_svg(doc, expanded=True), compress_above=0)
    assert '<g class="node"' not in page_text and 'data-encoding="gzip-base64"' in page_text
    (tmp_path / "packed.html").write_text(page_text)
    opened = open_report(tmp_path / "packed.html")
    page = opened.page
    assert opened.errors == [] and opened.refused == []
    assert page.locator(f"{MAIN} g.node").count() == 54
    page.locator(f"{MAIN} g.node[data-name=layer1_0_bn1]").click()
    assert "target\tlayer1.0.bn1" in page.locator(f"{MAIN} .fx-details").inner_text()
