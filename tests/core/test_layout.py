import json

import pytest

from fxstudio import cli
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.layout.groups import all_groups, drawn_tree, top_level_groups
from fxstudio.core.layout.placing import GROUP_TITLE, LayoutEngine
from fxstudio.core.sessions.documents import open_document


def overlaps(a, b):
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


def check_layout(doc, lay):
    # Every node is drawn, or stands inside a collapsed group that is drawn.
    for name in doc.node_names():
        assert name in lay.nodes or lay.owner.get(name) in lay.groups, name
    boxes = list(lay.nodes.values()) + [lay.groups[g] for g in lay.collapsed]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not overlaps(a, b), (a, b)
    # Nodes sit inside the frames of the expanded groups that hold them.
    tree = drawn_tree(doc)
    for group in tree.walk():
        if not group.path or group.path not in lay.groups or group.path in lay.collapsed:
            continue
        frame = lay.groups[group.path]
        for name in group.all_nodes():
            if name in lay.nodes:
                box = lay.nodes[name]
                assert frame.x <= box.x and box.x + box.w <= frame.x + frame.w + 0.01
                assert frame.y + GROUP_TITLE <= box.y and box.y + box.h <= frame.y + frame.h + 0.01
    # Top to bottom: a producer is drawn above its users.
    for src, dst, _ in doc.edges():
        a, b = lay.visible(src), lay.visible(dst)
        if a != b and a in lay.nodes and b in lay.nodes:
            assert lay.nodes[a].center[1] < lay.nodes[b].center[1], (a, b)


@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize("name", ["resnet", "transformer", "negrelu"])
def test_expanded_and_collapsed_layouts_are_sound(name, frontend):
    doc = open_document(OpenRequest(f"examples:{name}", frontend))
    engine = LayoutEngine()
    for collapsed in (set(), top_level_groups(doc)):
        lay = engine.layout(doc, collapsed)
        assert lay.engine == "dot" and not lay.notes
        check_layout(doc, lay)


def test_collapsed_groups_hide_their_nodes():
    doc = open_document("examples:resnet")
    lay = LayoutEngine().layout(doc, {"layer2"})
    assert "layer2" in lay.collapsed
    assert "layer2_0_conv1" not in lay.nodes and lay.visible("layer2_0_conv1") == "layer2"
    assert "layer1_0_conv1" in lay.nodes
    assert not any(g.startswith("layer2.") for g in lay.groups)


def test_group_layouts_are_cached_and_reused():
    doc = open_document("examples:resnet")
    engine = LayoutEngine()
    first = engine.layout(doc, set())
    again = engine.layout(doc, set())
    assert first.dot_runs > 5 and again.dot_runs == 0
    assert again.nodes == first.nodes
    # Collapsing one block re-lays out only that block's ancestors.
    one = engine.layout(doc, {"layer3.1"})
    assert 0 < one.dot_runs <= 3


def test_fallback_layout_when_graphviz_fails(monkeypatch):
    from pygraphviz import graphviz

    def broken(*args, **kwargs):
        raise OSError("dot not found")

    monkeypatch.setattr(graphviz, "gvContextWithBuiltins", broken)  # as pygraphviz calls it
    doc = open_document("examples:resnet")
    lay = LayoutEngine().layout(doc, set())
    assert lay.engine == "fallback"
    assert any("graphviz failed" in n and "dot not found" in n for n in lay.notes)
    check_layout(doc, lay)


def test_a_big_group_is_laid_out_in_chunks():
    doc = open_document("tests/bench/synthetic.py:deep_1000")
    lay = LayoutEngine().layout(doc, set())
    assert lay.dot_runs >= 4  # 998 items at most 250 a run
    check_layout(doc, lay)


def test_trivial_modules_are_not_groups():
    doc = open_document("examples:resnet")
    groups = all_groups(doc)
    assert "layer1.0" in groups and "layer1.0.conv1" not in groups
    assert "layer1.0.relu" not in groups  # a ReLU called twice holds no weights


def test_layout_cli(tmp_path, capsys):
    out = tmp_path / "lay.json"
    assert cli.main(["layout", "examples:resnet", "--expanded", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("54 nodes, 51 groups") and "dot" in printed
    data = json.loads(out.read_text())
    assert set(data["nodes"]) == set(open_document("examples:resnet").node_names())
    assert data["groups"]["layer1.0"]["collapsed"] is False
    assert cli.main(["layout", "examples:resnet", "--json", str(out)]) == 2  # exists: --force
    assert cli.main(["layout", "examples:resnet", "--json", str(out), "--force"]) == 0
    data = json.loads(out.read_text())
    assert data["groups"]["layer1"]["collapsed"] is True


def test_values_shared_by_far_apart_layers_do_not_steer_the_layout():
    doc = open_document(OpenRequest("tests/models/shared_mask.py:Model"))
    lay = LayoutEngine().layout(doc, set())
    assert lay.shared == {"float_1", "arange"}  # the mask and the position ids
    check_layout(doc, lay)
    # Each stays next to its first user; its other users get stubs, not edges.
    first = lay.groups["layers.0"]
    for name in lay.shared:
        assert 0 < first.y - lay.nodes[name].y < 300
    # A value used by a few nearby nodes keeps its edges.
    local = open_document(OpenRequest("examples:resnet"))
    assert LayoutEngine().layout(local, set()).shared == set()


def test_dot_runs_outside_the_gil_on_linux():
    # pygraphviz's own layout() holds the GIL for as long as dot runs, so a layout in a worker
    # thread froze the window; fxstudio calls the same libgvc through ctypes instead.
    import sys
    import threading

    import pygraphviz

    from fxstudio.core.layout import dot

    graph = pygraphviz.AGraph(directed=True)
    for i in range(30):
        graph.add_edge(f"n{i}", f"n{i + 1}")
    if sys.platform.startswith("linux"):
        assert dot.libgvc(), "libgvc was not found in this process"
    done = []
    worker = threading.Thread(target=lambda: done.append(dot.run_dot(graph)))
    worker.start()
    worker.join()
    assert done and graph.has_layout
    assert len(graph.get_node("n30").attr["pos"].split(",")) == 2
    assert float(graph.get_node("n0").attr["pos"].split(",")[1]) > float(
        graph.get_node("n30").attr["pos"].split(",")[1]
    )  # dot puts the source on top (y grows upwards in graphviz)


def test_node_boxes_are_as_wide_as_their_text_in_the_metrics_given():
    """The window gives the layout its fonts' widths: a box fits its widest line (the name,
    bold), within the limits, and the layout places the boxes at those widths."""
    from fxstudio.core.layout.labels import MAX_NODE_WIDTH, MIN_NODE_WIDTH, TEXT_MARGIN, TextMetrics

    doc = open_document(OpenRequest("tests/models/long_names.py:Model"))
    wide = TextMetrics({"": 9.0}, {"": 5.0})  # bold characters 9 wide, the others 5
    lay = LayoutEngine(metrics=wide).layout(doc, set())
    box = lay.nodes["stages_0_downsample"]
    assert box.w >= 9.0 * len("stages_0_downsample") + 2 * TEXT_MARGIN
    assert box.w < 9.0 * len("stages_0_downsample") + 2 * TEXT_MARGIN + 10
    longest = "stages_0_pointwise_projection_after_layer_normalisation_and_activation"
    assert lay.nodes[longest].w == MAX_NODE_WIDTH and lay.nodes["x"].w == MIN_NODE_WIDTH
    narrow = LayoutEngine(metrics=TextMetrics({"": 4.0}, {"": 4.0})).layout(doc, set())
    assert narrow.nodes["stages_0_downsample"].w < box.w
    for lay_ in (lay, narrow):  # wider boxes are laid out apart all the same
        check_layout(doc, lay_)


LLAMA_8 = (
    "hf:llama(num_hidden_layers=8, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, vocab_size=1000)"
)


def test_the_first_picture_of_a_llama_leads_with_its_main_path():
    """The attention mask's plumbing (arange, unsqueeze, index …, top-level nodes off the main
    path) is one group beside it; input_ids -> embed_tokens -> layers -> norm -> output are
    the top level, one under the other."""
    from fxstudio.core.layout.groups import ASIDE, collapse_big_graph

    doc = open_document(LLAMA_8)
    tree = drawn_tree(doc)
    assert ASIDE in tree.children and len(tree.children[ASIDE].nodes) >= 8
    assert tree.nodes == ["input_ids", "output"]
    collapse_big_graph(doc)
    assert ASIDE in doc.collapsed
    lay = LayoutEngine().layout(doc, doc.collapsed)
    assert set(lay.nodes) == {"input_ids", "output"}
    first_layer = next(g for g in lay.groups if g.startswith("layers."))
    path = [lay.nodes["input_ids"], lay.groups["embed_tokens"], lay.groups[first_layer]]
    path += [lay.groups["norm"], lay.nodes["output"]]
    tops = [box.y for box in path]
    assert tops == sorted(tops) and len(set(tops)) == len(tops)


def test_a_graph_without_plumbing_gets_no_aside_group():
    from fxstudio.core.layout.groups import ASIDE

    for name in ("examples:resnet", "examples:negrelu", "examples:simple"):
        assert ASIDE not in all_groups(open_document(name)), name
