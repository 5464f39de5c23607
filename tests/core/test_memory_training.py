"""A training step's memory (core.memory.training): estimated from the joint graph AOTAutograd
partitions on fake tensors, measured in one real step on the CPU -- a small LLaMA with random
weights, compared in one process; the optimizers apart by their state; what the forward
saves; structure-only documents; the backward's nodes linked to the document's."""

import pytest
import torch
from torch import nn

from fxstudio.core.flows import MemoryRequest, OpenRequest, memory_flow, open_document
from fxstudio.core.memory.training import TrainingError, training_estimate
from fxstudio.core.memory.training_run import measure_training

LLAMA = (
    "hf:llama(num_hidden_layers=2, hidden_size=256, intermediate_size=512, "
    "num_attention_heads=4, num_key_value_heads=2, head_dim=64, vocab_size=1024, "
    "attn_implementation='eager')"
)
TINY_LLAMA = (
    "hf:llama(num_hidden_layers=2, hidden_size=64, intermediate_size=128, "
    "num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=128, "
    "attn_implementation='eager')"
)


@pytest.fixture(scope="module")
def llama():
    return open_document(OpenRequest(LLAMA, "export", inputs=("2x256:int64",)))


@pytest.fixture(scope="module")
def short_llama():
    return open_document(OpenRequest(LLAMA, "export", inputs=("1x8:int64",)))


def _close(estimated: int, measured: int, within: float) -> bool:
    return abs(estimated - measured) <= within * measured


@pytest.mark.parametrize(
    ("which", "phase"),
    [("llama", "backward"), ("short_llama", "optimizer")],  # activations / weights dominate
)
def test_an_adamw_step_of_a_small_llama_is_estimated_within_10_percent(request, which, phase):
    doc = request.getfixturevalue(which)
    est = training_estimate(doc.graph_module, doc.example_inputs, "adamw")
    measured = measure_training(doc.graph_module, doc.example_inputs, "adamw")
    assert est.peak_phase == phase
    assert _close(est.peak_bytes, measured.peak_bytes, 0.10), (est.peak_bytes, measured)
    # what is held through the step is what the real step held as it began
    held = est.params_bytes + est.optimizer_bytes + est.inputs_bytes
    assert _close(held, measured.held_bytes, 0.001), (held, measured.held_bytes)
    assert sum(est.peak_parts.values()) == est.peak_bytes


def test_the_optimizers_differ_by_their_state_estimated_and_measured(llama):
    gm, inputs = llama.graph_module, llama.example_inputs
    est = {o: training_estimate(gm, inputs, o) for o in ("sgd", "momentum", "adam", "adamw")}
    params = [p for p in gm.parameters() if p.requires_grad]
    grads = sum(p.numel() * p.element_size() for p in params)
    assert est["sgd"].grads_bytes == grads and est["sgd"].optimizer_bytes == 0
    assert est["momentum"].optimizer_bytes == grads  # one momentum buffer per parameter
    # exp_avg and exp_avg_sq per parameter, and a float32 step
    assert (
        est["adam"].optimizer_bytes == est["adamw"].optimizer_bytes == 2 * grads + 4 * len(params)
    )
    state = est["adamw"].optimizer_bytes
    assert est["adamw"].peak_bytes - est["sgd"].peak_bytes == state  # both peak in backward
    sgd, adamw = (measure_training(gm, inputs, o) for o in ("sgd", "adamw"))
    assert _close(adamw.peak_bytes - sgd.peak_bytes, state, 0.01)


def test_the_forward_saves_less_than_it_makes_and_the_min_cut_partitioner_less_still(llama):
    gm, inputs = llama.graph_module, llama.example_inputs
    eager = training_estimate(gm, inputs, "adamw")
    compiled = training_estimate(gm, inputs, "adamw", partitioner="min_cut")
    assert 0 < eager.saved_bytes < eager.activations_bytes
    assert 0 < compiled.saved_bytes < eager.saved_bytes  # recomputed in the backward instead
    assert compiled.peak_bytes < eager.peak_bytes
    # the values saved are live from the forward's end into the backward
    last = eager.forward[-1]
    assert last.live_bytes >= eager.saved_bytes


def test_backward_nodes_are_linked_to_the_document_nodes_they_come_from(llama):
    est = training_estimate(llama.graph_module, llama.example_inputs, "sgd")
    document = {n.name: n for n in llama.graph_module.graph.nodes}
    assert set(est.origins.values()) <= set(document)
    computing = [n for n in est.backward if n.op == "call_function"]
    linked = [n for n in computing if n.name in est.origins]
    assert len(linked) >= 0.9 * len(computing)
    softmax_backward = [n for n in computing if "_softmax_backward_data" in n.target]
    assert len(softmax_backward) == 2  # one per layer
    for node in softmax_backward:
        assert "softmax" in str(document[est.origins[node.name]].target)
        assert node.module.endswith("self_attn")


def test_a_structure_only_document_is_estimated_as_the_one_with_weights():
    full = open_document(OpenRequest(TINY_LLAMA, "export", inputs=("1x64:int64",)))
    bare = open_document(OpenRequest(TINY_LLAMA, "export", inputs=("1x64:int64",), weights=False))
    assert not bare.weights
    a = training_estimate(full.graph_module, full.example_inputs, "adamw")
    b = training_estimate(bare.graph_module, bare.example_inputs, "adamw")
    assert (b.params_bytes, b.optimizer_bytes, b.saved_bytes, b.peak_bytes, b.peak_node) == (
        a.params_bytes,
        a.optimizer_bytes,
        a.saved_bytes,
        a.peak_bytes,
        a.peak_node,
    )
    with pytest.raises(TrainingError, match="--no-weights"):
        measure_training(bare.graph_module, bare.example_inputs, "adamw")


def test_the_memory_flow_adds_the_training_step_in_its_json_and_words():
    doc = open_document(OpenRequest(TINY_LLAMA, "export", inputs=("1x64:int64",)))
    result = memory_flow(doc, MemoryRequest(None, train=True, optimizer="adam", measure=True))
    data = result.to_json()["training"]
    assert data["optimizer"] == "adam" and data["optimizer_bytes"] > 0
    assert data["measured_peak_bytes"] > 0 and data["peak_bytes"] > data["params_bytes"]
    assert {"name", "bytes", "live_bytes", "origin"} <= set(data["backward"][0])
    words = result.describe()
    assert "training step: adam: peak" in words and "MiB" in words and "measured" in words


def test_what_cannot_be_trained_says_so():
    gm = torch.fx.symbolic_trace(nn.Linear(4, 4).requires_grad_(False))
    with pytest.raises(TrainingError, match="No parameter of the model requires grad"):
        training_estimate(gm, (torch.ones(2, 4),))
    with pytest.raises(TrainingError, match="Unknown optimizer 'lion'"):
        training_estimate(torch.fx.symbolic_trace(nn.Linear(4, 4)), (torch.ones(2, 4),), "lion")


class ReadsAValue(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        return y * y.max().item()  # a Python number: fake tensors have none


def test_a_step_that_needs_real_values_says_so_and_what_to_do():
    gm = torch.fx.symbolic_trace(ReadsAValue())
    with pytest.raises(TrainingError, match="fake tensors\\) failed") as caught:
        training_estimate(gm, (torch.ones(2, 4),))
    assert "--measure" in str(caught.value)
    measured = measure_training(gm, (torch.ones(2, 4),), "sgd")  # a real step has the values
    assert measured.peak_bytes > measured.held_bytes > 0


class WithItsLoss(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(64, 256)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        logits = self.lin(x)
        return {"loss": logits.logsumexp(-1).mean(), "logits": logits}


def test_a_model_that_returns_its_loss_trains_on_it():
    gm = torch.fx.symbolic_trace(WithItsLoss())
    inputs = (torch.ones(512, 64),)
    est = training_estimate(gm, inputs, "sgd")
    measured = measure_training(gm, inputs, "sgd")
    assert _close(est.peak_bytes, measured.peak_bytes, 0.10), (est.peak_bytes, measured)
    # logsumexp's backward reads the logits: saved; a sum of the logits would save nothing
    assert est.saved_bytes >= 512 * 256 * 4
