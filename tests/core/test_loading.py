import json
import os
import subprocess
import sys

import pytest
import torch

from fxstudio.core.errors import InputSpecError, LoadError
from fxstudio.core.model.loading import load_model
from fxstudio.core.model.modelspec import (
    InputSpec,
    list_examples,
    make_inputs,
    parse_input_spec,
    parse_spec,
)


def test_parse_spec_kinds():
    assert parse_spec("examples:resnet").kind == "example"
    assert parse_spec("models/net.py:Net").kind == "file"
    assert parse_spec("net.py:Net") == parse_spec("net.py:Net")
    assert parse_spec("torchvision.models:resnet18").location == "torchvision.models"
    assert parse_spec("saved/model.pt2").kind == "pt2"


@pytest.mark.parametrize("bad", ["", "examples:", "model.py:1abc", "pkg.mod:"])
def test_bad_spec_says_what_to_write(bad):
    with pytest.raises(LoadError) as info:
        load_model(bad)
    assert "examples" in str(info.value) or "name" in str(info.value)


def test_builtin_examples_are_all_there():
    assert {"simple", "negrelu", "resnet", "transformer", "branchy"} <= set(list_examples())


@pytest.mark.parametrize("name", ["simple", "negrelu", "resnet", "transformer", "branchy"])
def test_examples_load_with_their_inputs(name):
    loaded = load_model(f"examples:{name}")
    assert isinstance(loaded.module, torch.nn.Module)
    assert loaded.example_inputs and all(isinstance(t, torch.Tensor) for t in loaded.example_inputs)


def test_unknown_example_lists_the_examples():
    with pytest.raises(LoadError, match="resnet"):
        load_model("examples:nosuch")


def test_file_spec_class_and_factory(write_model):
    path = write_model(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self, width=3):\n"
        "        super().__init__(); self.fc = torch.nn.Linear(width, 2)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
        "def make():\n"
        "    return Net(5)\n"
        "def example_inputs():\n"
        "    return torch.ones(1, 3)\n"
    )
    net = load_model(f"{path}:Net")
    assert net.module.fc.in_features == 3
    assert net.example_inputs[0].shape == (1, 3)  # a bare tensor becomes a 1-tuple
    made = load_model(f"{path}:make", inputs=["4x5"])
    assert made.module.fc.in_features == 5
    assert made.example_inputs[0].shape == (4, 5)


def _weights_digest(module) -> str:
    """A hash of the weights' bytes: equal weights, bit for bit (no float sums to reorder)."""
    import hashlib

    h = hashlib.sha256()
    for name, p in module.state_dict().items():
        h.update(name.encode())
        h.update(p.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def test_same_seed_same_weights_in_another_process():
    code = (
        "import hashlib, torch\n"
        "from fxstudio.core.model.loading import load_model\n"
        "m = load_model('examples:simple', seed=7).module\n"
        "h = hashlib.sha256()\n"
        "for name, p in m.state_dict().items():\n"
        "    h.update(name.encode())\n"
        "    h.update(p.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())\n"
        "print(h.hexdigest())\n"
    )
    here = _weights_digest(load_model("examples:simple", seed=7).module)
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == here
    assert _weights_digest(load_model("examples:simple", seed=8).module) != here


def test_missing_file():
    with pytest.raises(LoadError, match="No such file: nowhere/model.py"):
        load_model("nowhere/model.py:Net")


def test_syntax_error_names_file_and_line(write_model):
    path = write_model("import torch\n\nclass Net(torch.nn.Module)\n    pass\n")
    with pytest.raises(LoadError) as info:
        load_model(f"{path}:Net")
    assert f"{path}:3" in str(info.value)
    assert info.value.location.lineno == 3
    assert "class Net(torch.nn.Module)" in str(info.value)


def test_error_while_importing_points_at_the_line(write_model):
    path = write_model("import torch\nx = 1\nraise ValueError('boom')\n")
    with pytest.raises(LoadError) as info:
        load_model(f"{path}:Net")
    assert info.value.location.lineno == 3
    assert "ValueError: boom" in str(info.value)


def test_missing_name_lists_what_the_file_defines(write_model):
    path = write_model(
        "import torch\nclass Encoder(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x\n"
    )
    with pytest.raises(LoadError, match="It defines: Encoder"):
        load_model(f"{path}:Model")
    with pytest.raises(LoadError, match=r"has no 'Encodr'. Did you mean: Encoder\?"):
        load_model(f"{path}:Encodr")


@pytest.mark.parametrize(
    "spec, close",
    [
        ("torch.nn:Linaer", "Did you mean: Linear"),  # a class torch.nn imports from a submodule
        ("torch.nn:conv2d", "Did you mean: Conv2d"),  # case
        ("examples:resnt", "Did you mean: examples:resnet?"),
    ],
)
def test_a_mistyped_name_gets_the_close_ones(spec, close):
    """torchvision.models:resnet19 suggests resnet18 the same way (where torchvision is)."""
    with pytest.raises(LoadError) as info:
        load_model(spec)
    assert close in str(info.value)


def _torchvision_imports() -> bool:
    try:
        import torchvision.models  # noqa: F401
    except Exception:  # not installed, or built for another torch
        return False
    return True


@pytest.mark.skipif(not _torchvision_imports(), reason="torchvision does not import")
def test_torchvision_resnet19_suggests_resnet18():
    with pytest.raises(LoadError, match="Did you mean: resnet18"):
        load_model("torchvision.models:resnet19")


def test_constructor_with_required_arguments(write_model):
    path = write_model(
        "import torch\nclass Net(torch.nn.Module):\n"
        "    def __init__(self, width):\n        super().__init__()\n"
    )
    with pytest.raises(LoadError, match="factory function"):
        load_model(f"{path}:Net")


def test_constructor_error_points_at_user_line(write_model):
    path = write_model(
        "import torch\nclass Net(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.fc = torch.nn.Linear(-1, 2)\n"
    )
    with pytest.raises(LoadError) as info:
        load_model(f"{path}:Net")
    assert info.value.location.lineno == 5


def test_factory_must_return_a_module(write_model):
    path = write_model("def make():\n    return 42\n")
    with pytest.raises(LoadError, match="not an nn.Module"):
        load_model(f"{path}:make")


def test_module_spec():
    loaded = load_model("torch.nn:Identity", inputs=["2x2"])
    assert isinstance(loaded.module, torch.nn.Identity)
    with pytest.raises(LoadError, match="No module named 'not_a_package_xyz'"):
        load_model("not_a_package_xyz.models:Net")


def test_pt2_spec_loads_exported_program(tmp_path):
    loaded = load_model("examples:simple")
    ep = torch.export.export(loaded.module, loaded.example_inputs)
    path = tmp_path / "simple.pt2"
    torch.export.save(ep, str(path))
    again = load_model(str(path))
    assert again.exported is not None
    (x,) = again.example_inputs
    torch.testing.assert_close(again.module(x), loaded.module(x))
    bad = tmp_path / "bad.pt2"
    bad.write_bytes(b"not a zip")
    with pytest.raises(LoadError, match="not a readable torch.export program"):
        load_model(str(bad))


def test_input_specs():
    assert parse_input_spec("1x3x224x224") == InputSpec((1, 3, 224, 224), torch.float32)
    assert parse_input_spec("1x16:int64") == InputSpec((1, 16), torch.int64)
    assert parse_input_spec(":float16") == InputSpec((), torch.float16)
    a, b, c = make_inputs(["2x3", "4:int64", "2:bool"], seed=1)
    assert a.shape == (2, 3) and a.dtype == torch.float32
    assert b.dtype == torch.int64 and int(b.min()) >= 0 and int(b.max()) < 10
    assert c.dtype == torch.bool
    torch.testing.assert_close(make_inputs(["2x3"], seed=1)[0], a)


@pytest.mark.parametrize("bad", ["1x", "axb", "1x3:float99", "", "1x3:"])
def test_bad_input_specs(bad):
    with pytest.raises(InputSpecError):
        parse_input_spec(bad)


_OUTPUT_MODULE = """
from dataclasses import dataclass

import torch


@dataclass
class Out:
    total: torch.Tensor
    twice: torch.Tensor


torch.export.register_dataclass(Out, serialized_type_name="fxs_outputs.Out")


class Net(torch.nn.Module):
    def forward(self, x):
        return Out(x.sum(1), x * 2)
"""


def _show(path, env_path=None):
    env = {**os.environ, "PYTHONPATH": env_path or ""}
    return subprocess.run(
        [sys.executable, "-m", "fxstudio", "show", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
    )


def test_a_program_returning_a_library_type_opens_in_a_process_that_never_imported_it(tmp_path):
    # (torch reads the type's name only once its module is imported: fxstudio imports it)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "fxs_outputs.py").write_text(_OUTPUT_MODULE)
    code = (
        "import sys, torch; sys.path.insert(0, sys.argv[1]); import fxs_outputs;"
        "ep = torch.export.export(fxs_outputs.Net(), (torch.ones(2, 3),));"
        "torch.export.save(ep, sys.argv[2])"
    )
    path = tmp_path / "out.pt2"
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "lib"), str(path)], check=True)

    opened = _show(path, env_path=str(tmp_path / "lib"))
    assert opened.returncode == 0, opened.stderr
    targets = {n["target"] for n in json.loads(opened.stdout)["nodes"]}
    assert {"torch.ops.aten.sum.dim_IntList", "torch.ops.aten.mul.Tensor"} <= targets, targets

    lost = _show(path)  # the module is nowhere to be imported: said, by name
    assert lost.returncode == 2
    assert "fxs_outputs.Out" in lost.stderr and "PYTHONPATH" in lost.stderr, lost.stderr
    assert "damaged" not in lost.stderr and "Traceback" not in lost.stderr


def test_a_transformers_program_opens_in_a_fresh_process(tmp_path):
    """A transformers model's program returns its ModelOutput: transformers is imported to
    read it (a fresh ``fxstudio`` process imports none of it for a .pt2)."""
    pytest.importorskip("transformers")
    code = (
        "import sys, torch\n"
        "from transformers import GPT2Config, GPT2Model\n"
        "cfg = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, use_cache=False)\n"
        "m = GPT2Model(cfg).eval()\n"
        "ep = torch.export.export(m, (torch.randint(0, 64, (1, 8)),), strict=False)\n"
        "torch.export.save(ep, sys.argv[1])\n"
    )
    path = tmp_path / "gpt2.pt2"
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    opened = _show(path)
    assert opened.returncode == 0, opened.stderr
    modules = {n["module_path"] for n in json.loads(opened.stdout)["nodes"]}
    assert "ln_f" in modules, modules
