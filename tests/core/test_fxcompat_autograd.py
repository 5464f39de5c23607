"""AOTAutograd's joint graph, partitioned (fxstudio.core.fxcompat.autograd), against the torch
installed: each private use -- aot_module_simplified with the partitioners, functorch's
config, the provenance AOTAutograd records (seq_nr, from_node, fwd_nn_module_stack) --
checked on a small model whose step is known."""

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.fxcompat import fake_tensor_mode, reparametrized
from fxstudio.core.fxcompat.autograd import (
    PARTITIONERS,
    document_source,
    joint_graphs,
    sequence_number,
)


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(16, 64)
        self.down = nn.Linear(64, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.up(x)
        return self.down(torch.nn.functional.gelu(h) * h.sigmoid())


def _step(module: nn.Module, partitioner: str = "default", inputs=None):
    mode = fake_tensor_mode()
    fakes = {n: mode.from_tensor(p) for n, p in module.named_parameters()}
    x = mode.from_tensor(torch.ones(8, 16) if inputs is None else inputs)
    with reparametrized(module, fakes):
        return joint_graphs(module, [x], lambda y: y.float().sum(), partitioner)


def _outputs(gm: fx.GraphModule) -> list:
    (out,) = gm.graph.find_nodes(op="output")
    return list(out.args[0])


def test_the_step_splits_into_a_forward_that_saves_and_a_backward_that_makes_the_grads():
    gm = fx.symbolic_trace(Block())
    step = _step(gm)
    outputs = _outputs(step.forward)
    assert step.forward_outputs == 1 and outputs[0].meta["val"].shape == ()  # the loss
    saved = [n.name for n in outputs[1:]]
    placeholders = [n.name for n in step.backward.graph.find_nodes(op="placeholder")]
    assert placeholders == [*saved, "tangents_1"]  # the saved values, then the loss's grad
    grads = [n.meta["val"].shape for n in _outputs(step.backward) if n is not None]
    assert grads == [p.shape for p in gm.parameters()]  # one per parameter, in their order
    assert all("val" in n.meta for n in step.forward.graph.nodes if n.op != "output")


def test_the_min_cut_partitioner_recomputes_what_the_default_one_saves():
    gm = fx.symbolic_trace(Block())
    default, min_cut = (_step(gm, p) for p in PARTITIONERS)

    def saved_elements(step):
        return sum(n.meta["val"].numel() for n in _outputs(step.forward)[step.forward_outputs :])

    assert saved_elements(min_cut) < saved_elements(default)
    recomputed = {str(n.target) for n in min_cut.backward.graph.nodes if n.op == "call_function"}
    assert "aten.gelu.default" in recomputed  # (gelu(h) recomputed from h)


def test_backward_nodes_name_the_forward_op_and_the_document_node_they_come_from():
    gm = fx.symbolic_trace(Block())
    step = _step(gm)
    document = {n.name for n in gm.graph.nodes}
    sources = {n.name: document_source(n) for n in step.forward.graph.nodes}
    assert {"up", "gelu", "mul", "down"} <= set(sources.values()) <= document | {None}
    first: dict[int, fx.Node] = {}
    for n in step.forward.graph.nodes:
        if sequence_number(n) is not None:
            first.setdefault(sequence_number(n), n)
    (gelu_backward,) = step.backward.graph.find_nodes(
        op="call_function", target=torch.ops.aten.gelu_backward.default
    )
    origin = first[sequence_number(gelu_backward)]
    assert origin.target == torch.ops.aten.gelu.default and sources[origin.name] == "gelu"
    # the module whose forward a backward node undoes
    up_backward = [
        n
        for n in step.backward.graph.nodes
        if n.op == "call_function" and sources.get(first[sequence_number(n)].name) == "up"
    ]
    assert up_backward
    for n in up_backward:
        assert [path for path, _ in n.meta["fwd_nn_module_stack"].values()] == ["up"]


def test_an_exported_graphs_assertions_are_left_out_of_both_graphs():
    module = torch.export.export(Block(), (torch.ones(8, 16),)).module()
    x = next(n for n in module.graph.nodes if n.op == "placeholder")
    with module.graph.inserting_after(x):
        module.graph.call_function(
            torch.ops.aten._assert_tensor_metadata.default, (x,), {"dtype": torch.float32}
        )
    module.recompile()
    step = _step(module)
    for graph in (step.forward.graph, step.backward.graph):
        assert not [n for n in graph.nodes if "assert" in str(n.target)]
    # nothing of the forward is recomputed in the backward for them
    forward_ops = {torch.ops.aten.gelu.default, torch.ops.aten.sigmoid.default}
    assert not [n for n in step.backward.graph.nodes if n.target in forward_ops]
