"""Memory measured in a real run (core.memory.measure), on graphs whose allocations are
worked out by hand: float32 tensors of known shapes, views and in-place ops that allocate
nothing, a function that takes scratch and gives it back.  CPU here; the same checks on a
CUDA device (the caching allocator's 512-byte blocks) where there is one."""

from __future__ import annotations

import json

import pytest
import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.memory.measure import CUDA_BLOCK, MeasureError, measure

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
F32 = 4


def twice_plus_one(x: torch.Tensor) -> torch.Tensor:
    """One node that allocates ``2 * x`` (scratch, gone as it returns) and its result."""
    doubled = x * 2
    return doubled + 1


torch.fx.wrap("twice_plus_one")


class Chain(nn.Module):
    """linear (new) -> view (nothing) -> relu_ in place (nothing) -> scratch-taking call ->
    add of the linear's output and the call's (new); the linear's output read last there."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.fc = nn.Linear(n, n)

    def forward(self, x):
        y = self.fc(x)
        v = y.view(-1, self.n)
        r = torch.relu_(v)
        s = twice_plus_one(r)
        return s + y


def _running(m) -> dict[str, int]:
    return {d.name: d.running_bytes for d in m.details}


def _check_chain(m, rows: int, n: int, block: int = 1) -> None:
    def size(k: int) -> int:  # what the allocator hands out for k bytes
        return -(-k // block) * block

    given = rows * n * F32  # the input, counted by its own bytes from its placeholder on
    x = size(rows * n * F32)
    assert m.nodes == {"x": given, "fc": x, "view": 0, "relu_": 0, "twice_plus_one": x, "add": x}
    assert _running(m) == {
        "x": given,
        "fc": given + x,
        "view": given + x,
        "relu_": given + x,
        "twice_plus_one": given + 2 * x,
        "add": given + 3 * x,
    }
    # after each node's frees: fc's and the call's outputs go after the add; the input stays
    # (the caller holds it)
    assert m.timeline == (given, given + x, given + x, given + x, given + 2 * x, given + x)
    assert m.timeline == tuple(d.live_bytes for d in m.details)
    # 2 * x, taken and given back inside the node (the CPU adds the scalars 2 and 1 wrapped
    # as tensors: a few bytes each)
    scratch = {d.name: d.scratch_bytes for d in m.details if d.scratch_bytes}
    assert list(scratch) == ["twice_plus_one"] and x <= scratch["twice_plus_one"] <= x + 64
    freed = {d.name: d.freed_bytes for d in m.details if d.freed_bytes}
    assert freed == {"add": 2 * x}
    assert (m.peak_bytes, m.peak_node) == (given + 3 * x, "add")
    # the allocator's highest point: the call's scratch on top of the input, fc and its result
    top = given + 2 * x + scratch["twice_plus_one"]
    assert (m.allocated_peak_bytes, m.allocated_peak_node) == (top, "twice_plus_one")
    assert m.inputs_bytes == given
    # the generated code frees as the node-by-node run does: the same highest point
    assert m.plain_peak_bytes == top


def test_cpu_chain_bytes_by_hand() -> None:
    gm = fx.symbolic_trace(Chain(64))
    m = measure(gm, (torch.randn(8, 64),))
    assert m.device == "cpu" and "profiler" in m.how
    _check_chain(m, 8, 64)


def test_the_graph_and_its_modes_are_left_as_they_were() -> None:
    gm = fx.symbolic_trace(Chain(16))
    gm.train()
    code = gm.code
    before = {k: v.clone() for k, v in gm.state_dict().items()}
    x = torch.randn(4, 16)
    held = x.clone()
    m = measure(gm, (x,))
    assert gm.training and gm.fc.training and gm.code == code
    assert all(torch.equal(before[k], v) for k, v in gm.state_dict().items())
    assert torch.equal(x, held)  # relu_ ran on the linear's output, not on the input
    assert json.loads(json.dumps(m.to_json()))["peak_bytes"] == m.peak_bytes


class TwoInputs(nn.Module):
    def forward(self, a, b):
        return torch.cat([a, b]) * 2


def test_inputs_count_from_their_placeholders_and_a_shared_storage_once() -> None:
    gm = fx.symbolic_trace(TwoInputs())
    a = torch.randn(10, 10)
    m = measure(gm, (a, torch.randn(5, 10)))
    assert m.nodes["a"] == 400 and m.nodes["b"] == 200 and m.inputs_bytes == 600
    assert m.nodes["cat"] == 600 and m.nodes["mul"] == 600
    assert _running(m)["a"] == 400 and _running(m)["mul"] == 600 + 600 + 600
    assert m.timeline == (400, 600, 1200, 1200)  # the cat's output freed after the mul
    shared = measure(gm, (a, a))  # one storage given twice: its bytes count once
    assert shared.nodes["a"] == 400 and shared.nodes["b"] == 0 and shared.inputs_bytes == 400


class WithParameters(nn.Module):
    """A big weight and buffer, small activations: neither counts as live."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(256, 256))
        self.register_buffer("scale", torch.full((256,), 0.5))

    def forward(self, x):
        return x @ self.w * self.scale


def test_parameters_and_buffers_are_not_activations() -> None:
    gm = fx.symbolic_trace(WithParameters())
    m = measure(gm, (torch.randn(2, 256),))
    assert m.nodes["w"] == 0 and m.nodes["scale"] == 0  # get_attr: the weight, not a copy
    assert m.nodes["matmul"] == 2 * 256 * F32 and m.nodes["mul"] == 2 * 256 * F32
    assert m.peak_bytes == 3 * 2 * 256 * F32  # input, product, scaled


def test_structure_only_is_refused_with_what_to_do() -> None:
    with torch.device("meta"):
        module = Chain(8)
    gm = fx.symbolic_trace(module)
    with pytest.raises(MeasureError, match="without its weights.*estimate"):
        measure(gm, (torch.randn(2, 8),))
    with pytest.raises(MeasureError, match="shapes only"):
        measure(fx.symbolic_trace(Chain(8)), (torch.empty(2, 8, device="meta"),))


@CUDA
def test_cuda_chain_bytes_by_hand_in_allocator_blocks() -> None:
    """The same chain on the GPU: each tensor counts in whole 512-byte blocks (rows * n *
    4 = 1,040 bytes here: three blocks), the input by its own bytes."""
    gm = fx.symbolic_trace(Chain(65))
    x = torch.randn(4, 65)
    m = measure(gm, (x,), "cuda")
    assert m.device.startswith("cuda") and "max_memory_allocated" in m.how
    assert next(gm.parameters()).device.type == "cpu"  # a copy ran on the GPU
    _check_chain(m, 4, 65, CUDA_BLOCK)


def test_a_value_no_node_reads_is_freed_at_once() -> None:
    """As the generated code frees it (``fx.Interpreter`` would keep it to the end)."""
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.call_function(torch.mul, (x, 3.0))  # nobody reads it
    graph.output(graph.call_function(torch.add, (x, 1.0)))
    gm = fx.GraphModule(nn.Module(), graph)
    m = measure(gm, (torch.randn(100),))
    assert m.nodes == {"x": 400, "mul": 400, "add": 400}
    assert [d.running_bytes for d in m.details] == [400, 800, 800]
    assert m.timeline == (400, 400, 800)


class Fails(nn.Module):
    def forward(self, x):
        return torch.relu(x) @ torch.ones(3, 3)  # x is (2, 4): the shapes do not meet


def test_a_run_that_fails_says_where_and_that_the_estimate_needs_none() -> None:
    gm = fx.symbolic_trace(Fails())
    with pytest.raises(MeasureError, match=r"failed at node 'matmul': RuntimeError: .*estimate"):
        measure(gm, (torch.randn(2, 4),))


def test_the_flow_measures_beside_the_estimate_at_the_documents_and_other_sizes() -> None:
    from fxstudio.core.flows.memory import MemoryRequest, memory_flow
    from fxstudio.core.sessions.documents import open_document

    doc = open_document("examples:simple")
    data = memory_flow(doc, MemoryRequest(measure=True)).to_json()
    assert data["measured_peak_bytes"] == data["peak_bytes"] > 0
    measured = {n["name"]: n["bytes"] for n in data["measured"]["nodes"]}
    assert measured == {n["name"]: n["bytes"] for n in data["nodes"]}
    assert data["measured"]["ratio"] == 1.0 and data["measured"]["device"] == "cpu"
    bigger = memory_flow(doc, MemoryRequest(inputs="64x16", measure=True))
    assert bigger.to_json()["measured_peak_bytes"] == bigger.estimate.peak_bytes
    assert bigger.estimate.peak_bytes == 32 * data["peak_bytes"]  # 64 rows, not 2
    assert "measured: peak 20.0 KiB" in bigger.describe()
    assert "measured" not in memory_flow(doc, MemoryRequest()).to_json()
