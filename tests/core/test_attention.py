"""fuse-attention finds attention by its structure, in both dialects: each spelling of
tests/core/attention_models.py becomes one scaled_dot_product_attention call, checked
numerically (in this process, at the float32 tolerance of a non-exact rewrite) -- or is left
alone with the reason."""

import pytest
import torch
import torch.nn.functional as F

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.sessions.documents import open_document

MODELS = "tests/core/attention_models.py"
QKV = ("2x4x8x16", "2x4x8x16", "2x4x8x16", "2x1x8x8")
SDPA = (F.scaled_dot_product_attention, torch.ops.aten.scaled_dot_product_attention.default)


def _open(name, frontend):
    inputs = QKV if name != "Baddbmm" else (*QKV[:3], "2x4x8x8")
    return open_document(OpenRequest(f"{MODELS}:{name}", frontend, inputs))


@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize("name", ["Causal", "MaskedFill", "Baddbmm", "Permuted", "Grouped"])
def test_each_spelling_becomes_one_sdpa_call(name, frontend):
    doc = _open(name, frontend)
    code = doc.code()
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    assert len(report.result.replaced) == 1, report.describe()
    assert report.check is not None and report.check.ok, report.check.describe()
    calls = [n for n in doc.graph.nodes if n.op == "call_function" and n.target in SDPA]
    assert len(calls) == 1
    assert calls[0].target is SDPA[frontend == "export"]  # written in the graph's own dialect
    left = {str(n.target) for n in doc.graph.nodes} | {n.name for n in doc.graph.nodes}
    assert not any("softmax" in t or "matmul" in t or "bmm" in t for t in left)
    if name == "Grouped":
        assert calls[0].kwargs.get("enable_gqa") is True  # k and v are not repeated any more
        assert not any("expand" in str(n.target) for n in doc.graph.nodes)
    report.result.edit.undo()
    assert doc.code() == code


@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize(
    "name, reason",
    [
        ("ReturnsWeights", "SDPA does not give them out"),
        ("ScaleAtRunTime", "computed at run time"),
        ("TrainingDropout", "training mode"),
    ],
)
def test_what_sdpa_cannot_stand_for_is_left_with_the_reason(name, reason, frontend):
    doc = _open(name, frontend)
    code = doc.code()
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    assert report.result.edit is None and doc.code() == code
    [(_, why)] = report.result.skipped
    assert reason in why


def test_an_fx_graph_keeps_a_scale_worked_out_from_shapes():
    """1 / sqrt(q.shape[-1]) stays worked out as the graph runs: the fused fx graph computes
    what the model does on another head size too (torch.export would have fixed it)."""
    from tests.core.attention_models import MaskedFill

    doc = _open("MaskedFill", "fx")
    assert (
        len(
            rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention"))).result.replaced
        )
        == 1
    )
    gen = torch.Generator().manual_seed(0)
    wider = [torch.randn(2, 4, 8, 32, generator=gen) for _ in range(3)]
    inputs = (*wider, torch.randn(2, 1, 8, 8, generator=gen))
    with torch.no_grad():  # one process, float32's default tolerances
        torch.testing.assert_close(doc.graph_module(*inputs), MaskedFill()(*inputs))
