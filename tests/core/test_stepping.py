"""Stepping through a graph with the Interpreter: values, moving back, the bounded window,
breakpoints, modules, the eager comparison.  Values are compared in this one process (the
graph and the stepper run the same kernels), with ``assert_close``'s dtype tolerances."""

import copy
import operator

import pytest
import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.model.loading import load_model
from fxstudio.core.sessions.documents import open_document
from fxstudio.core.stepping.eager import EagerReference, tolerance
from fxstudio.core.stepping.stepper import StepError, Stepper, for_document
from fxstudio.core.stepping.summaries import BINS, picture, summarize


@pytest.fixture(scope="module")
def resnet():
    return open_document("examples:resnet")


def test_every_value_is_the_graphs_and_the_output_is_the_models(resnet) -> None:
    s = Stepper(resnet.graph_module, resnet.example_inputs)
    steps = s.run_to_end()
    assert [st.name for st in steps] == [n.name for n in resnet.graph.nodes]
    expected = resnet.graph_module(*resnet.example_inputs)
    torch.testing.assert_close(s.output(), expected)
    conv = s.summary("stem_0")
    assert conv.shape == (1, 16, 32, 32) and conv.dtype == "float32" and conv.nans == 0
    assert sum(conv.histogram) == conv.numel and len(conv.histogram) == BINS


def test_memory_stays_in_the_window_and_far_back_is_recomputed(resnet) -> None:
    window = 4
    s = Stepper(resnet.graph_module, resnet.example_inputs, window=window)
    held = []
    while not s.finished:
        s.step()
        held.append(len(s.interpreter.env))
    # a residual block keeps its input alive across it: a few values, never the whole graph
    assert max(held) <= 2 * window + 3 < len(s) // 4
    final = s.output().clone()
    s.goto(len(s) - 2)  # within the window: nothing runs again
    assert s.recomputed == 0 and s.kept("layer3_1_relu_1")
    s.goto(3)  # far back: run again from the start
    assert s.recomputed == 3 and s.current == "stem_1"
    s.run_to_end()
    torch.testing.assert_close(s.output(), final, rtol=0, atol=0)  # same kernels, same process


def test_step_back_and_forward_again_draws_the_same_random_numbers() -> None:
    class Noisy(nn.Module):
        def forward(self, x):
            return x + torch.randn(x.shape) * 0.5

    gm = fx.symbolic_trace(Noisy())
    before = torch.get_rng_state()
    s = Stepper(gm, (torch.zeros(4, 4),), window=1)
    first = s.run_to_end()[-1].summary
    s.goto(0)
    s.run_to_end()
    assert s.summary("output") == first  # the same draw, not a fresh one
    s.back()
    s.back()
    s.run_to_end()
    assert s.summary("output") == first
    assert torch.equal(torch.get_rng_state(), before)  # the caller's generator is untouched


def test_breakpoints_stop_a_run_and_a_run_goes_on_past_them(resnet) -> None:
    s = Stepper(resnet.graph_module, resnet.example_inputs)
    s.toggle_breakpoint("layer2_0_conv1")
    s.run_to_end()
    assert s.next_node == "layer2_0_conv1" and not s.finished
    s.run_to_end()
    assert s.finished
    with pytest.raises(StepError, match="no node 'nope'"):
        s.toggle_breakpoint("nope")


def test_step_over_and_out_of_a_module(resnet) -> None:
    s = Stepper(resnet.graph_module, resnet.example_inputs)
    s.run_to("layer1_0_conv1")
    assert s.group_of(s.current) == "layer1.0.conv1" or s.group_of(s.current).startswith("layer1")
    s.step_out()  # out of layer1.0.conv1 (a leaf: itself), then the block
    s.step_over("layer1")
    members = [n for n in resnet.module_tree().children["layer1"].all_nodes()]
    assert all(s.index[m] < s.position for m in members)
    assert s.group_of(s.next_node) != "layer1" and not s.next_node.startswith("layer1")


def test_a_failing_node_is_named_and_nothing_moves() -> None:
    class Bad(nn.Module):
        def forward(self, x):
            return x @ torch.ones(3, 3)

    gm = fx.symbolic_trace(Bad())
    s = Stepper(gm, (torch.ones(2, 4),))
    with pytest.raises(StepError, match="Node matmul .*shapes cannot be multiplied"):
        s.run_to_end()
    assert s.next_node == "matmul" and s.summary("matmul") is None


def test_the_eager_model_agrees_until_an_edit_and_the_first_difference_is_marked() -> None:
    doc = open_document("examples:simple")
    ref_module = load_model("examples:simple").module.eval()
    same = Stepper(
        doc.graph_module,
        doc.example_inputs,
        eager=EagerReference(ref_module, doc.example_inputs, doc.graph),
    )
    same.run_to_end()
    assert same.first_difference() is None
    assert {n for n, a in same.agreements.items() if a.same} == {"fc1", "act", "fc2", "output"}
    # the edit: relu -> neg (the act module's output no longer exists in the graph)
    gm = copy.deepcopy(doc.graph_module)
    act = next(n for n in gm.graph.nodes if n.name == "act")
    with gm.graph.inserting_after(act):
        neg = gm.graph.call_function(operator.neg, (act.args[0],))
    act.replace_all_uses_with(neg)
    gm.graph.erase_node(act)
    gm.recompile()
    edited = Stepper(
        gm, doc.example_inputs, eager=EagerReference(ref_module, doc.example_inputs, gm.graph)
    )
    edited.run_to_end()
    assert edited.first_difference() == "fc2"
    assert edited.agreements["fc1"].same and "DIFFERENT" in edited.agreements["fc2"].describe()


def test_a_folded_conv_is_compared_where_its_bn_was(tmp_path) -> None:
    from fxstudio import cli

    session = tmp_path / "f.fxstudio"
    assert (
        cli.main(["rewrite", "examples:resnet", "--builtin", "fold-conv-bn", "-o", str(session)])
        == 0
    )
    s = for_document(open_document(str(session)))
    s.run_to_end()
    assert s.agreements["stem_0"].module == "stem.1"  # conv+bn stand for the BN's output
    assert s.first_difference() is None  # the fold changes the numbers by ~1e-7 of the scale


def test_value_summaries_and_pictures() -> None:
    t = torch.tensor([[1.0, float("inf")], [float("nan"), -2.0]])
    s = summarize(t)
    assert (s.min, s.max, s.nans, s.infs, sum(s.histogram)) == (-2.0, 1.0, 1, 1, 2)
    assert not s.finite and summarize(torch.ones(3)).finite
    assert summarize(torch.arange(5)).mean == 2.0  # integers summarised too
    assert summarize(None).kind == "none" and summarize(3).text == "3"
    maps = picture(torch.randn(2, 9, 10, 12))
    assert maps is not None and maps.caption == "channels 0–8 of item 0"
    assert maps.pixels.shape == (3 * 11 - 1, 3 * 13 - 1)  # 3 x 3 maps, one pixel apart
    assert 0 <= float(maps.pixels.min()) and float(maps.pixels.max()) <= 1
    big = picture(torch.randn(1000, 600))
    assert big is not None and max(big.pixels.shape) <= 256
    assert picture(torch.randn(8)) is None and picture(3) is None
    assert tolerance(torch.float32) == pytest.approx(torch.finfo(torch.float32).eps ** 0.5)
    assert tolerance(torch.int64) == 0.0


def test_a_model_without_inputs_says_how_to_give_them() -> None:
    doc = open_document("examples:simple")
    doc.example_inputs = ()
    with pytest.raises(StepError, match="--input"):
        for_document(doc)


def test_the_step_flow_runs_to_a_node_and_says_it_as_the_command_does(tmp_path) -> None:
    import json

    from fxstudio.core.flows import StepRequest, UnknownNode, step_flow

    doc = open_document("examples:simple")
    code = doc.code()
    result = step_flow(StepRequest(doc, until="act"))
    assert [s.name for s in result.steps] == ["x", "fc1", "act"] and doc.code() == code
    assert result.compared and result.first_difference is None
    lines = result.describe()
    assert lines[0].split()[:4] == ["#", "node", "op", "value"] and lines[-2] == ""
    assert lines[-1].startswith("The graph matches the eager model at all")
    assert result.overlay().values.keys() == {"x", "fc1", "act"}
    result.write(tmp_path / "steps.json")
    assert json.loads((tmp_path / "steps.json").read_text()) == result.to_json()
    alone = step_flow(StepRequest("examples:simple", eager=False))
    assert alone.describe()[-1] == "(not compared with the eager model)"
    assert alone.to_json()["eager"] is False and len(alone.steps) == len(doc)
    with pytest.raises(UnknownNode) as refused:
        step_flow(StepRequest(doc, until="nope", eager=False))
    assert refused.value.names[:2] == ["x", "fc1"]
