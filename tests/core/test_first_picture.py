"""A ``.pt2``'s first picture read straight from its archive (``core.layout.preview``): the
same nodes, edges and shapes as the document the full open makes of it, without torch."""

import json
import subprocess
import sys
import zipfile

import pytest
import torch
from torch import nn

from fxstudio.core.flows import open_document
from fxstudio.core.flows.picture import first_picture
from fxstudio.core.graph.notation import format_shape
from fxstudio.core.graph.shapes import node_shape
from fxstudio.core.layout import preview


class Net(nn.Module):
    """Weights, buffers (one no node reads: a batch norm's count), a node of two outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8)
        self.lin = nn.Linear(8, 6)

    def forward(self, x):
        y = self.bn(self.conv(x)).mean((2, 3))
        a, b = self.lin(y).split(3, dim=1)
        return a * b, torch.relu(a)


@pytest.fixture(scope="module")
def pt2(tmp_path_factory):
    path = tmp_path_factory.mktemp("pt2") / "net.pt2"
    program = torch.export.export(Net().eval(), (torch.randn(2, 3, 8, 8),), strict=False)
    torch.export.save(program, str(path))
    return str(path)


def test_the_picture_has_the_documents_nodes_shapes_and_edges(pt2):
    picture = first_picture(pt2)
    assert picture is not None and picture.title == "net.pt2"
    doc = open_document(pt2)
    drawn = {n.name: (n.op, n.shape) for n in picture.nodes}
    opened = {n.name: (n.op, format_shape(node_shape(n))) for n in doc.graph.nodes}
    # torch's unlifting adds a call to the program's input guards; nothing else differs
    assert set(opened) - set(drawn) <= {"_guards_fn"} and set(drawn) <= set(opened)
    assert {k: opened[k] for k in drawn} == drawn
    assert drawn["bn_num_batches_tracked"] == ("get_attr", "scalar")
    assert drawn["split"][1] == "(2x3, 2x3)" and drawn["getitem_1"] == ("call_function", "2x3")
    wired = {(a.name, n.name) for n in doc.graph.nodes for a in n.all_input_nodes}
    assert {(a, b) for a, b, _ in picture.edges} == {e for e in wired if "_guards_fn" not in e}
    targets = {n.name: n.target for n in picture.nodes}
    assert targets["conv_weight"] == "conv.weight"
    assert targets["getitem"] == "operator.getitem"
    assert any(t == "torch.ops.aten.conv2d.default" for t in targets.values())


@pytest.mark.parametrize("engine", ["dot", "layered"])
def test_weights_sit_beside_what_their_user_reads_and_boxes_do_not_overlap(
    pt2, engine, monkeypatch
):
    if engine == "layered":
        monkeypatch.setattr(preview, "DOT_UP_TO", 0)
    picture = first_picture(pt2)
    assert picture is not None and picture.engine == engine
    boxes = picture.boxes
    assert set(boxes) == {n.name for n in picture.nodes}
    # the convolution's weight beside its input (the rank above the convolution), not on top
    # with every other source; the unread count beside its batch norm's other buffers
    assert boxes["conv_weight"].center[1] == pytest.approx(boxes["x"].center[1])
    assert boxes["conv_weight"].center[1] < boxes["conv2d"].center[1]
    assert boxes["bn_num_batches_tracked"].center[1] == pytest.approx(boxes["bn_weight"].center[1])
    assert boxes["bn_weight"].center[1] > boxes["x"].center[1]
    listed = list(boxes.values())
    for i, a in enumerate(listed):
        for b in listed[i + 1 :]:
            apart = a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y
            assert apart, (a, b)
    assert 0 < picture.width and 0 < picture.height


def test_what_is_not_a_readable_archive_gives_no_picture(tmp_path, pt2):
    bad = tmp_path / "cut.pt2"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    assert first_picture(str(bad)) is None
    assert first_picture(str(tmp_path / "missing.pt2")) is None
    empty = tmp_path / "empty.pt2"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("empty/data/nothing", b"")
    assert first_picture(str(empty)) is None
    broken = tmp_path / "broken.pt2"
    with zipfile.ZipFile(pt2) as src, zipfile.ZipFile(broken, "w") as z:
        name = next(n for n in src.namelist() if n.endswith("models/model.json"))
        program = json.loads(src.read(name))
        del program["graph_module"]["graph"]["nodes"]
        z.writestr(name, json.dumps(program))
    assert first_picture(str(broken)) is None


def test_the_first_picture_is_drawn_without_importing_torch(pt2):
    code = (
        "import sys\n"
        "from fxstudio.core.flows.picture import first_picture\n"
        "import fxstudio.qt.startup\n"
        f"picture = first_picture({pt2!r})\n"
        "assert picture is not None and len(picture.boxes) == len(picture.nodes)\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
