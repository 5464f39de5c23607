import operator

import pytest
import torch

from fxstudio.core.graph.document import ChangeKind, GraphDocument
from fxstudio.core.graph.graphviews import NodeRow
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.sessions.documents import open_document


@pytest.fixture(scope="module")
def resnet():
    return open_document("examples:resnet")


def test_rows_are_print_tabular_plus_shapes(resnet):
    rows = resnet.rows()
    assert [r.name for r in rows] == [n.name for n in resnet.graph.nodes]
    assert NodeRow.COLUMNS == (
        "opcode",
        "name",
        "target",
        "args",
        "kwargs",
        "shape",
        "dtype",
        "module_path",
    )
    add = next(r for r in rows if r.name == "add")
    assert add.opcode == "call_function" and add.target == "operator.add"
    assert add.args == "(layer1_0_bn2, stem_2)"
    assert add.shape == "1x16x32x32" and add.dtype == "float32"
    assert add.module_path == "layer1.0"
    conv = resnet.row("layer2_0_conv1")
    assert (conv.opcode, conv.target, conv.module_path) == (
        "call_module",
        "layer2.0.conv1",
        "layer2.0.conv1",
    )


@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize("name", ["resnet", "transformer", "negrelu"])
def test_every_node_has_its_code_line(name, frontend):
    doc = open_document(OpenRequest(f"examples:{name}", frontend))
    lines = doc.code().splitlines()
    line_map = doc.code_line_map()
    assert set(line_map) == set(doc.node_names())
    for node in doc.graph.nodes:
        text = lines[line_map[node.name] - 1]
        if node.op == "output":
            assert text.strip().startswith("return")
        elif node.op != "placeholder":
            assert text.strip().startswith(f"{node.name} = ") or text.strip().startswith(
                f"{node.name}: "
            ), text
        assert doc.node_at_line(line_map[node.name]) is not None
    assert doc.node_at_line(line_map["output"]) == "output"


def test_module_tree(resnet):
    tree = resnet.module_tree()
    block = next(g for g in tree.walk() if g.path == "layer1.0")
    assert block.type_name == "BasicBlock"
    assert "add" in block.nodes
    assert "layer1.0.conv1" in block.children
    assert sorted(tree.all_nodes()) == sorted(resnet.node_names())


def test_source_location_points_at_the_users_line(resnet):
    loc = resnet.source_location("add")
    assert loc.filename.endswith("resnet.py")
    assert "out + identity" in loc.text
    # the recorded trace is the model's frames only, innermost last (no fxstudio frames)
    frames = resnet.node("add").stack_trace.splitlines()[::2]
    assert all("resnet.py" in f for f in frames) and frames[-1].endswith("in forward")


def test_json_has_nodes_and_one_edge_per_use(resnet):
    data = resnet.to_json()
    assert [n["name"] for n in data["nodes"]] == resnet.node_names()
    edges = {(e["source"], e["target"], e["arg"]) for e in data["edges"]}
    assert ("layer1_0_bn2", "add", "args[0]") in edges and ("stem_2", "add", "args[1]") in edges
    uses = sum(len(n.users) for n in resnet.graph.nodes)
    assert len(data["edges"]) == uses
    first = data["nodes"][1]
    assert first["shape"] == [1, 16, 32, 32] and first["args"] == [{"node": "x"}]


def test_events_are_sent_and_can_be_stopped():
    doc = open_document("examples:simple")
    events = []
    stop = doc.subscribe(events.append)
    doc.set_positions({"fc1": (10.0, 20.0)})
    doc.set_collapsed("fc1", True)
    assert [e.kind for e in events] == [ChangeKind.VIEW_CHANGED, ChangeKind.VIEW_CHANGED]
    assert events[0].names == {"fc1"}
    with pytest.raises(KeyError):
        doc.set_positions({"nosuch": (0.0, 0.0)})
    stop()
    doc.set_positions({"fc2": (0.0, 0.0)})
    assert len(events) == 2


def _storages(module):
    return {
        t.untyped_storage().data_ptr() for t in list(module.parameters()) + list(module.buffers())
    }


def test_snapshot_restore_shares_weights_and_restores_code_exactly():
    doc = open_document("examples:resnet")
    gm = doc.graph_module
    code_before = doc.code()
    params_before = {k: v for k, v in gm.named_parameters()}
    storages_before = _storages(gm)
    x = doc.example_inputs[0]
    with torch.no_grad():
        out_before = gm(x)
    events = []
    doc.subscribe(events.append)
    doc.set_positions({"add": (1.0, 2.0)})

    snaps = [doc.undo_state() for _ in range(10)]
    # The snapshots hold references, not copies, of every weight.
    for snap in snaps:
        for name, p in snap.modules["layer1"].named_parameters():
            assert p is gm.layer1.get_parameter(name)

    # Change the graph: every add becomes a mul.
    for node in doc.graph.nodes:
        if node.target is operator.add:
            node.target = operator.mul
    gm.recompile()
    doc.positions.clear()
    assert doc.code() != code_before

    doc.restore(snaps[3])
    assert doc.code() == code_before
    assert doc.positions == {"add": (1.0, 2.0)}
    assert events[-1].kind is ChangeKind.GRAPH_REPLACED
    doc.graph.lint()
    assert _storages(doc.graph_module) == storages_before
    for k, v in doc.graph_module.named_parameters():
        assert v is params_before[k]
    with torch.no_grad():
        torch.testing.assert_close(doc.graph_module(x), out_before)
    doc.restore(snaps[3])  # a snapshot can be restored twice
    assert doc.code() == code_before


def test_from_capture_keeps_the_source():
    doc = open_document(OpenRequest("examples:negrelu", "fx", (), 3))
    assert isinstance(doc, GraphDocument)
    assert doc.request.spec == "examples:negrelu" and doc.request.seed == 3
    assert doc.source_file.endswith("negrelu.py")


def test_positions_of_nodes_and_groups_and_nothing_else():
    from fxstudio.core.graph.notation import group_key

    doc = open_document("examples:resnet")
    doc.set_positions({"fc": (1, 2), group_key("layer1"): (3, 4)})
    assert doc.positions == {"fc": (1.0, 2.0), "group:layer1": (3.0, 4.0)}
    with pytest.raises(KeyError, match="group:nowhere"):
        doc.set_positions({group_key("nowhere"): (0, 0)})
    assert doc.positions == {"fc": (1.0, 2.0), "group:layer1": (3.0, 4.0)}
    doc.set_positions({group_key("layer1"): None})
    assert doc.positions == {"fc": (1.0, 2.0)}


def test_exported_weights_sit_in_the_module_that_owns_them(tmp_path):
    # A ModuleList (GPT-2's ``h``) is never on the call stack: its layers' weights belong to
    # the layers, not to a second tree under ``h``.
    model = tmp_path / "stack.py"
    model.write_text(
        "import torch\n"
        "from torch import nn\n"
        "class Layer(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x).relu()\n"
        "class Model(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.h = nn.ModuleList([Layer(), Layer()])\n"
        "    def forward(self, x):\n"
        "        for layer in self.h:\n"
        "            x = layer(x)\n"
        "        return x\n"
    )
    doc = open_document(OpenRequest(f"{model}:Model", "export", inputs=("2x4",)))
    tree = doc.module_tree()
    assert set(tree.children) == {"h.0", "h.1"}
    fc = tree.children["h.0"].children["h.0.fc"]
    assert {"h_0_fc_weight", "h_0_fc_bias"} <= set(fc.nodes)


def test_a_submodule_is_found_by_its_path_however_it_is_held():
    """Registered children (the fast way), a module held as a plain attribute, a child
    registered as None, a path through a tensor: as ``get_submodule`` finds them, or None."""
    from torch import nn

    from fxstudio.core.fxcompat.modules import submodule_at

    root = nn.Sequential(nn.Sequential(nn.Linear(2, 2)))
    plain = nn.ReLU()
    object.__setattr__(root[0], "held", plain)  # (not a registered child)
    root[0].register_module("gone", None)
    assert submodule_at(root, "") is root
    assert submodule_at(root, "0.0") is root[0][0] is root.get_submodule("0.0")
    assert submodule_at(root, "0.held") is plain is root.get_submodule("0.held")
    for missing in ("0.gone", "0.0.weight", "1", "0.0.weight.x", "0..0"):
        assert submodule_at(root, missing) is None, missing
