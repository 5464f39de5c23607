"""The estimate and the measurement side by side: the peaks, their ratio, and each node where
they part, with why -- as data a table or a plot shows.

Where they part, and why:

- **scratch** -- a kernel took memory inside itself and gave it back before it returned (a
  convolution's workspace or repacked weight, an attention kernel's buffers): not a value of
  the graph, so not in the estimate; it raises the allocator's peak
  (``allocated_peak_bytes``), not the values' (``peak_bytes``); under
  :data:`SMALL_SCRATCH` (a Python number wrapped as a tensor for one op) it is not listed;
- **rounding** -- the CUDA caching allocator hands out blocks of 512 bytes: a tensor of
  1,040 bytes takes 1,536;
- **a copy** -- the run made new storage where the estimate sees a view, an alias or an
  in-place op; **no copy** -- the other way round;
- **kept** -- a kernel left more (or less) allocated than its output's storage.

Example:
    >>> import torch
    >>> from fxstudio.core.memory.estimate import estimate
    >>> from fxstudio.core.memory.measure import measure
    >>> gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU()))
    >>> x = torch.ones(2, 4)
    >>> a = agreement(estimate(gm, (x,)), measure(gm, (x,)))
    >>> a.estimated_peak_bytes, a.measured_peak_bytes, a.ratio, a.parted
    (160, 160, 1.0, ())
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Protocol

from fxstudio.core.memory.measure import MeasuredMemory, NodeMeasure
from fxstudio.core.process.guard import format_bytes
from fxstudio.core.results import Json

#: Scratch below this is not worth a line: a Python number wrapped as a 0-dim tensor for one
#: op, a few bytes of bookkeeping.
SMALL_SCRATCH = 1024


class _EstimatedNode(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def op(self) -> str: ...
    @property
    def bytes(self) -> int: ...


class _Estimate(Protocol):
    """What is read of a :class:`~fxstudio.core.memory.estimate.MemoryEstimate`."""

    @property
    def peak_bytes(self) -> int: ...
    @property
    def peak_node(self) -> str: ...
    @property
    def nodes(self) -> Iterable[_EstimatedNode]: ...


@dataclass(frozen=True)
class NodeAgreement:
    """One node where the estimate and the measurement part: the bytes its output allocates
    (estimated, measured), the scratch its kernels took and gave back, and why, in words."""

    name: str
    estimated_bytes: int
    measured_bytes: int
    scratch_bytes: int
    why: str


@dataclass(frozen=True)
class Agreement:
    """The peaks side by side (``ratio``: measured / estimated), the allocator's peak with
    scratch, the nodes where they part (``parted``), what explains the whole run's
    difference (``notes``), and the measurement itself (``measured``: each node's bytes)."""

    device: str
    estimated_peak_bytes: int
    estimated_peak_node: str
    measured_peak_bytes: int
    measured_peak_node: str
    allocated_peak_bytes: int
    allocated_peak_node: str
    ratio: float
    parted: tuple[NodeAgreement, ...]
    notes: tuple[str, ...]
    measured: MeasuredMemory

    @property
    def peak_bytes(self) -> int:
        """The measured peak (the estimate's quantity)."""
        return self.measured_peak_bytes

    def within(self, tolerance: float) -> bool:
        """Whether the measured peak is within ``tolerance`` (0.1: 10 %) of the estimate."""
        return abs(self.ratio - 1.0) <= tolerance

    def to_json(self) -> Json:
        """The measurement (:meth:`MeasuredMemory.to_json`: ``peak_bytes``, each node's
        ``nodes``, ...) with the estimate's peak beside it, the ratio, ``parted`` and
        ``notes``."""
        data = self.measured.to_json()
        data.update(
            estimated_peak_bytes=self.estimated_peak_bytes,
            estimated_peak_node=self.estimated_peak_node,
            ratio=self.ratio,
            parted=[asdict(n) for n in self.parted],
            notes=list(self.notes),
        )
        return data

    def describe(self) -> str:
        head = (
            f"peak {format_bytes(self.measured_peak_bytes)} at {self.measured_peak_node} on "
            f"{self.device}, against {format_bytes(self.estimated_peak_bytes)} estimated at "
            f"{self.estimated_peak_node} ({self.ratio:.3f}x)"
        )
        return "\n".join([head, *(f"    {n}" for n in self.notes)])


def agreement(estimate: _Estimate, measured: MeasuredMemory) -> Agreement:
    """Compare ``estimate`` (:func:`~fxstudio.core.memory.estimate.estimate`) with
    ``measured`` (:func:`~fxstudio.core.memory.measure.measure`) of the same graph and inputs."""
    details = {d.name: d for d in measured.details}
    parted = []
    for node in estimate.nodes:
        got = details.get(node.name)
        if got is None:
            continue
        why = _why(node.op, node.bytes, got)
        if why:
            parted.append(NodeAgreement(node.name, node.bytes, got.bytes, got.scratch_bytes, why))
    ratio = measured.peak_bytes / estimate.peak_bytes if estimate.peak_bytes else 1.0
    return Agreement(
        measured.device,
        estimate.peak_bytes,
        estimate.peak_node,
        measured.peak_bytes,
        measured.peak_node,
        measured.allocated_peak_bytes,
        measured.allocated_peak_node,
        ratio,
        tuple(parted),
        tuple(_notes(estimate, measured, parted)),
        measured,
    )


def _why(op: str, estimated: int, got: NodeMeasure) -> str:
    """Why a node's estimated and measured bytes part ('' when they do not)."""
    said = []
    if got.rounding_bytes:
        said.append(
            f"allocator rounding: {format_bytes(got.rounding_bytes)} more than asked (the CUDA "
            "allocator hands out 512-byte blocks, a cached large block whole)"
        )
    measured = got.bytes - got.rounding_bytes
    diff = measured - estimated
    if diff and op == "placeholder":
        said.append(
            "an input counted by its storage: it shares one with another input, or is a view "
            "of a larger tensor"
        )
    elif diff and estimated == 0:
        said.append(
            f"a copy: the run made {format_bytes(measured)} of new storage where the estimate "
            "sees a view, an alias or an in-place op"
        )
    elif diff and measured == 0:
        said.append(
            f"no copy: the run reused storage where the estimate expects "
            f"{format_bytes(estimated)} of new storage"
        )
    elif diff:
        more = "more" if diff > 0 else "less"
        said.append(
            f"kept: its kernels left {format_bytes(abs(diff))} {more} allocated than its "
            "output's storage"
        )
    if got.scratch_bytes >= SMALL_SCRATCH:
        said.append(
            f"scratch: its kernels took {format_bytes(got.scratch_bytes)} more and gave it back "
            "before the node ended (workspace, not a value of the graph: not in the estimate)"
        )
    return "; ".join(said)


def _notes(estimate: _Estimate, measured: MeasuredMemory, parted: list[NodeAgreement]) -> list[str]:
    notes = []
    diff = measured.peak_bytes - estimate.peak_bytes
    if diff == 0:
        notes.append("The values' peak is the same, byte for byte.")
    else:
        more = "more" if diff > 0 else "less"
        counted = sum(n.measured_bytes - n.estimated_bytes for n in parted)
        notes.append(
            f"The run's values peak {format_bytes(abs(diff))} {more} than estimated; the nodes "
            f"that part left {format_bytes(abs(counted))} "
            f"{'more' if counted >= 0 else 'less'} in all."
        )
        rounding = sum(d.rounding_bytes for d in measured.details)
        if rounding:
            notes.append(
                f"Allocator rounding adds {format_bytes(rounding)} over the run's allocations."
            )
    extra = measured.allocated_peak_bytes - measured.peak_bytes
    if extra > 0:
        notes.append(
            f"With the kernels' scratch the allocator peaks {format_bytes(extra)} higher, at "
            f"{measured.allocated_peak_node} "
            f"({format_bytes(measured.allocated_peak_bytes)}): workspace the estimate, which "
            "sees outputs only, cannot see."
        )
    if measured.plain_peak_bytes is not None:
        notes.append(
            f"A plain run of the whole model peaks at {format_bytes(measured.plain_peak_bytes)} "
            "(scratch included)."
        )
    return notes
