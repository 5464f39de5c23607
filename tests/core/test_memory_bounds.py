"""Memory taken only where it fits (issue 54): the process's budget and the bound on model
code (:mod:`fxstudio.core.process.budget`), a model built once with its tensors counted
(:func:`fxstudio.core.fxcompat.within_bytes`, :mod:`fxstudio.core.model.sizing`), a run's
need from the estimate (:mod:`fxstudio.core.memory.fits`), an archive sized from its
directory (:mod:`fxstudio.core.process.archives`).  The processes held to a limit are in
``tests/cli/test_memory_bounds.py``."""

import resource
import subprocess
import sys
import zipfile

import pytest
import torch
from torch import nn

from fxstudio.core.flows import open_document
from fxstudio.core.memory.fits import Holds, Need, require_fits, run_need
from fxstudio.core.model import sizing
from fxstudio.core.model.loading import load_model
from fxstudio.core.process import budget
from fxstudio.core.process.archives import archive_problem
from fxstudio.core.process.guard import Overbudget, WontFit, format_bytes


def test_model_code_is_bounded_by_what_is_available_and_the_limit_is_put_back():
    before = resource.getrlimit(resource.RLIMIT_AS)
    avail = budget.available_memory()
    with budget.bounded():
        with budget.bounded():  # nested: the outer one's bound
            inner = budget.current_bound()
        assert budget.current_bound() == inner
        mapped = budget.mapped_bytes()
        assert inner is not None and mapped is not None
        # what it may still map: nine tenths of what was available (give or take the
        # pages mapped since the bound was set)
        assert abs((inner - mapped) - budget.SHARE * avail) < 0.05 * avail
        with pytest.raises(RuntimeError, match="can't allocate memory"):
            torch.empty(int(0.95 * avail), dtype=torch.uint8)  # granted lazily outside
    assert budget.current_bound() is None
    assert resource.getrlimit(resource.RLIMIT_AS) == before


def test_a_build_counts_its_tensors_and_stops_before_the_one_past_the_limit():
    torch.manual_seed(0)
    plain = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 64))
    torch.manual_seed(0)
    with sizing.within_bytes(10**6):
        counted = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 64))
    for a, b in zip(plain.parameters(), counted.parameters(), strict=True):
        assert torch.equal(a, b)  # the same tensors, the same random numbers

    kept = []

    def build() -> None:
        kept.append(nn.Linear(1024, 1024))  # 4 MiB: made, then emptied
        kept.append(nn.Linear(1024, 2**20))  # 4 GiB: registered, never written

    with pytest.raises(Overbudget) as stopped:
        with sizing.within_bytes(2**26):
            build()
    assert stopped.value.made > 2**32
    assert kept[0].weight.untyped_storage().nbytes() == 0  # given back at once


def test_a_model_too_large_for_its_weights_is_built_once_then_structure_only(monkeypatch):
    monkeypatch.setattr(sizing, "available_memory", lambda: 10 * 2**20)  # 10 MiB
    built = []

    def build() -> nn.Module:
        built.append(1)
        return nn.Sequential(*[nn.Linear(512, 512) for _ in range(12)])  # 12 MiB of weights

    module, why = sizing.build_within_memory(build)
    assert len(built) == 2  # stopped, then built without its weights
    assert why == (
        "its weights (12.0 MiB) would not fit in the 8.0 MiB they may take (80% of the 10.0 "
        "MiB available)"
    )
    small, none = sizing.build_within_memory(lambda: nn.Linear(4, 4))
    assert none is None and not small.weight.is_meta
    # larger than a first build may make, and it fits: sized on meta, then built for real
    monkeypatch.setattr(sizing, "FIRST_BUILD", 2**20)
    monkeypatch.setattr(sizing, "available_memory", lambda: 100 * 2**20)
    built.clear()
    module, why = sizing.build_within_memory(build)
    assert len(built) == 3 and why is None
    assert not any(p.is_meta for p in module.parameters())


def test_a_file_model_is_built_once(write_model):
    """It used to be built on meta to size it, then again for real: 2x the build's time."""
    path = write_model(
        "import torch\n"
        "BUILT = []\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        BUILT.append(1)\n"
        "        self.fc = torch.nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n"
    )
    loaded = load_model(f"{path}:Net", ["2x4"])
    assert len(loaded.module.__class__.__init__.__globals__["BUILT"]) == 1


def test_a_configuration_of_absurd_depth_is_sized_by_two_probes(monkeypatch):
    from transformers import AutoConfig, AutoModel

    config = AutoConfig.for_model("gpt2", n_layer=10000)
    depth = sizing.depth_of(config, AutoModel.from_config)
    assert depth is not None
    assert (depth.layers, depth.modules, depth.modules_of[1]) == (10000, 130006, 13)
    one = AutoModel.from_config(AutoConfig.for_model("gpt2", n_layer=1))
    layer = sum(p.numel() * 4 for p in one.h[0].parameters())
    assert depth.weight_bytes == sum(p.numel() * 4 for p in one.parameters()) + 9999 * layer
    monkeypatch.setattr(sizing, "available_memory", lambda: 8 * 2**30)
    with pytest.raises(sizing.CaptureTooBig) as refused:
        sizing.check_depth("hf:gpt2(n_layer=10000)", depth, False, lambda k: f"k={k}")
    said = str(refused.value)
    assert said.startswith("hf:gpt2(n_layer=10000) has 10,000 layers (130,006 modules)")
    assert "8.0 GiB is available, so it was not built. Open fewer layers: k=" in said
    fits = int(said.split("k=")[1].split(" ")[0])  # in half of it (the rates are the lowest)
    assert depth.need(False, fits) <= 4 * 2**30 < depth.need(False, fits + 100)


def test_a_capture_is_stopped_when_what_it_takes_projects_past_what_is_available():
    """Measured as it runs: the bytes taken per module called, times the modules.  In a
    fresh process: the watch reads the resident memory, which a long-lived one (a test
    worker that has freed gigabytes) may not grow at all while it captures."""
    script = (
        "import pytest\n"
        "from fxstudio.core.flows import open_document\n"
        "from fxstudio.core.graph.request import OpenRequest\n"
        "from fxstudio.core.model import sizing, zoo\n"
        "sizing.WATCH_FROM, sizing.WATCH_AFTER = 10, 8\n"
        "sizing.available_memory = lambda: 2**20  # 1 MiB\n"
        "sizing.CAPTURE_BYTES = {'export': 0, 'fx': 0}  # (not refused before it starts)\n"
        "zoo.check_depth = lambda *_: None\n"
        "with pytest.raises(sizing.CaptureTooBig) as stopped:\n"
        "    open_document(OpenRequest('hf:gpt2(n_layer=8)', weights=False))\n"
        "print(stopped.value)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout
    assert said.startswith("Capturing hf:gpt2(n_layer=8) stopped after ")
    assert "of its 110 modules" in said and "1.0 MiB is available" in said


def test_a_run_needs_its_peak_or_every_value_and_the_copies_it_makes():
    doc = open_document("examples:resnet")
    peak, values = run_need(doc), run_need(doc, holds=Holds.VALUES)
    copied = run_need(doc, copies=1)
    assert peak is not None and values is not None and copied is not None
    assert 0 < peak.bytes < values.bytes
    params = sum(p.numel() * 4 for p in doc.graph_module.parameters())
    buffers = sum(b.numel() * b.element_size() for b in doc.graph_module.buffers())
    assert copied.bytes - peak.bytes == params + buffers
    with pytest.raises(WontFit) as refused:
        require_fits("Running it", Need(2**60))
    assert str(refused.value).startswith("Running it would take about 1024.0 PiB"[:27])
    assert "is available, so it was not started" in str(refused.value)
    require_fits("Running it", None)  # not known: not refused


def test_an_archive_is_sized_from_its_directory(tmp_path, monkeypatch):
    fine = tmp_path / "fine.pt2"
    with zipfile.ZipFile(fine, "w") as z:
        z.writestr("fine/models/model.json", "{}" * 1000)
        z.writestr("fine/data/weights/weight_0", b"\0" * 4096)
    assert archive_problem(str(fine)) is None
    assert archive_problem(str(tmp_path / "missing.pt2")) is None  # (the reader says why)
    monkeypatch.setattr("fxstudio.core.process.archives.available_memory", lambda: 10_000)
    said = archive_problem(str(fine))
    assert said is not None and said.startswith(
        f"Reading fine.pt2 would take about {format_bytes(6 * 2000)}: its program's records"
    )
