"""AOTAutograd's joint forward and backward graph, partitioned as a training step runs it:
the forward graph (its extra outputs are what it saves for the backward) and the backward
graph (its outputs are the gradients) -- traced on fake tensors, so at any size and for a
structure-only model too; and where each of their nodes comes from.

Part of :mod:`fxstudio.core.fxcompat` (torch's private APIs, each use tested in
``tests/core/test_fxcompat_autograd.py``); imported from here, not through the package.

Example:
    >>> import torch
    >>> from fxstudio.core.fxcompat import fake_tensor_mode, reparametrized
    >>> mode = fake_tensor_mode()
    >>> layer = torch.nn.Linear(4, 3)
    >>> fakes = {n: mode.from_tensor(p) for n, p in layer.named_parameters()}
    >>> with reparametrized(layer, fakes):
    ...     step = joint_graphs(layer, [mode.from_tensor(torch.ones(2, 4))], lambda y: y.sum())
    >>> [n.name for n in step.backward.graph.find_nodes(op="placeholder")]
    ['primals_3', 'tangents_1']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch
import torch.fx as fx
from torch import nn

__all__ = [
    "PARTITIONERS",
    "JointGraphs",
    "document_source",
    "joint_graphs",
    "sequence_number",
]

#: How the joint graph is split: ``default`` saves for the backward what eager autograd
#: saves (every forward value the backward reads); ``min_cut`` is torch.compile's
#: partitioner, which recomputes cheap values in the backward instead of saving them.
PARTITIONERS = ("default", "min_cut")
Partitioner = Literal["default", "min_cut"]


@dataclass(frozen=True)
class JointGraphs:
    """The partitioned training step.  ``forward``'s outputs are the loss and then the
    values saved for the backward; ``backward``'s placeholders are those saved values (same
    names) and the loss's gradient (``tangents_*``), its outputs one gradient per input of
    the step (``None`` where none is needed)."""

    forward: fx.GraphModule
    backward: fx.GraphModule
    #: How many of ``forward``'s outputs are the step's own (the loss); the rest are saved.
    forward_outputs: int


#: The key a node without metadata gets while it runs (see :class:`_Skipping`).
_SOURCE = "fxstudio_source"


def _is_assertion(target: Any) -> bool:
    """``aten._assert_tensor_metadata`` and its kin: checks an export leaves in the graph,
    which compute nothing."""
    return isinstance(target, torch._ops.OpOverload) and target.name().startswith("aten::_assert")


class _Skipping(fx.Interpreter):
    """Runs a graph without its assertions: traced, they would be nodes no output needs,
    which the partitioner puts in the backward with the forward values they read --
    recomputed there (an attention's scores twice over).  Each node's metadata is kept as
    the current one (``preserve_node_meta``), which torch does only for a node with some:
    one with none gets a key for the time it runs."""

    def run_node(self, n: fx.Node) -> Any:
        if n.meta:
            return super().run_node(n)
        n.meta[_SOURCE] = n.name
        try:
            return super().run_node(n)
        finally:
            n.meta.pop(_SOURCE, None)

    def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
        if _is_assertion(target):
            return None
        return super().call_function(target, args, kwargs)


class _Step(nn.Module):
    """``loss(module(*inputs))`` returned as a tuple (what AOTAutograd traces), ``module``
    run node by node (its assertions left out) with each node's metadata kept, so every ATen
    node traced records the node of ``module``'s graph it came from (``from_node``)."""

    def __init__(self, module: nn.Module, loss: Callable[[Any], torch.Tensor]) -> None:
        super().__init__()
        self.module = module
        self.loss = loss

    def forward(self, *inputs: Any) -> tuple[torch.Tensor]:
        import torch.fx.traceback as fx_traceback

        if isinstance(self.module, fx.GraphModule):
            with fx_traceback.preserve_node_meta():
                out = _Skipping(self.module).run(*inputs)
        else:
            out = self.module(*inputs)
        return (self.loss(out),)


def joint_graphs(
    module: nn.Module,
    inputs: Sequence[Any],
    loss: Callable[[Any], torch.Tensor],
    partitioner: Partitioner = "default",
) -> JointGraphs:
    """Trace ``loss(module(*inputs))`` and its backward with AOTAutograd and partition them.

    ``module``'s parameters and buffers and ``inputs`` are fake tensors of one fake tensor
    mode (nothing is computed or allocated); the parameters that require grad get
    gradients.  Raises ``ValueError`` when the loss does not depend on any of them (there
    is no backward to trace)."""
    import torch._functorch.config as functorch_config
    from torch._functorch.aot_autograd import aot_module_simplified
    from torch._functorch.partitioners import (
        default_partition,
        min_cut_rematerialization_partition,
    )

    partition = {"default": default_partition, "min_cut": min_cut_rematerialization_partition}[
        partitioner
    ]
    got: dict[str, fx.GraphModule] = {}

    def keeper(kind: str) -> Callable[[fx.GraphModule, Any], Any]:
        def compiler(gm: fx.GraphModule, example_inputs: Any) -> Any:
            got[kind] = gm
            return gm

        return compiler

    # The backward is partitioned now, not at its first run (there is none: fake tensors).
    trace: Any = aot_module_simplified  # (typed for Dynamo's GraphModules; any module works)
    with functorch_config.patch(force_non_lazy_backward_lowering=True):
        trace(
            _Step(module, loss),
            list(inputs),
            fw_compiler=keeper("forward"),
            bw_compiler=keeper("backward"),
            inference_compiler=keeper("inference"),
            partition_fn=partition,
        )
    if "backward" not in got:
        raise ValueError("the loss does not depend on any parameter that requires grad")
    forward, backward = got["forward"], got["backward"]
    saved = {n.name for n in backward.graph.find_nodes(op="placeholder")}
    (outputs,) = forward.graph.find_nodes(op="output")
    values = list(outputs.args[0])
    own = len(values)
    while own > 0 and isinstance(values[own - 1], fx.Node) and values[own - 1].name in saved:
        own -= 1
    return JointGraphs(forward, backward, own)


def sequence_number(node: fx.Node) -> int | None:
    """The autograd sequence number AOTAutograd recorded on ``node``: a forward node's is
    that of the autograd node its op made, a backward node's that of the autograd node whose
    backward it is part of -- so a backward node comes from the first forward node of its
    number."""
    seq = node.meta.get("seq_nr")
    return int(seq) if seq is not None else None


def document_source(node: fx.Node) -> str | None:
    """The name of the node of the traced module's own graph that ``node`` (a forward ATen
    node) was traced from, or ``None`` (the loss, or no record)."""
    sources = node.meta.get("from_node") or ()
    return str(sources[0].name) if sources else None
