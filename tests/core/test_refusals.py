"""A built-in that changes nothing says how many places it looked at and why it left each
alone -- in the report the command line prints and the Patterns dock shows (one result
object) -- and fuse-attention-flex writes a soft-capped attention as flex_attention."""

from __future__ import annotations

import pytest
import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn

from fxstudio import cli
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.patterns.softcap import FLEX
from fxstudio.core.sessions.documents import open_document
from tests.core.test_attention import _open

needs_flex = pytest.mark.skipif(FLEX is None, reason="this torch has no flex_attention")


def _report(doc: GraphDocument, builtin: str):
    code = doc.code()
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin=builtin)))
    assert report.result.edit is None and doc.code() == code  # nothing changed
    return report


# --- fuse-attention ------------------------------------------------------------------------


@pytest.mark.parametrize("frontend", ["fx", "export"])
def test_a_soft_capped_attention_is_a_candidate_left_with_the_reason(frontend):
    report = _report(_open("SoftCapped", frontend), "fuse-attention")
    assert report.verdict == (
        "1 candidate, none fused: a tanh soft-cap on the scores, which "
        "scaled_dot_product_attention cannot express"
    )
    [(_, why)] = report.result.skipped
    assert "30 · tanh(s / 30)" in why and "fuse-attention-flex" in why
    data = report.to_json()
    assert data["candidates"] == 1 and data["verdict"] == report.verdict
    assert report.describe()[0].startswith("fuse-attention: 1 candidate, none fused")


@pytest.mark.parametrize(
    "name, cause, culprit",
    [
        ("Sigmoided", "sigmoid on the scores", "sigmoid"),
        ("ReturnsWeights", "the weights are used elsewhere", None),
        ("TrainingDropout", "dropout in training mode", None),
        ("MaskedThenCapped", "a tanh soft-cap on the scores", None),
    ],
)
def test_each_refused_attention_says_its_first_obstacle(name, cause, culprit):
    report = _report(_open(name, "fx"), "fuse-attention")
    assert report.verdict.startswith("1 candidate, none fused: " + cause), report.verdict
    if culprit is not None:  # not even an attention: the softmax, where the walk stopped
        [skipped] = report.result.found.skipped
        assert skipped.failure.culprit.startswith("softmax")
        assert culprit in skipped.failure.text


def test_no_softmax_is_said():
    report = _report(open_document("examples:resnet"), "fuse-attention")
    assert report.verdict == (
        "no candidates: no softmax over the last dimension (no attention written out)"
    )


@needs_flex
@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize("name", ["SoftCapped", "CappedUnmasked"])
def test_flex_writes_a_soft_capped_attention_as_flex_attention(name, frontend):
    """fuse-attention-flex: one flex_attention call with the cap (and the mask) in its
    score_mod; the same values as the written-out attention, in this process."""
    from tests.core import attention_models

    doc = _open(name, frontend)
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention-flex")))
    assert len(report.result.replaced) == 1, report.describe()
    assert report.check is not None and report.check.ok, report.check.describe()
    assert report.check.max_abs_diff <= 1e-6
    assert any("cannot serialise flex_attention" in w for w in report.result.found.warnings)
    [call] = [n for n in doc.graph.nodes if n.target is FLEX]
    assert not any(n.target in (torch.tanh, torch.ops.aten.tanh.default) for n in doc.graph.nodes)
    assert "score_mod" in call.kwargs
    inputs = doc.example_inputs
    with torch.no_grad():
        torch.testing.assert_close(
            doc.graph_module(*inputs), getattr(attention_models, name)()(*inputs)
        )
    report.result.edit.undo()
    assert not any(n.target is FLEX for n in doc.graph.nodes)
    assert not any(name.startswith("softcap") for name, _ in doc.graph_module.named_children())


@needs_flex
def test_flex_leaves_a_mask_before_the_cap_with_the_reason():
    report = _report(_open("MaskedThenCapped", "fx"), "fuse-attention-flex")
    assert report.verdict == "1 candidate, none fused: a mask before the soft-cap"


@needs_flex
def test_flex_rewrite_replays_from_a_session(tmp_path):
    from fxstudio.core.sessions.sessionfile import save_session

    doc = _open("SoftCapped", "export")
    rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention-flex")))
    save_session(doc, tmp_path / "capped.fxstudio")
    again = open_document(str(tmp_path / "capped.fxstudio"))
    assert not again.notes, again.notes
    assert again.code() == doc.code()


@needs_flex
def test_a_flex_fused_model_saves_as_a_module_that_runs(tmp_path):
    from fxstudio.core.saving.export import export
    from fxstudio.core.saving.verify import verify_standalone

    doc = _open("SoftCapped", "export")
    rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention-flex")))
    export(doc, tmp_path / "capped.py")
    assert verify_standalone(tmp_path / "capped.py", doc).ok


def test_the_command_line_says_why_nothing_was_fused(capsys):
    spec = "tests/core/attention_models.py:SoftCapped"
    args = ["rewrite", spec, "--input", "2x4x8x16", "--input", "2x4x8x16"]
    args += ["--input", "2x4x8x16", "--input", "2x1x8x8", "--builtin", "fuse-attention"]
    assert cli.main(args) == 0
    out, err = capsys.readouterr()
    assert "fuse-attention: 1 candidate, none fused: a tanh soft-cap on the scores" in out
    assert "changed nothing: 1 candidate, none fused" in err


# --- the other built-ins -------------------------------------------------------------------


def _doc(fn, *shapes) -> GraphDocument:
    from fxstudio.core.graph.propagation import propagate_shapes

    gm = fx.symbolic_trace(fn)
    x = tuple(torch.randn(*s) for s in shapes)
    propagate_shapes(gm, x)
    return GraphDocument(gm, example_inputs=x)


class _TrainingDropout(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return F.dropout(self.drop(x), 0.2) + 1


def test_drop_dropout_says_which_dropouts_drop():
    doc = _doc(_TrainingDropout().train(), (2, 3))
    report = _report(doc, "drop-dropout")
    assert report.verdict == (
        "2 candidates, none removed: dropout in training mode (1); "
        "a dropout call with training=True (F.dropout's default) (1)"
    )
    assert any("drops in eval mode too" in s.failure.text for s in report.result.found.skipped)


def test_remove_noops_says_what_the_near_noops_change():
    def f(x, y):
        return x.to(torch.float64).sum() + y.t().contiguous().sum()

    report = _report(_doc(f, (1, 3), (3, 4)), "remove-noops")
    assert report.verdict == (
        "2 candidates, none removed: changes the dtype (1); "
        "copies a tensor that is not contiguous (1)"
    )


def test_dce_says_a_value_nobody_reads_is_kept_for_what_running_it_does():
    def f(x):
        torch._assert(x.sum() > -1e9, "never")
        return x + 1

    report = _report(_doc(f, (2,)), "dce")
    assert report.verdict.startswith("1 candidate, none removed: does more than compute a value")
    report = _report(_doc(lambda x: x + 1, (2,)), "dce")
    assert report.verdict == "no candidates: every value is used"


def test_fold_conv_bn_says_a_batchnorm_has_no_conv_before_it():
    model = nn.Sequential(nn.BatchNorm2d(3), nn.Conv2d(3, 3, 1), nn.ReLU()).eval()
    for frontend in ("fx", "export"):
        gm = fx.symbolic_trace(model) if frontend == "fx" else _exported(model)
        doc = GraphDocument(gm, example_inputs=(torch.randn(1, 3, 4, 4),))
        report = _report(doc, "fold-conv-bn")
        [refused] = report.result.found.skipped
        assert report.verdict == f"1 candidate, none folded: {refused.failure.cause}"
        assert refused.failure.cause in ("no Conv2d before it", "no conv before it")
        assert "nothing to fold it into" in refused.failure.text
    no_bn = GraphDocument(fx.symbolic_trace(nn.Conv2d(3, 3, 1)))
    assert _report(no_bn, "fold-conv-bn").verdict == (
        "no candidates: no BatchNorm1d/BatchNorm2d/BatchNorm3d in the model"
    )


def _exported(model: nn.Module) -> fx.GraphModule:
    from fxstudio.core.model.capture import export_module

    return export_module(model, (torch.randn(1, 3, 4, 4),))


def test_fold_in_training_mode_counts_the_pairs():
    doc = open_document("examples:resnet")
    doc.graph_module.train()
    report = _report(doc, "fold-conv-bn")
    assert report.verdict == (
        "15 candidates, none folded: training mode (batch statistics) (all 15)"
    )


def test_swap_activation_names_the_activations_there_are():
    report = _report(open_document("examples:resnet"), "swap-activation:gelu:relu")
    assert report.verdict.startswith("no candidates: no gelu in the graph (its activations: relu")
