"""ui/ and resources/ ship inside the wheel and are found through importlib.resources."""

import os
import subprocess
import sys
import zipfile

from tests.conftest import ROOT


def test_wheel_contains_forms_and_resources_and_they_load(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = dist.glob("fxstudio-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in [
        "fxstudio/ui/main_window.ui",
        "fxstudio/ui/open_dialog.ui",
        "fxstudio/resources/icons/fxstudio.svg",
        "fxstudio/resources/examples/resnet.py",
        "fxstudio/resources/examples/branchy.py",
        "fxstudio/resources/examples/thumbs/resnet.png",
        "fxstudio/core/model/loading.py",
        "fxstudio/qt/window/main_window.py",
        "fxstudio/core/share/report.js",  # the HTML report's script and style (package data)
        "fxstudio/core/share/report.css",
    ]:
        assert required in names, required
    assert not any(n.startswith("tests/") for n in names)
    # every module of the package: a subpackage left out of pyproject's list would be missing
    for source in (ROOT / "fxstudio").rglob("*.py"):
        assert source.relative_to(ROOT).as_posix() in names, source

    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    check = (
        "import importlib.resources as r, fxstudio\n"
        "assert fxstudio.__file__.startswith(TARGET), fxstudio.__file__\n"
        "assert r.files('fxstudio.ui').joinpath('main_window.ui').is_file()\n"
        "from fxstudio.core.model.loading import load_model\n"
        "from fxstudio.core.model.modelspec import list_examples\n"
        "assert 'resnet' in list_examples()\n"
        "print(type(load_model('examples:resnet').module).__name__)\n"
    )
    check = f"TARGET = {str(target)!r}\n" + check
    env = dict(os.environ, PYTHONPATH=str(target))
    out = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Model"


def test_the_set_up_installs_every_model_zoo():
    """``make`` installs the torch/torchvision pair, timm, transformers and diffusers: the zoo
    tests that skip where one is missing must run here, not skip (a set-up that lost one fails
    this test instead)."""
    import importlib

    import torch

    for name in ("torchvision", "timm", "transformers", "diffusers"):
        importlib.import_module(name)
    import torchvision.models as tvm

    # torchvision's C++ ops are registered for this very torch (a mismatched pair fails here)
    assert torch.ops.torchvision.nms is not None
    assert "resnet18" in tvm.list_models()
