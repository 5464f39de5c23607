"""A training step's memory, estimated from the graph (no real compute) and measured in one
real step.

The estimate traces the step -- ``loss = sum(output.float().sum())``, its backward -- with
AOTAutograd on fake tensors (:func:`~fxstudio.core.fxcompat.autograd.joint_graphs`), so it
works at any size and on structure-only documents, and partitions it as eager autograd runs it
(``default``: the forward saves every value the backward reads) or as torch.compile does
(``min_cut``: cheap values recomputed in the backward instead of saved).  Then:

- **held through the step**: parameters and buffers, the optimizer's state (SGD none;
  ``momentum``, SGD with momentum 0.9, one buffer per parameter; Adam and AdamW ``exp_avg``
  and ``exp_avg_sq`` of each parameter's dtype and a float32 ``step``), the inputs;
- **forward**: each value's new storage (views and aliases allocate nothing: storage identity
  of the fake values), freed after its last user -- but the values saved for the backward
  (the forward graph's extra outputs), which stay;
- **backward**: the saved values, freed after their last use in the backward; each
  gradient kept from the node that makes it to the end of the step;
- **optimizer step**: the gradients, and what ``torch.optim`` makes as it goes (Adam's
  ``exp_avg_sq.sqrt() / c`` per parameter -- two of the largest parameter's size -- or,
  for the ``foreach`` implementation torch uses on CUDA, one of every parameter's).

The peak is the highest point of the whole (the steady state of training: the optimizer's
state exists, the gradients of the step before were set to ``None``), with the node there
and the values live there.  Each forward and backward node names the document's node it
comes from (``origins``).

One real step is measured by :func:`~fxstudio.core.memory.training_run.measure_training`.

Example:
    >>> import torch
    >>> from torch import nn
    >>> gm = torch.fx.symbolic_trace(nn.Sequential(nn.Linear(64, 64), nn.ReLU()))
    >>> est = training_estimate(gm, (torch.ones(8, 64),), "adamw")
    >>> est.params_bytes, est.grads_bytes, est.optimizer_bytes  # 4160 floats, 2 step scalars
    (16640, 16640, 33288)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.errors import UserError
from fxstudio.core.fxcompat import tree_leaves
from fxstudio.core.fxcompat.autograd import (
    PARTITIONERS,
    JointGraphs,
    document_source,
    joint_graphs,
    sequence_number,
)
from fxstudio.core.graph.graphviews import module_path
from fxstudio.core.graph.weights import faked, weight_bytes
from fxstudio.core.memory.estimate import NodeBytes
from fxstudio.core.memory.lifetimes import Walk, storage_bytes, storages, unique, walk
from fxstudio.core.process.files import atomic_write
from fxstudio.core.process.guard import format_bytes
from fxstudio.core.results import Json

__all__ = [
    "OPTIMIZERS",
    "PARTITIONERS",
    "TrainingEstimate",
    "TrainingMeasurement",
    "check_names",
    "step_loss",
    "training_estimate",
]

#: The optimizers a step is estimated and measured with (``torch.optim``'s defaults).
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")
#: SGD's momentum for ``momentum``.
MOMENTUM = 0.9
#: The name of the optimizer's step where it is the peak.
OPTIMIZER_STEP = "optimizer.step"
#: Bytes of Adam's ``step`` (a float32 scalar tensor per parameter).
STEP_BYTES = 4


class TrainingError(UserError):
    """A training step that cannot be estimated or measured (no parameter to train, no
    weights, an unknown optimizer)."""


@dataclass(frozen=True)
class TrainingMeasurement:
    """One real training step's peak (everything held included, as the estimate's), the
    bytes held as it began (parameters, buffers, optimizer state, inputs), how."""

    device: str
    how: str
    optimizer: str
    peak_bytes: int
    held_bytes: int

    def describe(self) -> str:
        return f"{format_bytes(self.peak_bytes)} measured ({self.device})"

    def to_json(self) -> Json:
        return {
            "device": self.device,
            "how": self.how,
            "optimizer": self.optimizer,
            "peak_bytes": self.peak_bytes,
            "held_bytes": self.held_bytes,
        }


@dataclass(frozen=True)
class TrainingEstimate:
    """A training step's bytes.  ``params_bytes``: parameters and buffers; ``grads_bytes``:
    one gradient per trainable parameter; ``optimizer_bytes``: the optimizer's state;
    ``inputs_bytes``; ``saved_bytes``: what the forward saves for the backward (new storage:
    a saved parameter or input costs nothing more); ``activations_bytes``: every value the
    forward makes; ``peak_bytes``: the step's highest point, everything held included, at
    ``peak_node`` (a forward or backward node, or ``optimizer.step``) in ``peak_phase``,
    ``live_at_peak`` the values live there and ``peak_parts`` its bytes by kind.
    ``forward`` and ``backward``: each node's bytes (``live_bytes``: activation bytes live
    after it -- saved values and gradients included, held bytes not); ``origins``: each
    forward and backward node -> the document's node it comes from; ``measured``: one real
    step's peak, when it was run (:meth:`measured_by`); ``scratch_bytes``: what the
    optimizer's step allocates and frees as it goes (the step's last point: everything held,
    the gradients and this)."""

    optimizer: str
    partitioner: str
    params_bytes: int
    grads_bytes: int
    optimizer_bytes: int
    inputs_bytes: int
    saved_bytes: int
    activations_bytes: int
    peak_bytes: int
    peak_node: str
    peak_phase: str
    live_at_peak: tuple[str, ...]
    peak_parts: dict[str, int]
    forward: tuple[NodeBytes, ...]
    backward: tuple[NodeBytes, ...]
    origins: dict[str, str] = field(default_factory=dict)
    measured: TrainingMeasurement | None = None
    scratch_bytes: int = 0  # what the optimizer's step allocates and frees as it goes

    def measured_by(self, measurement: TrainingMeasurement) -> TrainingEstimate:
        """This estimate with ``measurement`` beside it."""
        return replace(self, measured=measurement)

    def describe(self) -> str:
        """The step in words: its peak and where, what it holds, the measurement."""
        place = (
            "in the optimizer's step"
            if self.peak_phase == "optimizer"
            else f"at {self.peak_phase} node '{self.peak_node}'"
        )
        text = (
            f"{self.optimizer}: peak {format_bytes(self.peak_bytes)} {place} -- parameters "
            f"and buffers {format_bytes(self.params_bytes)}, gradients "
            f"{format_bytes(self.grads_bytes)}, optimizer state "
            f"{format_bytes(self.optimizer_bytes)}, saved for the backward "
            f"{format_bytes(self.saved_bytes)} (of {format_bytes(self.activations_bytes)} the "
            "forward makes)"
        )
        if self.measured is not None:
            m = self.measured
            text += f"; {m.describe()}, estimate/measured {self.peak_bytes / m.peak_bytes:.2f}"
        return text

    def to_json(self) -> Json:
        def rows(nodes: tuple[NodeBytes, ...]) -> list[dict[str, Any]]:
            return [
                {
                    "name": n.name,
                    "target": n.target,
                    "module": n.module,
                    "bytes": n.bytes,
                    "live_bytes": n.live_bytes,
                    "alias_of": n.alias_of,
                    "origin": self.origins.get(n.name),
                }
                for n in nodes
            ]

        return {
            "optimizer": self.optimizer,
            "partitioner": self.partitioner,
            "params_bytes": self.params_bytes,
            "grads_bytes": self.grads_bytes,
            "optimizer_bytes": self.optimizer_bytes,
            "inputs_bytes": self.inputs_bytes,
            "saved_bytes": self.saved_bytes,
            "activations_bytes": self.activations_bytes,
            "peak_bytes": self.peak_bytes,
            "peak_node": self.peak_node,
            "peak_phase": self.peak_phase,
            "live_at_peak": list(self.live_at_peak),
            "peak_parts": dict(self.peak_parts),
            "scratch_bytes": self.scratch_bytes,
            "forward": rows(self.forward),
            "backward": rows(self.backward),
            **(
                {
                    "measured_peak_bytes": self.measured.peak_bytes,
                    "measured": self.measured.to_json(),
                }
                if self.measured is not None
                else {}
            ),
        }

    def write(self, path: str) -> None:
        atomic_write(path, json.dumps(self.to_json(), indent=1))


def step_loss(output: Any) -> torch.Tensor:
    """The loss a step is estimated and measured with: the model's own (a scalar ``loss`` it
    returns, as a Hugging Face model given labels does), else the sum of every floating-point
    tensor it returns, in float32."""
    own = output.get("loss") if isinstance(output, Mapping) else getattr(output, "loss", None)
    if isinstance(own, torch.Tensor) and own.dim() == 0 and own.is_floating_point():
        return own.float()
    tensors = [
        t for t in tree_leaves(output) if isinstance(t, torch.Tensor) and t.is_floating_point()
    ]
    if not tensors:
        raise TrainingError(
            "The model returns no floating-point tensor, so there is no loss to train on: "
            "a training step needs a model whose output depends on its parameters."
        )
    total = tensors[0].float().sum()
    for t in tensors[1:]:
        total = total + t.float().sum()
    return total


# --- the estimate ------------------------------------------------------------------------------


def training_estimate(
    gm: fx.GraphModule,
    inputs: tuple[Any, ...],
    optimizer: str = "adamw",
    *,
    partitioner: str = "default",
    device: str = "cpu",
) -> TrainingEstimate:
    """Estimate a training step of ``gm`` on ``inputs`` (real, fake or meta tensors) with
    ``optimizer`` (:data:`OPTIMIZERS`: ``sgd``, ``momentum`` -- SGD with one buffer per
    parameter -- ``adam`` or ``adamw``, torch.optim's defaults), its joint graph split by
    ``partitioner`` (:data:`PARTITIONERS`); ``device`` picks the optimizer implementation
    torch uses there by default (``foreach`` on CUDA, one parameter at a time on the CPU).
    Nothing real is computed or allocated.  Raises :class:`TrainingError` when nothing can
    be trained."""
    check_names(optimizer, partitioner)
    trainable = _trainable(gm)
    if not trainable:
        raise TrainingError(
            "No parameter of the model requires grad, so a training step changes nothing: "
            "estimate inference memory instead (without --train)."
        )
    with faked(gm, inputs) as fakes:
        try:
            graphs = joint_graphs(gm, fakes, step_loss, partitioner)  # type: ignore[arg-type]
        except ValueError as exc:
            raise TrainingError(
                "The model's output does not depend on any parameter that requires grad, so "
                "there is no backward to estimate: estimate inference memory instead."
            ) from exc
        except Exception as exc:  # torch's own failure, worded (Ctrl+C and Cancel go on up)
            said = str(exc).strip().splitlines()
            raise TrainingError(
                "Tracing the training step (its forward and backward, on fake tensors) failed: "
                f"{said[0] if said else type(exc).__name__}. An op that needs real values, or "
                "has no backward, cannot be estimated this way: estimate inference memory "
                "instead (without --train), or measure a real step (--measure)."
            ) from exc
    sizes = [t.numel() * t.element_size() for t in trainable]
    state = _state_bytes(optimizer, sizes)
    scratch = _optimizer_scratch(optimizer, sizes, device)
    return _account(gm, inputs, graphs, optimizer, partitioner, state, scratch, sum(sizes))


def check_names(optimizer: str, partitioner: str = "default") -> None:
    """Raise :class:`TrainingError` for an optimizer or a partitioner not known."""
    if optimizer not in OPTIMIZERS:
        raise TrainingError(f"Unknown optimizer {optimizer!r}: use one of {', '.join(OPTIMIZERS)}.")
    if partitioner not in PARTITIONERS:
        raise TrainingError(
            f"Unknown partitioner {partitioner!r}: use one of {', '.join(PARTITIONERS)}."
        )


def _trainable(gm: nn.Module) -> list[torch.Tensor]:
    return [p for p in unique(gm.parameters()) if p.requires_grad]


def _state_bytes(optimizer: str, sizes: list[int]) -> int:
    """torch.optim's state after a step: SGD none, with momentum a buffer per parameter;
    Adam and AdamW ``exp_avg`` and ``exp_avg_sq`` (each parameter's dtype and size) and a
    float32 ``step`` per parameter."""
    if optimizer in ("sgd", "momentum"):
        return sum(sizes) if optimizer == "momentum" else 0
    return sum(2 * s + STEP_BYTES for s in sizes)


def _optimizer_scratch(optimizer: str, sizes: list[int], device: str) -> int:
    """What ``optimizer.step()`` allocates and frees as it goes: Adam's denominator
    ``exp_avg_sq.sqrt() / c`` -- one parameter at a time (the CPU's default: the square root
    and the quotient, two of the largest parameter) or all at once (``foreach``, CUDA's
    default: one of every parameter).  SGD updates in place."""
    if optimizer in ("sgd", "momentum") or not sizes:
        return 0
    if torch.device(device).type == "cuda":
        return sum(sizes)
    return 2 * max(sizes)


def _backward_module(node: fx.Node) -> str:
    """The module whose forward a backward node differentiates (AOTAutograd's record)."""
    stack = node.meta.get("fwd_nn_module_stack")
    return str(list(stack.values())[-1][0]) if stack else ""


def _account(
    gm: nn.Module,
    inputs: tuple[Any, ...],
    graphs: JointGraphs,
    optimizer: str,
    partitioner: str,
    state: int,
    scratch: int,
    grads: int,
) -> TrainingEstimate:
    """Put the step together: what is held through it, the forward's and the backward's
    storages, the optimizer's step; the peak over the three."""
    fw, bw = graphs.forward.graph, graphs.backward.graph
    held: dict[int, str] = {}  # parameters, buffers, inputs: the forward's placeholders
    for node in fw.find_nodes(op="placeholder"):
        for storage in storages(node.meta.get("val")):
            held[id(storage)] = node.name
    (fw_output,) = fw.find_nodes(op="output")
    fw_kinds = {
        a.name: "output" if k < graphs.forward_outputs else "saved"
        for k, a in enumerate(fw_output.args[0])
        if isinstance(a, fx.Node)
    }
    (bw_output,) = bw.find_nodes(op="output")
    bw_kinds = {a.name: "gradient" for a in tree_leaves(bw_output.args) if isinstance(a, fx.Node)}
    for node in bw.find_nodes(op="placeholder"):
        if not node.name.startswith("tangents"):
            bw_kinds[node.name] = "saved"
    forward = walk(fw, held, fw_kinds, counted=False)
    backward = walk(bw, held, bw_kinds, counted=True, formulas=partitioner == "default")

    params = weight_bytes(gm)
    inputs_bytes = storage_bytes(inputs)
    base = params + state + inputs_bytes
    points: list[tuple[int, str, int, Walk | None]] = []  # (bytes, phase, index, walk)
    for name, graph_walk in (("forward", forward), ("backward", backward)):
        for i, nbytes in enumerate(graph_walk.live(during=True)):
            points.append((base + nbytes, name, i, graph_walk))
    points.append((base + grads + scratch, "optimizer", -1, None))
    peak, phase, at, top = max(points, key=lambda p: p[0])  # the first highest
    parts = {"parameters": params, "optimizer": state, "inputs": inputs_bytes}
    if top is None:
        node, live = OPTIMIZER_STEP, [b for b in backward.blocks if b.kind == "gradient"]
        parts["optimizer_scratch"] = scratch
    else:
        node, live = top.nodes[at].name, top.at(at)
    for b in live:
        parts[b.kind] = parts.get(b.kind, 0) + b.nbytes
    return TrainingEstimate(
        optimizer=optimizer,
        partitioner=partitioner,
        params_bytes=params,
        grads_bytes=grads,
        optimizer_bytes=state,
        inputs_bytes=inputs_bytes,
        saved_bytes=sum(b.nbytes for b in backward.blocks if b.kind == "saved"),
        activations_bytes=sum(b.nbytes for b in forward.blocks),
        peak_bytes=peak,
        peak_node=node,
        peak_phase=phase,
        live_at_peak=tuple(b.owner for b in live),
        peak_parts=parts,
        forward=forward.rows(module_path),
        backward=backward.rows(_backward_module),
        origins=_origins(fw, bw),
        scratch_bytes=scratch,
    )


def _origins(fw: fx.Graph, bw: fx.Graph) -> dict[str, str]:
    """Each forward node -> the document's node it was traced from; each backward node ->
    that of the forward node whose autograd node it is part of the backward of (the first
    forward node of its sequence number); a saved value -> that of its forward node."""
    origins: dict[str, str] = {}
    first: dict[int, str | None] = {}
    for node in fw.nodes:
        source = document_source(node)
        if source is not None:
            origins[node.name] = source
        seq = sequence_number(node)
        if seq is not None:
            first.setdefault(seq, source)
    for node in bw.nodes:  # (a saved value is named as its forward node: already in)
        seq = sequence_number(node)
        came = first.get(seq) if seq is not None and node.op == "call_function" else None
        if came is not None:
            origins[node.name] = came
    return origins
