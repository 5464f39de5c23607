"""Edges are drawn around the boxes they do not connect: a ResNet's skip connection belongs
to the layout of the group holding both its ends, where the block it bypasses is one box, so
graphviz never routes it around that block's nodes -- the drawing does."""

import pytest

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.layout.drawing import drawing
from fxstudio.core.layout.placing import Box, LayoutEngine
from fxstudio.core.layout.routes import crosses, detour, edge_ends, edge_path, points_along
from fxstudio.core.sessions.documents import open_document


def drawn_crossings(doc, collapsed):
    """(edge, box it runs through) for every drawn edge's path as the canvas draws it."""
    lay = LayoutEngine().layout(doc, collapsed)
    plan = drawing(doc, lay)
    boxes = {k: lay.groups[k] for k in lay.collapsed}
    boxes.update(lay.nodes)
    out = []
    for e in plan.edges:
        if e.stub:
            continue
        ends = edge_ends(boxes[e.source], boxes[e.target], e.slot, e.slots)
        if e.detour:  # (it starts and ends where the canvas's edge does)
            assert e.detour[0] == ends[:2] and e.detour[-1] == ends[2:]
        path = edge_path(ends, e.detour[1:-1])
        points = points_along(path, step=2.0)
        for key, box in boxes.items():
            if key in (e.source, e.target):
                continue
            inside = any(box.x < x < box.x + box.w and box.y < y < box.y + box.h for x, y in points)
            if inside or crosses(path, [box]):
                out.append((f"{e.source} -> {e.target}", key))
    return plan, out


@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize(
    "collapsed",
    [set(), {"layer2", "layer3"}, {"stem", "layer1.1", "layer2", "layer3"}],
    ids=["first picture", "layer1 expanded", "layer1.0 alone"],
)
def test_resnet_skip_edges_go_around_the_block_they_bypass(frontend, collapsed):
    doc = open_document(OpenRequest("examples:resnet", frontend))
    plan, crossings = drawn_crossings(doc, collapsed)
    assert crossings == []
    # layer1.0's skip connection: drawn beside the block, not down its column
    stem = {"stem", "stem_2", "relu_"}  # (the stem box, or its last node: fx, export)
    skip = [e for e in plan.edges if e.target == "add" and e.source in stem]
    assert len(skip) == 1 and skip[0].detour


@pytest.mark.parametrize("name", ["transformer", "negrelu"])
def test_no_edge_runs_through_a_box_it_does_not_connect(name):
    doc = open_document(f"examples:{name}")
    assert drawn_crossings(doc, set())[1] == []


def test_a_detour_keeps_off_the_frames_borders_and_turns_down_into_its_user():
    source, target = Box(0, 0, 80, 40), Box(0, 300, 80, 40)
    column = [Box(0, 80, 80, 40), Box(0, 160, 80, 40)]
    frame = Box(-14, 50, 108, 140)  # the block's frame around the column
    from fxstudio.core.layout.routes import Index

    ends = edge_ends(source, target, 0, 1)
    route = detour(ends, source, target, Index(column), Index([frame]), Index([]))
    assert route is not None
    lane = route[1][0]
    assert lane >= frame.x + frame.w + 6 or lane <= frame.x - 6  # outside the frame
    assert route[-1][0] == ends[2] and route[-1][1] < ends[3]  # straight down into the user
    assert not crosses(edge_path(ends, route), column)
