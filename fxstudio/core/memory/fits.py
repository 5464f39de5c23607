"""Whether a run fits, asked before it starts: the memory a run of a document would take --
from the static estimate (:mod:`fxstudio.core.memory.estimate`, shapes only, nothing run) --
against what the device has available.  A run that would not fit is refused with both
numbers and what to do instead (:class:`~fxstudio.core.process.guard.WontFit`); one that
fits still runs held to what is available
(:func:`~fxstudio.core.process.budget.bounded`), since the estimate sees only what the graph
shows (a kernel's scratch, a leaf module's insides are not in it).

What a run holds, by kind (:class:`Holds`):

- ``PEAK`` -- a run of the model (measure, time, compile, check): its activations at their
  peak, the inputs among them;
- ``VALUES`` -- a run that keeps every node's value (stepping through it, comparing two
  graphs node by node): the sum of what each node allocates;
- ``STEP`` -- a training step (measured on a copy of the model): its estimated peak,
  parameters, gradients, optimizer state and saved activations;
- ``copies`` -- and each copy of the weights it makes (a run in another dtype, on another
  device).

Example:
    >>> from fxstudio.core.flows import open_document
    >>> doc = open_document("examples:simple")
    >>> need = run_need(doc)
    >>> need.bytes == need.activations, need.words()
    (True, 'its activations at their peak 640 B')
    >>> require_fits("Running it", need)  # fits: nothing raised
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import torch

from fxstudio.core.errors import UserError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.weights import weight_bytes
from fxstudio.core.memory.estimate import MemoryEstimate, estimate
from fxstudio.core.process.guard import format_bytes, wont_fit

#: What to do about a run that would not fit, in the words of the window and the command line.
SMALLER_RUN = (
    "Use a smaller input (a batch of 1, a shorter sequence, a smaller image: --input), run "
    "one module of the model (--module PATH; Run this module in the window), or open it "
    "structure only (--no-weights: every shape and the memory estimate, nothing run)."
)


class Holds(enum.Enum):
    PEAK = "its activations at their peak"
    VALUES = "every node's value, held"
    STEP = "a training step at its peak: the copy it trains, gradients, optimizer state"


@dataclass(frozen=True)
class Need:
    """What a run would take: ``activations`` (as :class:`Holds` says) and ``weights`` (the
    copies it makes), in bytes."""

    activations: int
    weights: int = 0
    holds: Holds = Holds.PEAK

    @property
    def bytes(self) -> int:
        return self.activations + self.weights

    def twice(self) -> Need:
        """Its activations twice (two runs' outputs held: the eager model's and the graph's)."""
        return Need(2 * self.activations, self.weights, self.holds)

    def __add__(self, other: Need) -> Need:
        return Need(
            self.activations + other.activations,
            self.weights + other.weights,
            self.holds if self.holds == other.holds else Holds.VALUES,
        )

    def words(self) -> str:
        """``its activations at their peak 41.7 GiB, a copy of the weights 1.2 GiB``."""
        said = f"{self.holds.value} {format_bytes(self.activations)}"
        if self.weights:
            said += f", a copy of the weights {format_bytes(self.weights)}"
        return said


def run_need(
    doc: GraphDocument,
    inputs: tuple[Any, ...] | None = None,
    holds: Holds = Holds.PEAK,
    copies: int = 0,
    est: MemoryEstimate | None = None,
) -> Need | None:
    """What a run of ``doc`` on ``inputs`` (default: its example inputs; real, fake or meta
    tensors) takes, from the static estimate (``est`` when the caller has it);
    ``copies``: copies of the weights the run makes.  None when the estimate cannot be
    made without running the model (an op that reads a value: ``if x.sum() > 0``) -- the
    run is then held to the memory available as it goes."""
    if est is None:
        own = inputs is None
        given = tuple(doc.example_inputs) if own else inputs
        fresh = own and not doc.shapes_stale and doc.shape_problem is None
        try:
            est = estimate(doc.graph_module, tuple(given or ()), recorded=fresh)
        except UserError:
            return None
    if holds is Holds.VALUES:
        activations = sum(n.bytes for n in est.nodes)
    else:
        activations = est.peak_bytes
    weights = copies * weight_bytes(doc.graph_module) if copies else 0
    return Need(activations, weights, holds)


def require_fits(what: str, need: Need | None, device: str | torch.device = "cpu") -> None:
    """Refuse (:class:`~fxstudio.core.process.guard.WontFit`) a run that ``need`` says would
    not fit on ``device`` (the machine's memory, or a CUDA device's free memory), before it
    starts (None: not known, not refused)."""
    if need is None:
        return
    target = torch.device(device)
    free = None
    if target.type == "cuda" and torch.cuda.is_available():
        free, _ = torch.cuda.mem_get_info(target)
        what = f"{what} on {target}"
    wont_fit(what, need.bytes, SMALLER_RUN, need.words(), free)
