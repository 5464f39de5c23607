"""The graph's picture as SVG (``fxstudio.core.share.svg``), as a reader of the file meets it:
it parses, it draws what the canvas draws (one node group per drawn node, a collapsed module
as one box, every node when expanded), its text is text (searchable), its structure names
nodes, groups and edges, and what a user's model holds (odd characters) is escaped."""

from __future__ import annotations

from xml.etree import ElementTree

import pytest

from fxstudio.core.edits import set_target
from fxstudio.core.errors import UserError
from fxstudio.core.flows import RewriteRequest, RewriteSpec, open_document, rewrite_flow
from fxstudio.core.flows.render import RenderRequest, render_flow
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.sessions.sessionfile import save_session
from fxstudio.core.share.picturelayout import collapsed_groups, picture
from fxstudio.core.share.svg import drawing_svg, esc

SVG = "{http://www.w3.org/2000/svg}"
EXAMPLES = ("simple", "negrelu", "resnet", "transformer")  # (branchy: untraceable, by design)
GPT2 = "hf:gpt2(n_layer=2, n_embd=64, n_head=4, n_positions=64, vocab_size=128, bos_token_id=0)"


def parsed(svg: str) -> ElementTree.Element:
    root = ElementTree.fromstring(svg.encode())  # (the XML declaration names its encoding)
    assert root.tag == f"{SVG}svg"
    return root


def node_groups(root: ElementTree.Element) -> list[ElementTree.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]


def groups(root: ElementTree.Element) -> dict[str, ElementTree.Element]:
    return {
        g.get("data-module"): g
        for g in root.iter(f"{SVG}g")
        if (g.get("class") or "").split()[:1] == ["group"]
    }


def texts(element: ElementTree.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}text")]


def check_drawing(doc, **options) -> ElementTree.Element:
    """The SVG of ``doc`` parses and draws each node the layout shows once, with its name
    as text; each edge joins two drawn items."""
    shown = collapsed_groups(doc, **options)
    drawn = picture(doc, shown)
    root = parsed(drawing_svg(doc, **options))
    nodes = node_groups(root)
    assert sorted(g.get("data-name") for g in nodes) == sorted(drawn.layout.nodes)
    for g in nodes:
        name = g.get("data-name")
        assert g.get("id") == f"node-{name}"
        assert g.get("data-op") == doc.node(name).op
        assert name in texts(g) or any("…" in t for t in texts(g))  # (cut when very long)
    boxes = {g.get("data-module") for g in groups(root).values()}
    assert boxes == set(drawn.layout.groups)
    items = set(drawn.layout.nodes) | set(drawn.layout.collapsed)
    edges = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge"]
    assert len(edges) == len(drawn.plan.edges)
    assert all(e.get("data-from") in items and e.get("data-to") in items for e in edges)
    return root


@pytest.mark.parametrize("name", EXAMPLES)
def test_each_example_draws_each_node_once(name):
    doc = open_document(f"examples:{name}")
    root = check_drawing(doc)
    assert int(root.get("data-drawn-nodes")) == len(node_groups(root))


def test_a_torchvision_resnet18_collapsed_module_is_one_box_and_expanded_is_every_node():
    doc = open_document(OpenRequest("torchvision.models:resnet18", inputs=("1x3x64x64",)))
    root = check_drawing(doc, expanded=True)
    assert len(node_groups(root)) == len(doc)  # every node drawn
    root = check_drawing(doc, collapse=["layer1"])
    box = groups(root)["layer1"]
    assert box.get("class") == "group collapsed"
    assert [t for t in texts(box) if "layer1" in t] == ["▸ layer1 : Sequential"]
    assert not any(g.get("data-module", "").startswith("layer1") for g in node_groups(root))
    inside = int(box.get("data-nodes"))
    assert len(node_groups(root)) == len(doc) - inside
    # the modules inside layer1 are not drawn; layer2's are, in their frame
    assert "layer1.0" not in groups(root) and groups(root)["layer2"].get("class") == "group"
    assert groups(root)["layer2.0"].get("data-parent") == "layer2"


def test_a_transformers_gpt2_from_its_config():
    doc = open_document(GPT2)
    root = check_drawing(doc)
    # the node's details are in the file: its target, shape, dtype and module
    embedding = next(g for g in node_groups(root) if g.get("data-module") == "wte")
    assert embedding.get("data-dtype") == "float32" and "x64" in embedding.get("data-shape")
    # the two identical blocks collapsed side by side stay two boxes (a fold takes three)
    root = check_drawing(doc, collapse=["h.0", "h.1"])
    assert {"h.0", "h.1"} <= {p for p, g in groups(root).items() if "collapsed" in g.get("class")}


def test_a_big_graph_opens_with_its_top_level_modules_collapsed_and_folds_repeats():
    doc = open_document(GPT2.replace("n_layer=2", "n_layer=6"))
    assert len(doc) > 300
    root = check_drawing(doc)
    fold = next(g for g in groups(root).values() if g.get("data-fold"))
    assert fold.get("data-fold") == "6" and fold.get("data-members").split(",")[-1] == "h.5"
    assert any("×6" in t for t in texts(fold))


def test_a_session_with_a_rewrite_and_a_profile_heat(tmp_path):
    doc = open_document("examples:resnet")
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    assert report.result.replaced
    path = tmp_path / "folded.fxstudio"
    save_session(doc, path)
    again = open_document(str(path))
    result = render_flow(RenderRequest(again, heat="profile", min_time=0.1))
    root = parsed(result.svg)
    names = {g.get("data-name") for g in node_groups(root)}
    assert names == set(again.node_names())
    assert not any("bn" in n for n in names)  # the BatchNorms folded away are not drawn
    heated = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "heat"]
    assert heated and all(0 < float(r.get("data-value")) <= 1 for r in heated)
    tags = [g for g in root.iter(f"{SVG}g") if g.get("class") == "heat-tag"]
    assert tags and all(texts(t)[0].endswith("%") for t in tags)
    assert result.heat["kind"] == "profile" and result.heat["top"][0]["name"] in names


def test_a_diff_heat_marks_what_changed_against_the_baseline():
    doc = open_document("examples:negrelu")
    set_target(doc, "relu", "torch.tanh")
    base = open_document("examples:negrelu")
    root = parsed(render_flow(RenderRequest(doc, heat="diff", against=base)).svg)
    tags = {
        g.get("data-name"): texts(g)[0]
        for g in root.iter(f"{SVG}g")
        if g.get("class") == "heat-tag"
    }
    assert tags.get("relu") == "changed (kind)"


def test_what_a_users_model_holds_is_escaped(write_model):
    path = write_model(
        "import torch\n"
        "class Odd(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(4, 4)\n"
        "        self.act = torch.nn.ReLU()\n"
        "    def forward(self, x):\n"
        "        return self.act(self.lin(x)) + 1\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.odd = Odd()\n"
        "    def forward(self, x):\n"
        "        return self.odd(x) * 2\n"
        "def example_inputs():\n    return (torch.randn(2, 4),)\n",
        name="m&<x>.py",
    )
    doc = open_document(f"{path}:Net")
    svg = drawing_svg(doc)
    root = parsed(svg)
    assert root.find(f"{SVG}title").text == f"fxstudio: {path}:Net"
    sources = {g.get("data-source") for g in node_groups(root)} - {""}
    assert sources and all("m&<x>.py:" in s for s in sources)
    assert esc('a<b & "c"\x00') == "a&lt;b &amp; &quot;c&quot;"


def test_an_unknown_module_to_collapse_says_which_there_are():
    doc = open_document("examples:resnet")
    with pytest.raises(UserError, match="No module 'layer9'.*Did you mean .*'layer1'"):
        drawing_svg(doc, collapse=["layer9"])
    with pytest.raises(UserError, match="one node on the canvas"):
        drawing_svg(doc, collapse=["fc"])


def test_the_users_moves_are_drawn_where_they_put_them():
    doc = open_document("examples:negrelu")
    doc.set_positions({"relu": (400.0, 10.0)})
    root = parsed(drawing_svg(doc))
    relu = next(g for g in node_groups(root) if g.get("data-name") == "relu")
    box = relu.find(f"{SVG}rect")
    assert (float(box.get("x")), float(box.get("y"))) == (400.0, 10.0)
    width = float(root.get("width"))
    assert width >= 400 + float(box.get("width"))  # the picture holds it
