import os
import stat
import sys

import pytest
import torch
import torch.utils._pytree as pytree

from fxstudio.core.errors import UserError
from fxstudio.core.graph.modes import eval_mode
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.model.loading import load_model
from fxstudio.core.process.files import WriteError
from fxstudio.core.saving.codegen import constructor_expr
from fxstudio.core.saving.export import ExportError, export, onnx_available
from fxstudio.core.saving.verify import one_thread, run_standalone, verify_standalone
from fxstudio.core.sessions.documents import open_document

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
    assert verify_standalone(out, doc).ok


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
    import fxstudio.core.saving.export as ex

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
    import fxstudio.core.saving.export as ex

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


# --- the saved module computes what the editor's model computes, on any CPU -------------------


def _rewrite_at_offset(path, remainder):
    """Rewrite a safetensors file with padding in its header so that its data starts at a
    byte offset of ``remainder`` modulo 64 (odd: no tensor in it is aligned any more)."""
    import json
    import struct

    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8 : 8 + n])
    meta = dict(header.get("__metadata__", {}))
    for pad in range(64):
        meta["padding"] = "x" * pad
        text = json.dumps({**header, "__metadata__": meta}).encode()
        if (8 + len(text)) % 64 == remainder:
            break
    path.write_bytes(struct.pack("<Q", len(text)) + text + raw[8 + n :])


def test_load_gives_aligned_weights_whatever_the_files_header(tmp_path):
    """A user's outputs must not change with the weights file's header length: load() gives
    ordinary aligned parameters, not views into the file (MKL's sgemm takes another kernel
    path, with other rounding, on data that is not 64-byte aligned)."""
    from safetensors.torch import load_file

    doc = open_document("examples:resnet")
    out = tmp_path / "net.py"
    export(doc, out)
    weights = tmp_path / "net.safetensors"
    _rewrite_at_offset(weights, 1)
    raw = load_file(str(weights))
    assert any(t.data_ptr() % 64 for t in raw.values())  # the file's tensors are not aligned
    import importlib.util

    spec = importlib.util.spec_from_file_location("net_odd", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.load()
    state = [*model.parameters(), *model.buffers()]
    assert state and all(t.data_ptr() % 64 == 0 for t in state if t.numel())
    x = doc.example_inputs[0]
    with torch.no_grad(), one_thread():
        assert torch.equal(model(x), doc.graph_module(x))  # one process: bit for bit


def test_the_check_reads_its_inputs_as_aligned_tensors(tmp_path):
    """The checking process reads the example inputs from a file; the model it runs sees
    them 64-byte aligned, as the editor's model saw them (else another sgemm path)."""
    from safetensors.torch import load_file, save_file

    (tmp_path / "probe.py").write_text(
        "import torch\n"
        "class Probe(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.tensor(float(x.data_ptr() % 64))\n"
        "def load():\n    return Probe()\n"
    )
    x = torch.randn(3, 5)
    save_file({"in.0": x}, str(tmp_path / "io.safetensors"))  # as run_standalone writes it
    assert load_file(str(tmp_path / "io.safetensors"))["in.0"].data_ptr() % 64  # unaligned
    check = run_standalone(tmp_path / "probe.py", (x,), [torch.tensor(0.0)])
    assert check.bitwise_equal, check


def test_read_tensors_copies_out_of_the_file(tmp_path):
    from safetensors.torch import save_file

    from fxstudio.core.saving.tensorfiles import read_tensors

    path = tmp_path / "t.safetensors"
    tensors = {"a": torch.randn(3, 5), "b": torch.arange(7)}
    save_file(tensors, str(path))
    _rewrite_at_offset(path, 1)
    got = read_tensors(path)
    assert all(t.data_ptr() % 64 == 0 for t in got.values())
    assert all(torch.equal(got[k], v) for k, v in tensors.items())


def test_comparison_reports_differences_against_the_dtype_tolerance():
    from fxstudio.core.saving.verify import compare_outputs, tolerance

    x = torch.linspace(-2, 2, 50)
    assert compare_outputs([x], [x.clone()]).describe() == "1 output(s) equal bit for bit"
    near = compare_outputs([x + 1e-7], [x])
    assert not near.bitwise_equal and near.within_tolerance
    assert near.tolerance == tolerance(torch.float32) and 0 < near.max_abs_diff < 2e-7
    assert "not bit for bit" in near.describe() and "within" in near.describe()
    far = compare_outputs([x + 1e-3], [x])
    assert not far.within_tolerance and "BEYOND" in far.describe()
    half = compare_outputs([x.half() + 1e-3], [x.half()])  # float16 allows more
    assert half.tolerance == tolerance(torch.float16) > tolerance(torch.float32)
    nan = torch.tensor([float("nan"), 1.0])
    assert compare_outputs([nan], [nan.clone()]).within_tolerance  # NaN where NaN was
    assert not compare_outputs(
        [torch.tensor([float("nan"), 1.0])], [torch.ones(2)]
    ).within_tolerance
    assert not compare_outputs([torch.arange(3) + 1], [torch.arange(3)]).within_tolerance
    assert (
        "where 1x3:float32 was expected"
        in compare_outputs([torch.ones(3, 1)], [torch.ones(1, 3)]).describe()
    )
    assert compare_outputs([], [x]).mismatch == "0 output(s) where 1 were expected"


def test_verification_on_all_threads_is_reported_against_the_tolerance(tmp_path):
    doc = open_document("examples:resnet")
    out = tmp_path / "net.py"
    export(doc, out)
    expected = {1: [t.clone() for t in _outputs(doc, 1)], 2: _outputs(doc, 2)}
    expected[2] = [t + 1e-3 for t in expected[2]]  # as if another thread count summed wildly
    check = run_standalone(out, doc.example_inputs, expected)
    assert check.bitwise_equal and check.threads == 2
    assert not check.threaded.within_tolerance and not check.ok
    assert "on 2 threads: not bit for bit" in str(check)


def _outputs(doc, n):
    from fxstudio.core.saving.verify import reference_outputs

    return reference_outputs(doc, n)


# --- outputs that share memory; custom operators ----------------------------------------------

#: Models whose outputs are their input, a constant, a weight, one tensor twice, a view, a
#: nested structure; none has weights that need saving but ``parameter`` and ``nested``.
SHARING = (
    "import torch\n"
    "class Identity(torch.nn.Module):\n"
    "    def forward(self, x):\n        return x\n"
    "class Constant(torch.nn.Module):\n"
    "    def forward(self, x):\n        return torch.tensor(1.0)\n"
    "class Twice(torch.nn.Module):\n"
    "    def forward(self, x):\n        y = x * 2\n        return y, y\n"
    "class Parameter(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n        self.w = torch.nn.Parameter(torch.randn(3))\n"
    "    def forward(self, x):\n        return self.w\n"
    "class View(torch.nn.Module):\n"
    "    def forward(self, x):\n        return x.view(-1)[:2]\n"
    "class Nested(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n        self.fc = torch.nn.Linear(3, 3)\n"
    "    def forward(self, x):\n"
    "        y = self.fc(x)\n"
    "        return {'a': (y, x), 'b': [x[0], {'c': y}]}\n"
    "class SharedBuffers(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        t = torch.randn(4)\n"
    "        self.register_buffer('whole', t)\n        self.register_buffer('part', t[:3])\n"
    "    def forward(self, x):\n        return x + self.part, self.whole\n"
    "class Add(torch.nn.Module):\n"
    "    def forward(self, x, y):\n        return x + y\n"
    "def example_inputs():\n    return (torch.randn(2, 3),)\n"
)


@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize(
    "name", ["Identity", "Constant", "Twice", "Parameter", "View", "Nested", "SharedBuffers"]
)
def test_a_model_whose_outputs_share_memory_saves_and_verifies(
    tmp_path, write_model, name, frontend
):
    """safetensors refuses tensors that share memory: the check's outputs (an input returned,
    one tensor twice, the same constant on each run) and the weights (two views of one
    buffer) are written as copies where they share."""
    spec = f"{write_model(SHARING)}:{name}"
    doc = open_document(OpenRequest(spec, frontend))
    out = tmp_path / f"{name.lower()}.py"
    export(doc, out)
    check = verify_standalone(out, doc)
    assert check.ok, check
    inputs, expected = original_outputs(spec)
    assert run_standalone(out, inputs, expected).bitwise_equal


def test_one_tensor_given_for_two_inputs(tmp_path, write_model):
    x = torch.randn(2, 3)
    doc = open_document(OpenRequest(f"{write_model(SHARING)}:Add", inputs=("2x3", "2x3")))
    out = tmp_path / "add.py"
    export(doc, out)
    check = run_standalone(out, (x, x), [x + x])
    assert check.bitwise_equal, check


def test_a_failure_in_the_fresh_process_names_the_exception(tmp_path):
    out = tmp_path / "broken.py"
    export(open_document("examples:simple"), out)
    out.write_text(out.read_text().replace("def load(", "def load(missing, "))
    with pytest.raises(ExportError) as info:
        verify_standalone(out, open_document("examples:simple"))
    assert "TypeError: load() missing 1 required positional argument" in str(info.value)


def _custom_op_model(tmp_path, write_model, monkeypatch):
    """A model that calls an operator its package registers (as transformers registers
    ``torch.ops.transformers.grouped_mm_fallback`` for its mixture-of-experts layers)."""
    pkg = tmp_path / "site" / "fxs_ops"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text(
        "import torch\n"
        "@torch.library.custom_op('fxs_ops::scaled_sum', mutates_args=())\n"
        "def scaled_sum(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:\n"
        "    return (x * w).sum(-1)\n"
        "@scaled_sum.register_fake\n"
        "def _(x, w):\n    return x.new_empty(x.shape[:-1])\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "site"))  # for the fresh process
    return write_model(
        "import torch\nimport fxs_ops.kernels\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n        self.w = torch.nn.Parameter(torch.randn(3))\n"
        "    def forward(self, x):\n"
        "        return torch.ops.fxs_ops.scaled_sum(torch.relu(x), self.w)\n"
        "def example_inputs():\n    return (torch.randn(2, 3),)\n"
    )


@pytest.mark.parametrize("frontend", ["fx", "export"])
def test_a_saved_module_imports_what_registers_its_custom_operators(
    tmp_path, write_model, monkeypatch, frontend
):
    path = _custom_op_model(tmp_path, write_model, monkeypatch)
    doc = open_document(OpenRequest(f"{path}:Net", frontend))
    out = tmp_path / "net.py"
    export(doc, out)
    source = out.read_text()
    assert (
        "# The forward calls operators that importing these modules registers:\n"
        "import fxs_ops.kernels  # torch.ops.fxs_ops.scaled_sum\n"
    ) in source
    assert "it needs torch, safetensors and fxs_ops" in source
    check = verify_standalone(out, doc)  # a fresh process that never imported fxs_ops
    assert check.ok, check
    code = tmp_path / "forward.py"
    export(doc, code, "code")
    assert "import fxs_ops.kernels  # torch.ops.fxs_ops.scaled_sum" in code.read_text()


def test_an_operator_the_model_file_registers_cannot_be_imported(tmp_path, write_model):
    from fxstudio.core.saving.codegen import CodegenError

    path = write_model(
        "import torch\n"
        "@torch.library.custom_op('fxs_file_ops::double', mutates_args=())\n"
        "def double(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n        return torch.ops.fxs_file_ops.double(x)\n"
        "def example_inputs():\n    return (torch.randn(2, 3),)\n"
    )
    doc = open_document(f"{path}:Net")
    with pytest.raises(CodegenError, match="fxs_file_ops.double, an operator your model file"):
        export(doc, tmp_path / "net.py")
    assert not (tmp_path / "net.py").exists()
