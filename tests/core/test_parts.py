"""Run the part that fits (issue 38): one module of a model taken out of its graph -- at its
real width, with its weights or random ones at their shapes -- runs and is profiled like a
model; a whole-model figure from it is said to be an extrapolation."""

import pytest
import torch

from fxstudio import cli
from fxstudio.core.errors import UserError
from fxstudio.core.flows import (
    OpenRequest,
    ProfileOptions,
    RewriteRequest,
    RewriteSpec,
    open_document,
    profile,
    rewrite_flow,
)
from fxstudio.core.flows.run import part_of
from fxstudio.core.graph.attributes import attribute
from fxstudio.core.model.loading import load_model
from tests.core.test_structure_only import LLAMA_70B, SMALL_LLAMA


def test_a_part_computes_what_its_module_computes():
    """The cut is exact: the part's graph gives the module's own output, bit for bit (the
    same ops in the same process)."""
    doc = open_document("examples:resnet")
    part = part_of(doc, "layer1")
    (x,) = part.document.example_inputs
    assert tuple(x.shape) == (1, 16, 32, 32)
    model = load_model("examples:resnet").module.eval()  # the same seed: the same weights
    with torch.no_grad():
        got = part.document.graph_module(x)
        expected = model.layer1(x)
    assert torch.equal(got, expected)
    assert not part.made_up and "the model's weights" in part.describe()


def test_a_structure_only_layer_runs_with_random_weights_and_says_what_it_is():
    doc = open_document(OpenRequest(SMALL_LLAMA, weights=False))
    rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    part = part_of(doc, "layers.0")
    assert part.made_up and part.alike == 2 and part.document.weights
    targets = [r.target for r in part.document.rows()]
    assert any("scaled_dot_product_attention" in t for t in targets)  # the rewrite is in it
    result = profile(part.document, ProfileOptions(min_time=0.05))
    assert result.ok
    said = part.estimate(result.after.timing.median_s)
    assert said.startswith("x2 modules alike") and "not a measurement" in said
    assert part.estimate(16.3).startswith("x2 modules alike ~ 32.600 s for all")  # not 3.26e+04 ms


def test_a_module_that_is_not_there_is_named_with_those_that_are():
    doc = open_document("examples:resnet")
    with pytest.raises(UserError, match="no module 'layer9'.*layer1"):
        part_of(doc, "layer9")


def test_profile_module_on_the_command_line(capsys):
    args = [
        "profile",
        "examples:resnet",
        "--no-weights",
        "--module",
        "layer1",
        "--min-time",
        "0.05",
    ]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "the module layer1 alone" in out and "random weights" in out


@pytest.mark.slow
def test_one_real_width_layer_of_llama_70b_runs_on_this_machine():
    """Llama-3-70B's decoder layer at its real width (8192 wide, 28672 MLP: 0.86 B
    parameters, 3.4 GB in float32) taken from the structure-only model and profiled."""
    doc = open_document(OpenRequest(LLAMA_70B))
    part = part_of(doc, "layers.0")
    gm = part.document.graph_module
    weights = {id(t): t.numel() for t in [*gm.parameters(), *gm.buffers()]}
    for n in part.document.graph.nodes:
        if n.op == "get_attr":
            v = attribute(gm, str(n.target))
            weights[id(v)] = v.numel()
    assert sum(weights.values()) > 0.85e9  # the layer at its real width
    assert part.alike == 80
    result = profile(part.document, ProfileOptions(min_time=0.05))
    assert result.ok
    assert "x80 modules alike" in part.estimate(result.after.timing.median_s)
