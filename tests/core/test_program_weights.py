"""A ``.pt2`` program's weights read lazily (issue 38): opened with its weights, each is
memory-mapped from the archive (copy on write: an edit of a weight never reaches the file),
so a program of hundreds of MB opens in a fraction of that memory; opened structure only,
the archive is the checkpoint one module's weights are read from (``--module``, Run this
module), and a ``.py`` saved without weights loads them from the same ``.pt2``.  The programs
are exported here; nothing is downloaded."""

import importlib.util
import json
import subprocess
import sys
import zipfile

import pytest
import torch
from torch import nn

from fxstudio import cli
from fxstudio.core.errors import UserError
from fxstudio.core.flows import OpenRequest, open_document
from fxstudio.core.flows.run import part_of
from fxstudio.core.fxcompat import programs
from fxstudio.core.model import loading
from fxstudio.core.saving.export import export


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.BatchNorm1d(width)  # buffers: running mean and var
        self.register_buffer("scale", torch.full((width,), 0.5), persistent=False)

    def forward(self, x):
        return torch.relu(self.norm(self.fc(x))) * self.scale


class Stack(nn.Module):
    def __init__(self, width=32, depth=3):
        super().__init__()
        self.layers = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, 4, bias=False)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    torch.manual_seed(3)
    model = Stack().eval()
    for layer in model.layers:  # running statistics that are not the defaults
        layer.norm.running_mean.uniform_(-1, 1)
        layer.norm.running_var.uniform_(0.5, 2)
    path = tmp_path_factory.mktemp("pt2") / "stack.pt2"
    torch.export.save(torch.export.export(model, (torch.randn(5, 32),), strict=False), path)
    return path


def test_weights_are_mapped_from_the_archive_and_equal_torchs(program):
    theirs = torch.export.load(str(program))
    ours = programs.load_program(str(program))
    assert ours.state_dict.keys() == theirs.state_dict.keys()
    for name, value in theirs.state_dict.items():
        assert torch.equal(ours.state_dict[name], value), name
        assert type(ours.state_dict[name]) is type(value), name  # a Parameter stays one
    weight = ours.state_dict["layers.0.fc.weight"]
    assert weight.requires_grad and weight.untyped_storage().nbytes() == weight.nbytes
    # copy on write: a weight changed in this process leaves the file as it was
    before = program.read_bytes()
    with torch.no_grad():
        weight.add_(1.0)
    assert program.read_bytes() == before
    assert torch.equal(
        torch.export.load(str(program)).state_dict["layers.0.fc.weight"],
        theirs.state_dict["layers.0.fc.weight"],
    )


def test_a_compressed_archive_is_read_as_torch_reads_it(program, tmp_path):
    """An archive whose records are compressed (zipped again by another tool) cannot be
    mapped: its weights are read, with the same values."""
    squeezed = tmp_path / "squeezed.pt2"
    with zipfile.ZipFile(program) as src, zipfile.ZipFile(squeezed, "w") as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info), compress_type=zipfile.ZIP_DEFLATED)
    theirs = torch.export.load(str(program)).state_dict
    ours = programs.load_program(str(squeezed)).state_dict
    assert all(torch.equal(ours[k], v) for k, v in theirs.items())
    read = programs.archive_tensors(str(squeezed), ["layers.1.fc.weight"])
    assert torch.equal(read["layers.1.fc.weight"], theirs["layers.1.fc.weight"])


def test_chosen_weights_are_read_by_name(program):
    theirs = torch.export.load(str(program)).state_dict
    metas = programs.archive_tensor_metas(str(program))
    assert metas.keys() == theirs.keys()
    assert all(m.is_meta and m.shape == theirs[k].shape for k, m in metas.items())
    read = programs.archive_tensors(str(program), ["layers.2.norm.running_var", "nothing.here"])
    assert list(read) == ["layers.2.norm.running_var"]
    assert torch.equal(read["layers.2.norm.running_var"], theirs["layers.2.norm.running_var"])


def output(doc, inputs):
    with torch.no_grad():
        return doc.graph_module(*inputs)


def test_a_module_of_a_structure_only_program_runs_with_its_weights(program):
    """Structure only, the .pt2 is the document's checkpoint: layers.1 alone takes its
    weights from the archive -- the values the program opened with its weights has, so the
    same output bit for bit (the same ops on the same inputs, one process)."""
    bare = open_document(OpenRequest(str(program), weights=False))
    assert not bare.weights and bare.checkpoint == str(program)
    assert any(f"a module's weights from {program}" in n for n in bare.notes), bare.notes
    part = part_of(bare, "layers.1")
    assert part.document.weights and not part.made_up
    assert f"weights from {program}" in part.describe(), part.describe()
    full = part_of(open_document(OpenRequest(str(program))), "layers.1")
    state = part.document.graph_module.state_dict()
    assert state.keys() == full.document.graph_module.state_dict().keys()
    for name, value in full.document.graph_module.state_dict().items():
        assert torch.equal(state[name], value), name
    inputs = full.document.example_inputs
    assert torch.equal(output(part.document, inputs), output(full.document, inputs))


def test_torchs_input_check_is_in_no_module(program):
    """torch gives ``_guards_fn`` (the exported program's check of its inputs) the modules of
    its first node: it was drawn inside layers.0.fc, and layers.0 was not alike layers.1."""
    for doc in (
        open_document(OpenRequest(str(program), weights=False)),
        open_document(
            OpenRequest("tests.core.test_program_weights:Stack", "export", inputs=("5x32",))
        ),
    ):
        guard = next(n for n in doc.graph.nodes if n.target == programs.GUARD_TARGET)
        assert [path for path, _ in guard.meta["nn_module_stack"].values()] == [""]
        assert guard.name in doc.module_tree().nodes  # the model's own, in no module
        assert [part_of(doc, f"layers.{i}").alike for i in range(3)] == [3, 3, 3]


def test_the_run_docks_words_say_the_weights_come_from_the_program(program):
    from fxstudio.qt.panels.run.module import no_weights_tip, tip

    bare = open_document(OpenRequest(str(program), weights=False))
    assert "read from the program's .pt2 file" in tip(bare, "layers.0")
    assert "random weights" not in no_weights_tip(bare)


def test_a_py_saved_without_weights_loads_them_from_the_program(program, tmp_path):
    bare = open_document(OpenRequest(str(program), weights=False))
    full = open_document(OpenRequest(str(program)))
    out = tmp_path / "stack_saved.py"
    result = export(bare, out)
    assert any(f"load('{program}')" in note for note in result.notes), result.notes
    spec = importlib.util.spec_from_file_location("stack_saved", out)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.load(str(program))
    x = torch.randn(5, 32)
    with torch.no_grad():
        assert torch.equal(model(x), full.graph_module(x))


def test_a_program_gone_since_it_was_opened_is_said(program, tmp_path):
    moved = tmp_path / "moved.pt2"
    moved.write_bytes(program.read_bytes())
    bare = open_document(OpenRequest(str(moved), weights=False))
    moved.unlink()
    with pytest.raises(UserError, match="is not there any more"):
        part_of(bare, "layers.0")


def test_a_program_too_large_for_memory_opens_structure_only(program, monkeypatch):
    monkeypatch.setattr(loading, "weights_too_big", lambda _n: "its weights would not fit")
    doc = open_document(OpenRequest(str(program)))
    assert not doc.weights and doc.checkpoint == str(program)
    assert "would not fit" in doc.notes[0]
    assert part_of(doc, "layers.0").document.weights


def test_profile_a_module_of_the_program_on_the_command_line(program, capsys):
    args = ["profile", str(program), "--no-weights", "--module", "layers.2"]
    assert cli.main([*args, "--min-time", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "the module layers.2 alone" in out and f"weights from {program}" in out, out


OPEN_AND_MEASURE = """
import json, resource, sys, torch
from fxstudio.core.flows import OpenRequest, open_document
open_document(OpenRequest(sys.argv[2]))  # (what an open imports, imported)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
doc = open_document(OpenRequest(sys.argv[1]))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"weights": doc.weights, "grown": (after - before) * 1024}))
"""


def test_a_large_program_opens_without_reading_its_weights(program, tmp_path):
    """256 MiB of weights: opened with them (they fit), the open's peak memory grows by a
    fraction of that (after a small program's open has imported what an open imports) --
    the weights stay in the file until something reads them."""
    model = nn.Sequential(nn.Linear(8192, 8192, bias=False), nn.ReLU()).eval()
    path = tmp_path / "big.pt2"
    torch.export.save(torch.export.export(model, (torch.randn(2, 8192),), strict=False), path)
    del model
    done = subprocess.run(
        [sys.executable, "-c", OPEN_AND_MEASURE, str(path), str(program)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["weights"]
    assert got["grown"] < 64 * 2**20, got  # 256 MiB read would grow it by that at least
