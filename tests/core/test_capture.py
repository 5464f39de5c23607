import pytest
import torch
import torch.fx as fx

from fxstudio.core.errors import CaptureError
from fxstudio.core.graph.notation import format_shape
from fxstudio.core.graph.shapes import node_dtype, node_shape
from fxstudio.core.model.capture import CaptureOptions, capture
from fxstudio.core.model.loading import load_model
from tests.conftest import EXAMPLES

TRACEABLE = ["simple", "negrelu", "resnet", "transformer"]


def line_of(path, text):
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if text in line:
            return i
    raise AssertionError(text)


@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize("name", TRACEABLE)
def test_examples_capture_with_shapes_and_run_like_the_original(name, frontend):
    loaded = load_model(f"examples:{name}")
    cap = capture(loaded, CaptureOptions(frontend=frontend))
    gm = cap.graph_module
    assert isinstance(gm, fx.GraphModule)
    gm.graph.lint()
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "get_attr", "call_module"):
            if node.name == "_guards_fn":  # export's input check returns nothing
                continue
            assert node_shape(node) is not None, node.name
            assert node_dtype(node) in ("float32", "int64"), node.name
    with torch.no_grad():
        expected = loaded.module(*loaded.example_inputs)
        got = gm(*loaded.example_inputs)
    torch.testing.assert_close(got, expected)


def test_resnet_shapes_are_right():
    cap = capture(load_model("examples:resnet"))
    shapes = {n.name: format_shape(node_shape(n)) for n in cap.graph_module.graph.nodes}
    assert shapes["x"] == "1x3x32x32"
    assert shapes["layer2_0_conv1"] == "1x32x16x16"
    assert shapes["fc"] == "1x10"
    assert 60 <= len(load_model("examples:resnet").module.state_dict()) and 50 <= len(shapes) <= 150


def test_branchy_says_where_and_what_to_do():
    with pytest.raises(CaptureError) as info:
        capture(load_model("examples:branchy"))
    message = str(info.value)
    path = EXAMPLES / "branchy.py"
    line = line_of(path, "        if x.sum() > 0:")
    assert "branches on a tensor value" in message
    assert f"{path}:{line}" in message
    assert "if x.sum() > 0:" in message
    assert "export" in message and "torch.cond" in message and "concrete_args" in message
    assert info.value.location.lineno == line


def test_branchy_with_export_also_points_at_the_branch():
    with pytest.raises(CaptureError) as info:
        capture(load_model("examples:branchy"), CaptureOptions(frontend="export"))
    assert info.value.location.lineno == line_of(EXAMPLES / "branchy.py", "        if x.sum() > 0:")
    assert "torch.cond" in str(info.value)


def test_wrong_input_shape_names_node_and_line():
    with pytest.raises(CaptureError) as info:
        capture(load_model("examples:simple", inputs=["2x5"]))
    message = str(info.value)
    assert "node 'fc1'" in message
    assert "mat1 and mat2 shapes cannot be multiplied (2x5 and 16x32)" in message
    assert "2x5:float32" in message
    assert info.value.location.lineno == line_of(EXAMPLES / "simple.py", "return self.fc2")


def test_wrong_number_of_inputs():
    with pytest.raises(CaptureError, match=r"takes 3 input\(s\) \(x, y, z\), but 1"):
        capture(load_model("examples:negrelu", inputs=["4x8"]))


def test_iteration_over_a_traced_value(write_model):
    path = write_model(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
        "        total = 0\n        for row in x:\n"
        "            total = total + row\n        return total\n"
    )
    with pytest.raises(CaptureError) as info:
        capture(load_model(f"{path}:Net", inputs=["2x3"]))
    assert "iterates over" in str(info.value)
    assert info.value.location.lineno == 5


def test_leaf_modules_stay_single_nodes():
    cap = capture(load_model("examples:resnet"), CaptureOptions(leaf_modules=("BasicBlock",)))
    targets = [n.target for n in cap.graph_module.graph.nodes if n.op == "call_module"]
    assert "layer1.0" in targets and "layer1.0.conv1" not in targets


def test_no_inputs_means_no_shapes_and_a_note():
    cap = capture(load_model("torch.nn:ReLU"))
    assert cap.notes and "--input" in cap.notes[0]
    with pytest.raises(CaptureError, match="needs example inputs"):
        capture(load_model("torch.nn:ReLU"), CaptureOptions(frontend="export"))


def test_data_dependent_ops_fall_back_to_a_real_run(write_model):
    path = write_model(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.nonzero(x > 0).float().sum(0)\n"
        "def example_inputs():\n    return (torch.tensor([1.0, -1.0, 2.0]),)\n"
    )
    cap = capture(load_model(f"{path}:Net"))
    nodes = {n.name: n for n in cap.graph_module.graph.nodes}
    assert format_shape(node_shape(nodes["nonzero"])) == "2x1"
    assert nodes["nonzero"].meta["val"].device.type == "meta"  # no real data kept


def test_shape_propagation_uses_no_real_compute_for_big_layers():
    big = torch.nn.Linear(20000, 20000)  # 1.6 GB of float32 output work would be slow
    loaded = load_model("torch.nn:Identity", inputs=["1x1"])
    loaded.module = torch.nn.Sequential(big)
    loaded.example_inputs = (torch.randn(512, 20000),)
    cap = capture(loaded)
    out = [n for n in cap.graph_module.graph.nodes if n.op == "call_module"][0]
    assert format_shape(node_shape(out)) == "512x20000"


@pytest.mark.parametrize("name", TRACEABLE)
def test_fake_and_real_shape_propagation_agree(name):
    from fxstudio.core.graph.propagation import propagate_shapes
    from fxstudio.core.model.capture import trace_fx

    loaded = load_model(f"examples:{name}")
    shapes = {}
    for method in ("fake", "real"):
        gm = trace_fx(loaded.module)
        propagate_shapes(gm, loaded.example_inputs, method=method)
        shapes[method] = {n.name: (node_shape(n), node_dtype(n)) for n in gm.graph.nodes}
        assert all(
            not isinstance(v, torch.Tensor) or v.device.type == "meta" or "Fake" in type(v).__name__
            for v in (n.meta.get("val") for n in gm.graph.nodes)
        )
    assert shapes["fake"] == shapes["real"]
    params = dict(loaded.module.named_parameters())
    assert all(type(p) is torch.nn.Parameter for p in params.values())  # weights put back


def test_shape_propagation_does_not_change_the_model(write_model):
    path = write_model(
        "import torch\nclass Net(torch.nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.bn = torch.nn.BatchNorm1d(4)\n"
        "        self.drop = torch.nn.Dropout(0.5)\n"
        "    def forward(self, x):\n        return self.drop(self.bn(x))\n"
    )
    loaded = load_model(f"{path}:Net", inputs=["1x4"])  # a batch of one, in train mode
    before = {k: v.clone() for k, v in loaded.module.state_dict().items()}
    rng = torch.get_rng_state()
    cap = capture(loaded, CaptureOptions(train=True))
    assert loaded.module.training and cap.graph_module.training
    for k, v in loaded.module.state_dict().items():
        assert torch.equal(v, before[k]), k
    assert torch.equal(torch.get_rng_state(), rng)


def test_capture_is_in_eval_mode_unless_train_is_asked(write_model):
    path = write_model(
        "import torch\nclass Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.nn.functional.dropout(x, 0.5, self.training)\n"
        "def example_inputs():\n    return (torch.ones(4, 4),)\n"
    )
    loaded = load_model(f"{path}:Net")
    gm = capture(loaded).graph_module
    assert not gm.training
    x = loaded.example_inputs[0]
    assert torch.equal(gm(x), x)  # training=False is baked into the graph
    train_gm = capture(load_model(f"{path}:Net"), CaptureOptions(train=True)).graph_module
    assert "training = True" in train_gm.code
