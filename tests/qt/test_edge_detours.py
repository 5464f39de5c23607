"""The canvas draws an edge the way the drawing routed it: around the nodes it bypasses while
its ends are where the layout put them, the plain curve once one is moved."""

from PySide6.QtCore import QPointF


def test_skip_edge_is_drawn_beside_the_block_until_an_end_moves(qtbot, docks):
    ctx = docks()
    ctx.open("examples:resnet")
    scene = ctx.canvas.scene()
    edge = next(e for e in scene.edges if e.target_name == "add" and e.source_name == "stem_2")
    column = [scene.nodes[f"layer1_0_{n}"] for n in ("conv1", "bn1", "relu", "conv2", "bn2")]
    for node in column:  # (sampled along the drawn path: beside the column, never in it)
        box = node.sceneBoundingRect()
        path = edge.path()
        assert not any(box.contains(path.pointAtPercent(t / 200)) for t in range(201))
    assert edge.boundingRect().right() > max(n.sceneBoundingRect().right() for n in column)
    add = scene.nodes["add"]
    add.setPos(add.pos() + QPointF(300, 0))
    add.follow()
    assert edge.detour == ()  # the plain curve follows the moved node
    assert edge.path().elementCount() == 4  # (one cubic)
