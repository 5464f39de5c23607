"""Comparing graphs of real models: resnet18 before and after folding its BatchNorms, its fx
and export captures, and a transformer before and after fusing its attention.  Values are
compared in this process, both graphs on the same tensors."""

from fxstudio.core.compare.align import align, op_kind
from fxstudio.core.compare.values import compare_values
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.sessions.documents import open_document
from tests.models.test_real_models import HF_MODELS, needs_torchvision, needs_transformers

RESNET18 = OpenRequest("torchvision.models:resnet18", "fx", ("1x3x224x224",))


@needs_torchvision
def test_resnet18_folded_loses_its_twenty_batchnorms_and_changes_its_twenty_convs():
    before, after = open_document(RESNET18), open_document(RESNET18)
    rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    a = align(before, after)
    modules = dict(before.graph_module.named_modules())
    assert len(a.removed) == 20 and a.added == []
    assert {op_kind(before.node(n), modules) for n in a.removed} == {"batchnorm"}
    changed = a.changed()
    assert len(changed) == 20
    assert {op_kind(before.node(p.left[0]), modules) for p in changed} == {"conv"}
    values = compare_values(before, after, a)
    assert values.first_difference is None


@needs_torchvision
def test_resnet18_fx_and_export_align_with_no_value_difference():
    fx_doc = open_document(RESNET18)
    exported = open_document(OpenRequest("torchvision.models:resnet18", "export", ("1x3x224x224",)))
    a = align(fx_doc, exported)
    left, right = a.coverage(fx_doc, exported)
    assert left >= 0.9 and right >= 0.9
    assert compare_values(fx_doc, exported, a).first_difference is None


@needs_transformers
def test_fused_attention_pairs_the_fused_call_with_the_nodes_it_replaced():
    request = OpenRequest(f"{HF_MODELS}:gpt2_eager", "export")
    before, after = open_document(request), open_document(request)
    rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    a = align(before, after)
    fused = [p for p in a.pairs if p.how == "provenance"]
    assert len(fused) == 2 and all(len(p.left) > 1 and p.status == "changed" for p in fused)
    assert a.removed == [] and a.added == []
    assert compare_values(before, after, a).first_difference is None
