"""fuse-attention on the models people tune, captured by torch.export (ATen ops): transformers'
eager attention -- GPT-2, BERT, LLaMA and Qwen2 (grouped-query) -- and diffusers' classic
processor (self- and cross-attention).  One SDPA call per attention, the check passing (in this
process, at the float32 tolerance of a rewrite that is not exact), the module grouping kept,
saved as a .py that reloads equal to the in-editor model, and undone."""

import importlib.util

import pytest
import torch

from fxstudio.core.export import export, verify_standalone
from fxstudio.core.graphviews import module_path
from fxstudio.core.opening import OpenRequest, open_document
from fxstudio.core.patterns.apply import RewriteSpec, run
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
    report = run(doc, RewriteSpec(builtin="fuse-attention"))
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
