"""Per-node profiles and before/after comparisons on real models (no timing assertions)."""

import json
import math
import subprocess
import sys

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.runtime.ondevice import profile_whole
from fxstudio.core.runtime.speedup import compare
from fxstudio.core.sessions.documents import open_document
from tests.models.test_real_models import HF_MODELS, needs_torchvision, needs_transformers


@needs_torchvision
def test_resnet18_per_node_json_adds_up(tmp_path) -> None:
    """The issue's command, in a real process."""
    out = tmp_path / "p.json"
    cmd = [sys.executable, "-m", "fxstudio", "profile", "torchvision.models:resnet18"]
    cmd += ["--input", "1x3x224x224", "--per-node", "--min-time", "0.2", "--json", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    whole = data["profile"]["whole_s"]
    total = sum(n["time_s"] for n in data["nodes"]) + data["unattributed_s"] + data["gap_s"]
    assert math.isclose(total, whole, rel_tol=1e-9)
    assert data["profile"]["attributed"] >= 0.99
    modules = {m["path"]: m for m in data["modules"]}
    layer1 = sum(n["time_s"] for n in data["nodes"] if n["module"].startswith("layer1."))
    assert math.isclose(modules["layer1"]["time_s"], layer1, rel_tol=1e-9)
    convs = [n for n in data["nodes"] if n["target"].startswith("conv") or "conv" in n["name"]]
    assert convs and all(n["flops"] > 0 for n in convs)


@needs_torchvision
def test_resnet18_fold_compared_through_provenance() -> None:
    spec = OpenRequest("torchvision.models:resnet18", inputs=("1x3x224x224",))
    before, after = open_document(spec), open_document(spec)
    assert rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="fold-conv-bn"))).check.ok
    c = compare(before, after, "cpu", min_time=1.0, per_node=True)
    assert sum(d.how == "provenance" for d in c.nodes) == 20
    assert not c.removed and not c.added and c.max_rel_diff < 1e-3


@needs_transformers
def test_gpt2_per_node_rolls_up_to_its_blocks() -> None:
    doc = open_document(OpenRequest("hf:gpt2(n_layer=2)"))
    result = profile_whole(doc, "cpu", min_time=0.1, per_node=True, repeats=9)
    p = result.nodes
    assert p is not None and math.isclose(p.parts_s, p.whole_s, rel_tol=1e-9)
    paths = {m.path for m in p.modules}
    assert any(path.endswith("h.0") for path in paths), sorted(paths)[:10]


@needs_transformers
def test_fused_gpt2_session_profiles_against_the_original(tmp_path, capsys) -> None:
    """Eager GPT-2 captured by torch.export, its attention fused, saved as a session: profiled
    against the model it came from, with a speed-up and its interval (no timing asserted)."""
    from fxstudio import cli

    spec = f"{HF_MODELS}:gpt2_eager"
    session = tmp_path / "fused.fxstudio"
    args = ["rewrite", spec, "--frontend", "export", "--builtin", "fuse-attention"]
    assert cli.main([*args, "-o", str(session)]) == 0
    assert "2 replaced" in capsys.readouterr().out
    out = tmp_path / "c.json"
    args = ["profile", str(session), "--against", spec, "--frontend", "export"]
    args += ["--threads", "1", "--min-time", "0.2"]
    assert cli.main([*args, "--json", str(out)]) == 0
    data = json.loads(out.read_text())["compare"]
    assert data["ci_low"] <= data["speedup"] <= data["ci_high"]
    assert data["max_abs_diff"] < 1e-4
    before, after = open_document(OpenRequest(spec, "export")), open_document(str(session))
    c = compare(before, after, "cpu", min_time=0.2, per_node=True)
    fused = [d for d in c.nodes if d.how == "provenance"]
    assert len(fused) == 2  # each SDPA call paired with the nodes it replaced
    assert not c.removed and not c.added
