"""Per-node profiling, FLOPs, roofline and before/after comparison (no QApplication).

No timing assertions: what is checked is what holds by the method -- parts add up to the
whole, every module to its nodes, FLOPs equal FlopCounterMode's, a verdict's statistics --
never how fast anything ran.
"""

from __future__ import annotations

import json
import math

import pytest
import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode, sdpa_flop_count

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.runtime.breakdown import breakdown
from fxstudio.core.runtime.flops import node_work
from fxstudio.core.runtime.nodes import annotated, profile_calls
from fxstudio.core.runtime.ondevice import RunError, batched, profile_whole
from fxstudio.core.runtime.roofline import Peaks
from fxstudio.core.runtime.speedup import compare, mann_whitney, speedup
from fxstudio.core.sessions.documents import open_document

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")


class Mixed(nn.Module):
    """Every op FlopCounterMode counts, and some it does not."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 8 * 8, 32)
        self.w = nn.Parameter(torch.randn(32, 16))

    def forward(self, x):
        y = F.relu(self.conv(x)).flatten(1)
        z = torch.mm(self.fc(y), self.w)  # (2, 16)
        q = z.view(2, 1, 4, 4)
        a = F.scaled_dot_product_attention(q, q, q)
        return torch.bmm(a.flatten(0, 1), a.flatten(0, 1).transpose(1, 2)) + 1


def _inputs_of(gm: fx.GraphModule, x: torch.Tensor) -> dict[str, tuple]:
    """Each node's actual argument values, from one Interpreter run."""
    seen: dict[str, tuple] = {}

    class Spy(fx.Interpreter):
        def run_node(self, n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            seen[n.name] = (args, kwargs)
            return super().run_node(n)

    Spy(gm).run(x)
    return seen


def test_node_flops_equal_flop_counter_mode_for_mm_conv_and_sdpa() -> None:
    gm = fx.symbolic_trace(Mixed())
    x = torch.randn(2, 3, 8, 8)
    work = node_work(gm, (x,))
    seen = _inputs_of(gm, x)
    counted = 0
    for n in gm.graph.nodes:
        if n.op not in ("call_module", "call_function") or n.name not in seen:
            continue
        args, kwargs = seen[n.name]
        fn = gm.get_submodule(n.target) if n.op == "call_module" else n.target
        if fn is F.scaled_dot_product_attention and x.device.type == "cpu":
            # FlopCounterMode registers SDPA's CUDA kernels only; its formula, for the CPU one
            expected = sdpa_flop_count(*(a.shape for a in args[:3]))
        else:
            with FlopCounterMode(display=False) as alone, torch.no_grad():
                fn(*args, **kwargs)
            expected = alone.get_total_flops()
        assert work[n.name].flops == expected, n.name
        counted += expected > 0
    assert counted == 5  # conv, fc, mm, sdpa, bmm
    assert work["relu"].flops == 0 and work["relu"].bytes == 2 * 2 * 8 * 8 * 8 * 4


def test_the_annotated_copy_computes_the_same_and_leaves_the_model_alone() -> None:
    doc = open_document("examples:resnet")
    code = doc.code()
    module, names = annotated(doc.graph_module)
    x = doc.example_inputs[0]
    with torch.no_grad():
        assert torch.equal(module(x), doc.graph_module(x))
    assert "_RecordFunctionFast" in module.code and doc.code() == code
    assert names == [n.name for n in doc.graph.nodes]


def test_parts_add_up_and_modules_are_the_sum_of_their_nodes() -> None:
    doc = open_document("examples:resnet")
    result = profile_whole(doc, "cpu", threads=1, min_time=0.05, per_node=True, repeats=9)
    p = result.nodes
    assert p is not None and p.calls == 9
    assert math.isclose(p.parts_s, p.whole_s, rel_tol=1e-9)
    assert p.attributed >= 0.99 and p.unattributed_s >= 0
    call_nodes = [n.name for n in doc.graph.nodes if n.op.startswith("call")]
    assert [n.name for n in p.nodes] == call_nodes
    assert math.isclose(sum(n.share for n in p.nodes) + (p.gap_s + p.unattributed_s) / p.whole_s, 1)
    by_path = {m.path: m for m in p.modules}
    assert math.isclose(by_path[""].time_s, sum(n.time_s for n in p.nodes), rel_tol=1e-9)
    for group in doc.module_tree().walk():
        under = set(group.all_nodes())
        expected = sum(n.time_s for n in p.nodes if n.name in under)
        assert math.isclose(by_path[group.path].time_s, expected, rel_tol=1e-9, abs_tol=1e-15)
    conv = p.node("layer1_0_conv1")
    assert conv is not None and conv.flops > 0 and conv.bound in ("compute", "memory")
    assert len(conv.times_s) == 9 and conv.iqr_s >= 0
    data = result.to_json()
    assert {"nodes", "modules", "unattributed_s"} <= set(data)
    assert {"name", "op", "target", "module", "time_s", "share", "flops"} <= set(data["nodes"][0])
    assert {"path", "time_s", "share"} <= set(data["modules"][0])
    assert p.peaks.source.startswith("measured")


def test_a_node_above_the_device_peak_is_marked_a_measurement_error() -> None:
    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(256, 256), nn.ReLU()))
    x = torch.randn(64, 256)
    raw = profile_calls(gm, (x,), torch.device("cpu"), repeats=5)
    tiny = Peaks("pretend", flops_per_s=1.0, bytes_per_s=1e15, source="datasheet")
    tree = GraphDocument(gm, example_inputs=(x,)).module_tree()
    p = breakdown(gm.graph, raw, node_work(gm, (x,)), tree, tiny, clean_s=raw.wall_s)
    linear = p.node("_0")
    assert linear is not None and linear.bound == "invalid"
    assert any("above the device's peak" in w for w in p.warnings())


def test_the_trace_names_nodes(tmp_path) -> None:
    doc = open_document("examples:simple")
    stages: list[str] = []
    result = profile_whole(doc, "cpu", min_time=0.02, per_node=True, repeats=3, stage=stages.append)
    assert stages == [
        "checking the outputs…",
        "timing for at least 0.02 s…",
        "profiling node by node (3 calls)…",
    ]
    assert result.nodes is not None
    out = tmp_path / "trace.json"
    result.nodes.write_trace(out)
    names = {e.get("name") for e in json.loads(out.read_text())["traceEvents"]}
    assert {n.name for n in result.nodes.nodes} <= names and "forward" in names
    assert not list(tmp_path.glob("*.raw"))
    csv = result.nodes.to_csv().splitlines()
    assert csv[0].startswith("name,op,target") and csv[-1].startswith("(gap)")


def test_statistics_of_a_comparison() -> None:
    fast = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.03, 0.97, 1.0]
    slow = [2 * v for v in fast]
    s = speedup(slow, fast)
    assert s.significant and s.speedup == pytest.approx(2.0) and s.ci_low <= 2.0 <= s.ci_high
    assert s.verdict == "2.00× faster" and speedup(fast, slow).verdict == "2.00× slower"
    # a 0.5 % change is never significant, however clean the data
    tiny = speedup([1.005 + i * 1e-6 for i in range(20)], [1.0 + i * 1e-6 for i in range(20)])
    assert tiny.p_value < 1e-6 and not tiny.significant
    # Mann–Whitney: complete separation of 9 vs 9 (normal approximation), and no difference
    assert mann_whitney(list(range(9)), list(range(9, 18))) < 1e-3
    assert mann_whitney([1.0] * 9, [1.0] * 9) == 1.0
    assert speedup(fast, fast).ci_low <= 1.0 <= speedup(fast, fast).ci_high


def test_the_same_graph_twice_is_no_significant_change() -> None:
    """The A/A test: one model timed against itself, interleaved."""
    doc = open_document("examples:resnet")
    c = compare(doc, doc, "cpu", threads=1, min_time=0.5, replicates=9)
    assert not c.whole.significant and c.whole.verdict == "no significant change"
    assert c.max_abs_diff == 0.0 and c.whole.n_before == c.whole.n_after == 9
    with pytest.raises(RunError, match="at least 9"):
        compare(doc, doc, replicates=5)


def test_a_rewrite_is_compared_node_by_node_through_its_provenance(tmp_path) -> None:
    before = open_document("examples:resnet")
    after = open_document("examples:resnet")
    report = rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    assert report.check.ok
    c = compare(before, after, "cpu", threads=1, min_time=0.4, per_node=True)
    folded = [d for d in c.nodes if d.how == "provenance"]
    assert len(folded) == 15
    stem = next(d for d in folded if "stem_0" in d.before)
    assert stem.before == ("stem_0", "stem_1") and stem.after == ("stem_0",)
    assert not c.added and not c.removed  # every BN is in its fold's row
    assert any(d.how == "name" and d.before == ("add",) for d in c.nodes)
    paths = {d.before[0] for d in c.modules}
    assert "layer1" in paths and "stem.1" not in paths  # a folded-away module has no row
    assert c.max_abs_diff < 1e-4
    out = c.to_json()
    assert {"speedup", "ci_low", "ci_high", "significant"} <= set(out)
    # both sides were profiled in one session, interleaved: one trace holds both
    assert c.after.nodes is not None and c.before.nodes is not None
    assert c.after.nodes.calls == c.before.nodes.calls
    trace = tmp_path / "pair.json"
    c.after.nodes.write_trace(trace)
    names = {e.get("name") for e in json.loads(trace.read_text())["traceEvents"]}
    assert {"before:stem_1", "stem_0", "before:forward", "forward"} <= names


def test_compiled_runs_report_compile_time_apart() -> None:
    doc = open_document("examples:simple")
    result = profile_whole(doc, "cpu", min_time=0.05, compile="eager")
    assert result.compiled == "eager" and result.compile_s is not None and result.valid
    assert any(n.startswith("compiled:") for n in result.notes)
    assert result.to_json()["whole"]["recompiles"] == 0
    with pytest.raises(RunError, match="not available"):
        profile_whole(doc, "cpu", min_time=0.05, compile="no-such-backend")


def test_modes_that_cannot_be_asked_for_together_are_refused() -> None:
    doc = open_document("examples:simple")
    with pytest.raises(RunError, match="Per-node"):
        profile_whole(doc, per_node=True, compile="eager")
    with pytest.raises(RunError, match="CUDA mode"):
        profile_whole(doc, "cpu", cold_l2=True)


@CUDA
def test_cuda_kernels_are_attributed_to_nodes() -> None:
    doc = open_document("examples:resnet")
    result = profile_whole(doc, "cuda", min_time=0.2, per_node=True, repeats=9)
    p = result.nodes
    assert p is not None and p.attributed >= 0.99
    assert math.isclose(p.parts_s, p.whole_s, rel_tol=1e-6)
    assert result.peak_bytes and result.env["gpu"]
    assert result.check.max_abs_diff is not None


@CUDA
def test_cuda_cold_l2_runs_and_says_so() -> None:
    doc = open_document("examples:resnet")
    result = profile_whole(doc, "cuda", min_time=0.2, cold_l2=True)
    assert result.l2 == "cold" and result.timing.runs >= 25


def test_a_batch_grows_the_inputs_and_counts_items() -> None:
    doc = open_document("examples:resnet")
    result = profile_whole(doc, "cpu", min_time=0.05, batch=4)
    assert result.items == 4 and any("batch 4" in n for n in result.notes)
    assert doc.example_inputs[0].shape[0] == 1  # the document's inputs are as they were
    with pytest.raises(RunError, match="batch of 0"):
        batched(tuple(doc.example_inputs), 0)
    grown = batched((torch.arange(6).view(3, 2), 5.0), 5)
    assert grown[0].tolist() == [[0, 1], [2, 3], [4, 5], [0, 1], [2, 3]] and grown[1] == 5.0


def test_autocast_keeps_the_weights_and_checks_against_float32() -> None:
    doc = open_document("examples:resnet")
    weight = next(doc.graph_module.parameters())
    result = profile_whole(doc, "cpu", dtype="autocast:bfloat16", min_time=0.05, per_node=True)
    assert "autocast" in result.env["dtype"] and any("autocast" in n for n in result.notes)
    assert result.check.max_rel_diff is not None and 0 < result.check.max_rel_diff < 0.5
    assert next(doc.graph_module.parameters()) is weight and weight.dtype == torch.float32
    assert result.nodes is not None and result.nodes.node("layer1_0_conv1") is not None
    assert not torch.is_autocast_enabled("cpu")  # nothing left switched on
    with pytest.raises(RunError, match="autocast:bfloat16"):
        profile_whole(doc, "cpu", dtype="int8", min_time=0.05)
