"""The frozen bundle (make package builds it, then runs this): it starts with no Python
packages on the path, traces and lays out a built-in example, saves it as a Python module
that runs, opens its window offscreen, and stays inside the size budget."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.bundle

MAX_UNPACKED_MB = 850
MAX_COMPRESSED_MB = 220


def _bundle() -> Path:
    found = sorted((ROOT / "build" / "bundle").glob("fxstudio-*-linux-*"))
    if not found:
        pytest.fail("no bundle in build/bundle: run make package")
    return found[-1]


def _run(app: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # No venv, no PYTHONPATH, a fresh HOME: only what the bundle carries.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [str(app), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_frozen_app_works_without_python_packages(tmp_path) -> None:
    bundle = _bundle()
    app = bundle / "fxstudio" / "fxstudio"
    shown = _run(app, "show", "examples:resnet", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "layer1_0_conv1" in shown.stdout
    laid = _run(
        app, "layout", "examples:resnet", "--expanded", "--json", "layout.json", cwd=tmp_path
    )
    assert laid.returncode == 0, laid.stderr  # graphviz's dot, from inside the bundle
    layout = json.loads((tmp_path / "layout.json").read_text())
    assert layout["engine"] == "dot" and "layer1_0_conv1" in layout["nodes"]
    saved = _run(app, "export", "examples:resnet", "-o", "resnet_out.py", cwd=tmp_path)
    assert saved.returncode == 0, saved.stderr
    # the saved module runs without fxstudio (here with this test's Python and torch)
    check = (
        "import torch, resnet_out\nprint(tuple(resnet_out.load()(torch.randn(1, 3, 32, 32)).shape))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", check],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert ran.returncode == 0, ran.stderr
    shot = _run(app, "examples:resnet", "--screenshot", "window.png", cwd=tmp_path)
    assert shot.returncode == 0, shot.stderr
    assert (tmp_path / "window.png").stat().st_size > 20_000  # the window, drawn offscreen


def test_the_bundle_is_inside_its_size_budget() -> None:
    bundle = _bundle()
    files = [f for f in bundle.rglob("*") if f.is_file() and not f.is_symlink()]
    unpacked = sum(f.stat().st_size for f in files) / 2**20  # MiB, as du -sm
    (tarball,) = (ROOT / "dist").glob(f"{bundle.name}.tar.zst")
    packed = tarball.stat().st_size / 2**20
    print(f"bundle {unpacked:.0f} MB unpacked, {packed:.0f} MB compressed")
    assert unpacked <= MAX_UNPACKED_MB and packed <= MAX_COMPRESSED_MB
    for needed in (
        "install.sh",
        "io.github.fxstudio.fxstudio.desktop",
        "io.github.fxstudio.fxstudio.metainfo.xml",
        "io.github.fxstudio.fxstudio.svg",
    ):
        assert (bundle / needed).is_file(), needed


def test_install_sh_installs_into_a_home_and_uninstalls(tmp_path) -> None:
    bundle = _bundle()
    prefix = tmp_path / "local"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PREFIX": str(prefix)}
    done = subprocess.run(
        ["sh", str(bundle / "install.sh")], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    desktop = prefix / "share/applications/io.github.fxstudio.fxstudio.desktop"
    assert f"Exec={prefix}/opt/fxstudio/fxstudio" in desktop.read_text()
    assert subprocess.run(["desktop-file-validate", str(desktop)]).returncode == 0
    version = subprocess.run(
        [str(prefix / "bin/fxstudio"), "--version"], capture_output=True, text=True, env=env
    )
    assert version.returncode == 0 and version.stdout.startswith("fxstudio ")
    gone = subprocess.run(
        ["sh", str(bundle / "install.sh"), "--uninstall"], env=env, capture_output=True, text=True
    )
    assert gone.returncode == 0 and not (prefix / "opt/fxstudio").exists()
