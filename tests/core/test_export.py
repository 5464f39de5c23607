import os
import stat
import sys

import pytest
import torch
import torch.utils._pytree as pytree

from fxstudio.core.capture import eval_mode
from fxstudio.core.codegen import constructor_expr
from fxstudio.core.errors import UserError
from fxstudio.core.export import (
    ExportError,
    export,
    one_thread,
    onnx_available,
    run_standalone,
    verify_standalone,
)
from fxstudio.core.files import WriteError
from fxstudio.core.loading import load_model
from fxstudio.core.session import OpenRequest, open_document

EXAMPLES = ["simple", "negrelu", "resnet", "transformer"]


def original_outputs(spec, seed=0, inputs=()):
    """The model as the user's code builds it, in eval mode: the ground truth."""
    loaded = load_model(spec, inputs, seed)
    with eval_mode(loaded.module), torch.no_grad(), one_thread():
        out = loaded.module(*loaded.example_inputs)
    return loaded.example_inputs, [
        t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)
    ]


@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_standalone_module_round_trip(tmp_path, name, frontend):
    spec = f"examples:{name}"
    doc = open_document(OpenRequest(spec, frontend, seed=3))
    out = tmp_path / f"{name}_{frontend}.py"
    result = export(doc, out)
    assert [p.name for p in result.paths] == [f"{name}_{frontend}.safetensors", out.name]
    source = out.read_text()
    assert "fxstudio" not in source.split('"""', 2)[2]  # only the docstring mentions it
    compile(source, str(out), "exec")
    inputs, expected = original_outputs(spec, seed=3)
    check = run_standalone(out, inputs, expected)
    assert check.bitwise_equal, check
    assert verify_standalone(out, doc).bitwise_equal


def test_submodules_are_built_from_constructor_arguments(tmp_path):
    out = tmp_path / "resnet.py"
    export(open_document("examples:resnet"), out)
    source = out.read_text()
    assert 'self.stem.add_module("0", nn.Conv2d(3, 16, 3, padding=1, bias=False))' in source
    assert "nn.BatchNorm2d(16)" in source and "nn.Linear(64, 10)" in source
    assert "def load(path=None" in source


@pytest.mark.parametrize(
    "module",
    [
        torch.nn.Linear(3, 4, bias=False),
        torch.nn.Conv1d(2, 4, 5, stride=2, padding="valid", groups=2),
        torch.nn.Conv2d(3, 8, (3, 5), padding=(1, 2), dilation=2, padding_mode="reflect"),
        torch.nn.BatchNorm1d(7, eps=1e-3, momentum=None, affine=False),
        torch.nn.LayerNorm((4, 5), elementwise_affine=False),
        torch.nn.Embedding(10, 3, padding_idx=0),
        torch.nn.Dropout(0.3),
        torch.nn.LeakyReLU(0.1, inplace=True),
        torch.nn.GELU(approximate="tanh"),
        torch.nn.MaxPool2d(3, stride=2, ceil_mode=True),
        torch.nn.AdaptiveAvgPool2d((2, 3)),
        torch.nn.Linear(3, 4).to(torch.float64),
        torch.nn.MultiheadAttention(16, 4, dropout=0.1, batch_first=True),
        torch.nn.MultiheadAttention(16, 2, bias=False, add_bias_kv=True, kdim=8, vdim=12),
    ],
    ids=lambda m: type(m).__name__,
)
def test_constructor_expressions_rebuild_the_module(module):
    expr = constructor_expr(module)
    assert expr is not None
    built = eval(expr, {"nn": torch.nn, "torch": torch})
    assert repr(built) == repr(module)
    assert {k: (v.shape, v.dtype) for k, v in built.state_dict().items()} == {
        k: (v.shape, v.dtype) for k, v in module.state_dict().items()
    }


def test_custom_leaf_module_falls_back_to_a_traced_class(tmp_path, write_model):
    path = write_model(
        "import torch\n"
        "class Scale(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.gain = torch.nn.Parameter(torch.full((4,), 2.0))\n"
        "        self.register_buffer('shift', torch.ones(4), persistent=False)\n"
        "    def forward(self, x):\n        return x * self.gain + self.shift\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(4, 4)\n        self.scale = Scale()\n"
        "        self.head = torch.nn.Linear(4, 4)\n        self.head.weight = self.fc.weight\n"
        "    def forward(self, x):\n        return self.head(self.scale(self.fc(x)))\n"
        "def example_inputs():\n    return (torch.randn(2, 4),)\n"
    )
    spec = f"{path}:Net"
    doc = open_document(OpenRequest(spec, leaf_modules=("Scale",)))
    out = tmp_path / "net.py"
    result = export(doc, out)
    assert any("scale" in n and "traced class" in n for n in result.notes)
    source = out.read_text()
    assert "class _Scale(nn.Module)" in source
    assert 'self.head.weight = self.get_parameter("fc.weight")' in source  # tied, not copied
    inputs, expected = original_outputs(spec)
    assert run_standalone(out, inputs, expected).bitwise_equal


def test_forward_code_file(tmp_path):
    doc = open_document("examples:negrelu")
    out = tmp_path / "forward.py"
    export(doc, out, "code")
    text = out.read_text()
    assert doc.code().strip() in text
    namespace: dict = {}
    exec(compile(text, str(out), "exec"), namespace)
    x, y, z = doc.example_inputs
    torch.testing.assert_close(namespace["forward"](None, x, y, z), (-x + torch.relu(y)) * z)


@pytest.mark.parametrize("name", ["resnet", "transformer"])
def test_torchscript_and_pt2(tmp_path, name):
    doc = open_document(f"examples:{name}")
    inputs, expected = original_outputs(f"examples:{name}")
    ts = tmp_path / "model.pt"
    export(doc, ts)
    scripted = torch.jit.load(str(ts))
    with torch.no_grad():
        torch.testing.assert_close(scripted(*inputs), expected[0])
    pt2 = tmp_path / "model.pt2"
    export(doc, pt2)
    program = torch.export.load(str(pt2))
    with torch.no_grad():
        torch.testing.assert_close(program.module()(*inputs), expected[0])
    again = open_document(str(pt2))  # fxstudio opens what it saved
    assert len(again.rows()) > 10


@pytest.mark.skipif(not onnx_available(), reason="onnx and onnxscript are not installed")
def test_onnx(tmp_path):
    import onnx

    out = tmp_path / "model.onnx"
    export(open_document("examples:resnet"), out)
    model = onnx.load(str(out))
    onnx.checker.check_model(model)
    assert any(n.op_type == "Conv" for n in model.graph.node)


def test_onnx_missing_packages_say_what_to_install(tmp_path, monkeypatch):
    import fxstudio.core.export as ex

    monkeypatch.setattr(ex, "onnx_available", lambda: False)
    with pytest.raises(ExportError, match="pip install onnx onnxscript"):
        export(open_document("examples:simple"), tmp_path / "m.onnx")
    assert not (tmp_path / "m.onnx").exists()


def test_existing_files_are_not_overwritten_without_force(tmp_path):
    doc = open_document("examples:simple")
    out = tmp_path / "simple.py"
    out.write_text("# mine\n")
    with pytest.raises(WriteError, match="already exists"):
        export(doc, out)
    assert out.read_text() == "# mine\n"
    (tmp_path / "other.safetensors").write_bytes(b"keep")
    with pytest.raises(WriteError, match="other.safetensors already exists"):
        export(doc, tmp_path / "other.py")  # the sidecar counts too
    assert not (tmp_path / "other.py").exists()
    export(doc, out, force=True)
    assert "class Model" in out.read_text()


@pytest.mark.skipif(os.geteuid() == 0 and sys.platform != "win32", reason="root can write anywhere")
def test_read_only_folder_leaves_old_file(tmp_path):
    out = tmp_path / "simple.py"
    out.write_text("# old\n")
    tmp_path.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        with pytest.raises(WriteError, match="Nothing was changed"):
            export(open_document("examples:simple"), out, force=True)
    finally:
        tmp_path.chmod(stat.S_IRWXU)
    assert out.read_text() == "# old\n"


def test_failed_write_leaves_old_files_intact(tmp_path, monkeypatch):
    """A write that fails half-way (a full disk) leaves the old files as they were."""
    import fxstudio.core.export as ex

    doc = open_document("examples:simple")
    out = tmp_path / "simple.py"
    export(doc, out)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def full_disk(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ex, "save_file", full_disk)
    with pytest.raises(WriteError, match="No space left on device"):
        export(doc, out, force=True)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no temp files left


def test_missing_folder(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        export(open_document("examples:simple"), tmp_path / "nope" / "m.py")


def test_export_needs_inputs_for_formats_that_run_the_model(tmp_path):
    doc = open_document("torch.nn:ReLU")
    with pytest.raises(ExportError, match="needs example inputs"):
        export(doc, tmp_path / "relu.pt2")
    export(doc, tmp_path / "relu.py")  # writing Python needs no inputs


def test_unwritable_folder_gives_a_clear_message():
    """/sys refuses new files even to root: a real failed write, with nothing left behind."""
    if sys.platform != "linux" or not os.path.isdir("/sys"):
        pytest.skip("needs Linux /sys")
    with pytest.raises(WriteError, match="Could not write /sys/fxstudio-test.py"):
        export(open_document("examples:simple"), "/sys/fxstudio-test.py", "code")
    assert not os.path.exists("/sys/fxstudio-test.py")
