"""fuse-attention on the models people tune, captured by torch.export (ATen ops): transformers'
eager attention -- GPT-2, BERT, LLaMA and Qwen2 (grouped-query) -- and diffusers' classic
processor (self- and cross-attention).  One SDPA call per attention, the check passing (in this
process, at the float32 tolerance of a rewrite that is not exact), the module grouping kept,
saved as a .py that reloads equal to the in-editor model, and undone."""

import importlib.util

import pytest
import torch

from fxstudio.core.graph.graphviews import module_path
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.patterns.softcap import FLEX
from fxstudio.core.saving.export import export
from fxstudio.core.saving.verify import verify_standalone
from fxstudio.core.sessions.documents import open_document
from tests.models.test_real_models import HF_MODELS, needs_transformers

SDPA = torch.ops.aten.scaled_dot_product_attention.default
DIFFUSERS = "tests/models/diffusers_models.py"
needs_diffusers = pytest.mark.skipif(
    importlib.util.find_spec("diffusers") is None,
    reason="diffusers is not installed (pip install -e '.[diffusion]')",
)

CASES = [
    pytest.param(f"{HF_MODELS}:gpt2_eager", 2, "GPT2Attention", marks=needs_transformers),
    pytest.param(f"{HF_MODELS}:bert_eager", 2, "BertSelfAttention", marks=needs_transformers),
    pytest.param(f"{HF_MODELS}:llama_eager", 2, "LlamaAttention", marks=needs_transformers),
    pytest.param(f"{HF_MODELS}:qwen2_eager", 2, "Qwen2Attention", marks=needs_transformers),
    pytest.param(f"{DIFFUSERS}:unet_classic", 8, "Attention", marks=needs_diffusers),
]


@pytest.mark.parametrize("spec, attentions, module", CASES)
def test_fuse_attention_on_real_models(spec, attentions, module, tmp_path):
    doc = open_document(OpenRequest(spec, "export"))
    code = doc.code()
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    assert len(report.result.replaced) == attentions, report.describe()
    assert not report.result.skipped
    assert report.check is not None and report.check.ok, report.check.describe()
    calls = [n for n in doc.graph.nodes if n.target is SDPA]
    assert len(calls) == attentions
    assert not any("softmax" in str(n.target) for n in doc.graph.nodes)
    for call in calls:  # grouped under the attention module, not the softmax's
        owner = list(call.meta["nn_module_stack"].values())[-1][1]
        assert owner.rsplit(".", 1)[-1] == module
        assert module_path(call) == call.meta["fxstudio_rewrite"]["at"]
    if "llama" in spec or "qwen2" in spec:  # k and v no longer repeated for the heads
        assert all(call.kwargs.get("enable_gqa") for call in calls)
    out = tmp_path / "fused.py"
    export(doc, out)
    saved = verify_standalone(out, doc)
    assert saved.ok, saved
    report.result.edit.undo()
    assert doc.code() == code


# --- Gemma: a soft-cap on the scores (Gemma 2), none (Gemma 3) ---------------------------------

_GEMMA = (
    "num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, "
    "num_key_value_heads=2, head_dim=16, vocab_size=128, attn_implementation='eager'"
)


@needs_transformers
def test_gemma2_says_why_sdpa_cannot_fuse_its_soft_capped_attention():
    """Gemma 2 caps its scores (50 · tanh(s / 50)) before the softmax: each attention is a
    candidate SDPA cannot stand for, and the report says so -- not "0 matches"."""
    doc = open_document(OpenRequest(f"hf:gemma2({_GEMMA})", "export"))
    code = doc.code()
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    assert report.result.edit is None and doc.code() == code
    assert report.verdict == (
        "2 candidates, none fused: a tanh soft-cap on the scores, which "
        "scaled_dot_product_attention cannot express (both)"
    )
    assert all("50 · tanh(s / 50)" in why for _, why in report.result.skipped)


@needs_transformers
@pytest.mark.skipif(FLEX is None, reason="this torch has no flex_attention")
def test_gemma2_fuses_into_flex_attention_with_the_check_passing():
    """fuse-attention-flex: both attentions (one sliding-window, one full: each its own mask)
    become flex_attention calls; the same values, in this process."""
    doc = open_document(OpenRequest(f"hf:gemma2({_GEMMA})", "export"))
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention-flex")))
    assert len(report.result.replaced) == 2, report.describe()
    assert report.check is not None and report.check.ok, report.check.describe()
    assert report.check.max_abs_diff <= 1e-5
    calls = [n for n in doc.graph.nodes if n.target is FLEX]
    assert len(calls) == 2 and all(c.kwargs.get("enable_gqa") for c in calls)
    masks = {c.kwargs["score_mod"].args[1].name for c in calls}
    assert len(masks) == 2  # each layer's own mask
    report.result.edit.undo()
    assert not any(n.target is FLEX for n in doc.graph.nodes)


@needs_transformers
def test_gemma3_text_fuses_into_sdpa():
    """Gemma 3 has no soft-cap (its sliding window is in the mask): plain SDPA."""
    doc = open_document(OpenRequest(f"hf:gemma3_text({_GEMMA}, sliding_window=8)", "export"))
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    assert len(report.result.replaced) == 2, report.describe()
    assert report.check is not None and report.check.ok, report.check.describe()
    assert sum(n.target is SDPA for n in doc.graph.nodes) == 2
