"""Structure-only documents (issue 38): a model built on the meta device -- every shape and
dtype, no weights -- opens, edits, rewrites and saves as a session like any other, and
whatever needs values says that it has none.  The 70B test is at Llama-3-70B's real shape."""

import json
import subprocess
import sys

import pytest
import torch

from fxstudio import cli
from fxstudio.core import edits
from fxstudio.core.errors import UserError
from fxstudio.core.flows import (
    CompileRequest,
    DiffRequest,
    OpenRequest,
    ProfileOptions,
    RewriteRequest,
    RewriteSpec,
    StepRequest,
    compile_flow,
    diff_flow,
    open_document,
    profile,
    rewrite_flow,
    step_flow,
)
from fxstudio.core.graph.weights import SMALL_BUFFER
from fxstudio.core.saving.export import export
from fxstudio.core.sessions.sessionfile import save_session

SMALL_LLAMA = (
    "hf:llama(num_hidden_layers=2, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=128, "
    "attn_implementation='eager')"
)
LLAMA_70B = (
    "hf:llama(num_hidden_layers=80, hidden_size=8192, intermediate_size=28672, "
    "num_attention_heads=64, num_key_value_heads=8, vocab_size=128256)"
)


def shapes(doc):
    return [(r.name, r.shape, r.dtype) for r in doc.rows()]


@pytest.mark.parametrize(
    ("spec", "frontend"),
    [("examples:resnet", "fx"), ("examples:simple", "export"), (SMALL_LLAMA, "export")],
)
def test_without_weights_every_shape_is_the_one_with_weights(spec, frontend):
    full = open_document(OpenRequest(spec, frontend))
    bare = open_document(OpenRequest(spec, frontend, weights=False))
    assert full.weights and not bare.weights
    assert shapes(bare) == shapes(full)
    assert bare.code() == full.code()
    params = list(bare.graph_module.parameters())
    assert params and all(p.is_meta for p in params)  # no weight has memory
    # buffers the model computes keep their values when small (a saved .py's load needs
    # them: a checkpoint does not hold them)
    assert all(b.is_meta or b.numel() <= SMALL_BUFFER for b in bare.graph_module.buffers())
    assert all(t.is_meta for t in bare.example_inputs if isinstance(t, torch.Tensor))
    assert bare.to_json()["weights"] is False and full.to_json()["weights"] is True


def test_what_needs_values_says_the_document_has_none_and_what_to_do(tmp_path):
    doc = open_document(OpenRequest("examples:simple", weights=False))
    for run in (
        lambda: profile(doc, ProfileOptions()),
        lambda: step_flow(StepRequest(doc)),
        lambda: compile_flow(CompileRequest(doc.request, document=doc)),
    ):
        with pytest.raises(UserError) as caught:
            run()
        text = str(caught.value)
        assert "structure only" in text and "--no-weights" in text, text
        assert "Fake" not in text and "meta" not in text  # no fake-tensor traceback
    with pytest.raises(UserError, match="--format code"):
        export(doc, tmp_path / "bare.pt2")
    assert not (tmp_path / "bare.pt2").exists()
    code = export(doc, tmp_path / "forward.py", "code").paths[0]
    assert "def forward" in code.read_text()
    # a comparison compares the structures and shapes, and says why not the values
    diff = diff_flow(DiffRequest(doc, "examples:simple"))
    assert diff.alignment.changed() == [] and diff.values is None
    assert "structure only" in str(diff.values_problem)


def test_graph_breaks_are_found_on_fake_tensors_without_weights(write_model):
    """Dynamo runs over a structure-only model on fake tensors made from its meta weights:
    its graph breaks are found with no weight allocated."""
    path = write_model(
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.a, self.b = torch.nn.Linear(64, 64), torch.nn.Linear(64, 64)\n"
        "    def forward(self, x):\n"
        "        x = self.a(x)\n"
        "        print('halfway')\n"
        "        return self.b(x)\n"
        "def example_inputs():\n"
        "    return (torch.randn(2, 64),)\n"
    )
    request = OpenRequest(f"{path}:Net", weights=False)
    result = compile_flow(CompileRequest(request, explain_only=True))
    assert result.explained is not None and result.explained.graphs == 2
    assert [b.kind for b in result.explained.breaks] == ["print or logging"], (
        result.explained.breaks
    )
    bare = compile_flow(CompileRequest(OpenRequest(SMALL_LLAMA, weights=False), explain_only=True))
    assert bare.explained is not None and bare.explained.breaks == []


def test_edits_with_undo_and_a_rewrite_work_without_weights(tmp_path):
    doc = open_document(OpenRequest(SMALL_LLAMA, weights=False))
    before = doc.code()
    node = next(r.name for r in doc.rows() if r.target.endswith("silu.default"))
    edit = edits.set_target(doc, node, "torch.ops.aten.gelu.default")
    assert "gelu" in doc.code() and doc.row(node).shape == doc.row(node).shape
    edit.undo()
    assert doc.code() == before
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    assert len(report.result.replaced) == 2  # one attention per layer, written out (eager)
    assert report.check is None and "no weights" in report.unchecked
    assert any(line.startswith("  Not checked:") for line in report.describe())
    assert not doc.weights
    # saved and reopened: still structure only, the rewrite replayed
    path = tmp_path / "bare.fxstudio"
    save_session(doc, path)
    assert json.loads(path.read_text())["model"]["weights"] is False
    again = open_document(str(path))
    assert not again.weights and again.code() == doc.code()


def test_show_no_weights_as_json(capsys):
    assert cli.main(["show", "examples:resnet", "--no-weights", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["weights"] is False
    assert next(n for n in data["nodes"] if n["name"] == "fc")["shape"] == [1, 10]


def test_profile_of_a_structure_only_model_exits_2_with_the_message(capsys):
    assert cli.main(["profile", "examples:simple", "--no-weights"]) == 2
    err = capsys.readouterr().err
    assert "structure only" in err and "without --no-weights" in err


#: Run in a process of its own (a test worker's memory holds whatever ran in it before):
#: open Llama-3-70B's shape as a user would, and say what came of it as JSON.
OPEN_70B = """
import json
from fxstudio.core.errors import UserError
from fxstudio.core.flows import OpenRequest, ProfileOptions, open_document, profile
def peak_kb():
    # this process's own high-water mark (VmHWM; ru_maxrss would keep the peak of the
    # process it was forked from, a test worker that may hold gigabytes)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
doc = open_document(OpenRequest(SPEC))
rows = doc.rows()
try:
    profile(doc, ProfileOptions())
    refused = ""
except UserError as exc:
    refused = str(exc)
print(json.dumps({
    "weights": doc.weights, "note": doc.notes[0], "nodes": len(rows),
    "shaped": sum(1 for r in rows if r.shape), "widths": sorted({r.shape for r in rows}),
    "refused": refused, "peak_kb": peak_kb(),
}))
"""


@pytest.mark.slow
def test_llama_70b_opens_structure_only_by_itself_in_under_1_5_gb():
    """At Llama-3-70B's shape the weights (about 260 GB) do not fit: the model opens without
    them -- every node shaped, the hidden states at their real width -- in a process whose
    peak memory stays under 1.5 GB, and running it says the weights do not fit."""
    code = OPEN_70B.replace("SPEC", repr(LLAMA_70B))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True
    )
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["weights"] is False
    assert "69.50 B parameters, no weights: structure only" in got["note"]
    assert "would not fit" in got["note"]
    assert got["nodes"] > 5000 and got["shaped"] > 0.9 * got["nodes"]
    assert "1x16x8192" in got["widths"]
    assert "do not fit" in got["refused"]
    peak_gb = got["peak_kb"] / 2**20
    assert peak_gb < 1.5, f"peak RSS {peak_gb:.2f} GB"


def test_a_pt2_program_opens_structure_only_reading_no_weight(tmp_path):
    """``--no-weights`` on a ``.pt2``: the graph and every shape from the archive, the
    parameters meta tensors of their shapes (none read), the document says so."""
    import torch

    from fxstudio.core.model.loading import load_model

    m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))
    path = tmp_path / "mlp.pt2"
    torch.export.save(torch.export.export(m.eval(), (torch.randn(3, 16),)), str(path))
    full, bare = load_model(str(path)), load_model(str(path), weights=False)
    assert all(not p.is_meta for p in full.module.parameters())
    assert all(p.is_meta for p in bare.module.parameters())
    assert [p.shape for p in bare.module.parameters()] == [p.shape for p in m.parameters()]
    assert any("structure only" in n for n in bare.notes)
    doc = open_document(OpenRequest(str(path), weights=False))
    assert doc.weights is False
    vals = {n.name: n.meta.get("val") for n in doc.graph.nodes}
    shapes = {k: tuple(v.shape) for k, v in vals.items() if isinstance(v, torch.Tensor)}
    assert shapes["linear_1"] == (3, 4)


def test_whether_a_document_holds_its_weights_follows_the_edits_that_change_its_tensors(
    monkeypatch,
):
    """Walked once (the window asks after every edit), and again after a step that adds,
    removes or replaces a tensor or a submodule -- undone and redone too."""
    from torch import nn

    from fxstudio.core.edits.engine import commit
    from fxstudio.core.edits.steps import SetAttribute, SetSubmodule
    from fxstudio.core.graph import document

    walks = []
    walk = document.has_weights
    monkeypatch.setattr(document, "has_weights", lambda m: walks.append(m) or walk(m))
    doc = open_document("examples:simple")
    assert doc.weights and doc.weights and len(walks) == 1
    meta = torch.empty(2, device="meta")
    edit = commit(doc, "scale", [SetAttribute("scale", meta)], document.ChangeKind.NODES_CHANGED)
    assert not doc.weights
    edit.undo()
    assert doc.weights
    edit.redo()
    assert not doc.weights
    edit.undo()
    with torch.device("meta"):
        bare = nn.Linear(2, 2)
    commit(doc, "layer", [SetSubmodule("extra", bare)], document.ChangeKind.NODES_CHANGED)
    assert not doc.weights and len(walks) == 5
    edits.rename(doc, "act", "a2")  # the graph only: what was known holds
    assert not doc.weights and len(walks) == 5


def test_a_copy_for_a_worker_knows_what_its_document_knew_of_its_weights(monkeypatch):
    """A detached copy shares the document's tensors, so it takes the answer the document had
    instead of walking them again; one the document had not walked yet is walked there."""
    from fxstudio.core.edits.snapshots import detached, snapshot
    from fxstudio.core.graph import document

    walks = []
    walk = document.has_weights
    monkeypatch.setattr(document, "has_weights", lambda m: walks.append(m) or walk(m))
    doc = open_document("examples:simple")
    assert detached(snapshot(doc)).weights and len(walks) == 1  # (not known: walked on the copy)
    assert walks[0] is not doc.graph_module
    assert doc.weights and detached(snapshot(doc)).weights and len(walks) == 2
    bare = open_document(OpenRequest("examples:simple", weights=False))
    assert not bare.weights and not detached(snapshot(bare)).weights and len(walks) == 3
