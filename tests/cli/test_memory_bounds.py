"""Nothing a user types takes the machine down (issue 54), in real processes with a memory
limit: a run the estimate says cannot fit is refused before it starts, with both numbers; a
run whose memory grows past what is available is stopped by fxstudio, not by the kernel; a
configuration of absurd depth is refused before it is built; an archive whose records
cannot be held is refused from its directory.

The limit is an address-space limit (``ulimit -v``: what fxstudio's own memory bound uses),
set a few GiB above what the process maps once torch is imported -- or, where this process
may make one (root, cgroup v1 or v2), a control group with a memory limit: the kernel's
out-of-memory killer acts there, so a run fxstudio did not stop would be killed (status
-9), the very fault of the issue."""

import os
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_fxstudio

GIB = 2**30


@pytest.fixture(scope="module")
def mapped_at_start() -> int:
    """Bytes a process maps once fxstudio's command line, torch and transformers are imported."""
    probe = (
        "import fxstudio.cli, torch, transformers\n"
        "from fxstudio.core.process.budget import mapped_bytes\n"
        "print(mapped_bytes())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return int(out.stdout.split()[-1])


def _limit(total: int):
    def preexec() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (total, total))

    return preexec


@pytest.fixture
def limited(mapped_at_start):
    """``run_fxstudio`` in a process that may map 3 GiB more than it does at start."""

    def run(*args: str):
        return run_fxstudio(*args, preexec=_limit(mapped_at_start + 3 * GIB))

    return run


WIDE = (
    "import torch\n"
    "class Net(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.up = torch.nn.Linear(16, 4096)\n"
    "    def forward(self, x):\n"
    "        return self.up(x).relu()\n"
)


def test_a_measurement_the_estimate_says_cannot_fit_is_refused_before_it_starts(
    limited, write_model
):
    """200,000 rows through a 4,096-wide layer: 6 GiB of activations where 3 are free."""
    path = write_model(WIDE)
    result = limited("memory", f"{path}:Net", "--input", "200000x16", "--measure")
    assert result.returncode == 2, result.stderr
    err = result.stderr
    assert "Measuring the memory of a run at these inputs would take about 6." in err
    assert "GiB is available, so it was not started." in err
    assert "smaller input" in err and "--module PATH" in err and "--no-weights" in err
    assert ": peak 6." in result.stdout  # the estimate is shown all the same
    assert "not measured: Measuring the memory of a run" in result.stdout


def test_then_a_smaller_input_measures(limited, write_model):
    path = write_model(WIDE)
    result = limited("memory", f"{path}:Net", "--input", "20x16", "--measure")
    assert result.returncode == 0, result.stderr
    assert "measured" in result.stdout


def test_a_profile_and_a_step_the_estimate_says_cannot_fit_are_refused(limited, write_model):
    path = write_model(WIDE)
    for command in ("profile", "step"):
        result = limited(command, f"{path}:Net", "--input", "200000x16")
        assert result.returncode == 2, result.stderr
        assert "so it was not started" in result.stderr, result.stderr


HIDDEN = (
    "import torch\n"
    "@torch.fx.wrap\n"
    "def scratch(x):  # 4 GiB the graph does not show: one node, its output small\n"
    "    big = torch.ones(2**30)\n"
    "    return x + big[:1]\n"
    "class Net(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return scratch(x)\n"
    "def example_inputs():\n"
    "    return (torch.randn(4),)\n"
)


def _cgroup(limit: int) -> Path | None:
    """A new memory control group limited to ``limit`` bytes (cgroup v1 or v2), or None
    where this process may not make one."""
    with open("/proc/self/cgroup") as f:
        lines = f.read().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            base, limit_file = Path("/sys/fs/cgroup/memory") / path.lstrip("/"), "limit_in_bytes"
        elif controllers == "" and Path("/sys/fs/cgroup/cgroup.controllers").exists():
            base, limit_file = Path("/sys/fs/cgroup") / path.lstrip("/"), "max"
        else:
            continue
        group = base.parent / f"fxstudio-test-{os.getpid()}"
        try:
            group.mkdir(exist_ok=True)
            (group / f"memory.{limit_file}").write_text(str(limit))
        except OSError:
            return None
        return group
    return None


def test_a_run_past_what_is_available_is_stopped_by_fxstudio_not_the_kernel(write_model):
    """The estimate sees 4 floats; the node's code allocates 4 GiB (run as the open works
    out its shapes), in a control group of 3 GiB.  The kernel would kill the process halfway
    (status -9, the window and the work gone); fxstudio's bound stops the allocation, and
    the process says so and lives."""
    group = _cgroup(3 * GIB)
    if group is None:
        pytest.skip("this process may not make a memory control group (root, cgroups)")
    try:
        path = write_model(HIDDEN)

        def into_group() -> None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

        result = run_fxstudio("memory", f"{path}:Net", "--measure", preexec=into_group)
    finally:
        group.rmdir()
    assert result.returncode == 2, (result.returncode, result.stderr)  # not -9: killed
    assert "Out of memory while running the model at node 'scratch'" in result.stderr
    assert "it asked for 4.0 GiB" in result.stderr and "GiB is available)" in result.stderr


def test_an_absurd_depth_is_refused_before_it_is_built(limited):
    """GPT-2 with 10,000 layers: refused in seconds, with the numbers and a depth that fits
    -- it used to build for minutes and grow the process by 300 MB/s."""
    result = limited("show", "hf:gpt2(n_layer=10000)")
    assert result.returncode == 2, result.stderr
    err = result.stderr
    assert "hf:gpt2(n_layer=10000) has 10,000 layers (130,006 modules)" in err
    assert "GiB is available, so it was not built. Open fewer layers: hf:gpt2(n_layer=" in err
    fits = err.split("hf:gpt2(n_layer=")[-1].split(")")[0]
    assert 1 <= int(fits) < 10000


def _bomb(path: Path, size: int) -> Path:
    """A ``.pt2``-shaped zip whose program JSON is ``size`` bytes of whitespace, compressed
    to a thousandth: valid JSON, absurd against the file."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        with z.open("bomb/models/model.json", "w", force_zip64=True) as f:
            chunk = b" " * (16 * 2**20)
            for _ in range(size // len(chunk)):
                f.write(chunk)
            f.write(b"{}")
    return path


def test_a_hostile_archive_is_refused_from_its_directory(limited, tmp_path):
    bomb = _bomb(tmp_path / "bomb.pt2", 512 * 2**20)
    assert bomb.stat().st_size < 8 * 2**20  # a small file
    result = limited("show", str(bomb))
    assert result.returncode == 2, result.stderr
    assert "bomb.pt2's record bomb/models/model.json is 512.0 MiB once read, from" in (
        result.stderr
    )
    assert "was not written by torch.export.save()" in result.stderr
