"""Two aligned graphs run on the same inputs, their values compared pair by pair, and the
*first difference*: the pair, in the right graph's order, where the two stop agreeing --
the bisection people do by hand when a rewrite or an export changes the numbers.

Both run in this process, on the same input tensors (so the comparison never depends on
the machine).  A pair is compared at its last node on each side (a group's output), element
by element; it *differs* when the largest difference, relative to the left value's largest
magnitude, is above the dtype's tolerance (``sqrt(eps)``, the Step dock's: float32 3.5e-4),
or when the shapes differ.  A value above :data:`FULL` elements is compared on a strided
sample of :data:`SAMPLED` of them (said in ``compared``).

Example (an op inserted: the first difference is that op's first user):
    >>> from fxstudio.core.compare.align import align
    >>> from fxstudio.core.edits import splice
    >>> from fxstudio.core.sessions.documents import open_document
    >>> before, after = open_document("examples:resnet"), open_document("examples:resnet")
    >>> _ = splice(after, "layer2_0_relu", "layer2_0_conv2", "call_function", "operator.mul",
    ...            (2.0,))
    >>> compare_values(before, after, align(before, after)).first_difference
    'layer2_0_conv2'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from fxstudio.core.compare.align import Alignment
from fxstudio.core.fxcompat import tree_leaves
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.results import Json
from fxstudio.core.runtime.ondevice import RunError, prepared
from fxstudio.core.runtime.speedup import check_same_inputs
from fxstudio.core.saving.verify import largest_difference
from fxstudio.core.stepping.eager import tolerance

FULL = 1 << 20  # elements compared in full up to this many
SAMPLED = 1 << 16  # else this many, evenly strided


@dataclass(frozen=True)
class NodeValues:
    """One pair's values: ``left`` and ``right`` are the nodes compared (each side's last)."""

    left: str
    right: str
    max_abs_diff: float | None  # None: nothing compared (see ``note``)
    max_rel_diff: float | None
    tolerance: float
    compared: int  # elements
    numel: int
    note: str = ""

    @property
    def differs(self) -> bool:
        if self.max_rel_diff is None:
            return self.note.startswith("shapes differ")
        return self.max_rel_diff > self.tolerance

    def to_json(self) -> Json:
        return {
            "left": self.left,
            "right": self.right,
            "max_abs_diff": self.max_abs_diff,
            "max_rel_diff": self.max_rel_diff,
            "tolerance": self.tolerance,
            "differs": self.differs,
            "compared": self.compared,
            "numel": self.numel,
            **({"note": self.note} if self.note else {}),
        }


@dataclass
class Values:
    nodes: list[NodeValues] = field(default_factory=list)  # in the right graph's order
    first_difference: str | None = None  # the right node where the two stop agreeing

    def of_right(self, name: str) -> NodeValues | None:
        return next((v for v in self.nodes if v.right == name), None)

    def to_json(self) -> Json:
        return {
            "first_difference": self.first_difference,
            "nodes": [v.to_json() for v in self.nodes],
        }

    def describe(self) -> str:
        differ = [v for v in self.nodes if v.differs]
        if self.first_difference is None:
            return f"values: all {len(self.nodes)} compared pairs agree"
        first = next(v for v in self.nodes if v.right == self.first_difference)
        what = (
            first.note
            if first.max_rel_diff is None
            else f"max abs diff {first.max_abs_diff:.3g}, relative {first.max_rel_diff:.3g}"
        )
        return (
            f"values: {len(differ)} of {len(self.nodes)} compared pairs differ; the first "
            f"difference is {first.right} (left {first.left}): {what}"
        )


class _Recorder(fx.Interpreter):
    """Runs a graph, keeping a copy of the values of ``wanted`` nodes (taken at once: an
    in-place op later must not change what was recorded)."""

    def __init__(self, module: fx.GraphModule, wanted: set[str]) -> None:
        super().__init__(module)
        self.wanted = wanted
        self.kept: dict[str, list[tuple[tuple[int, ...], torch.Tensor]] | None] = {}

    def run_node(self, n: fx.Node) -> Any:
        out = super().run_node(n)
        if n.name in self.wanted:
            leaves = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
            self.kept[n.name] = [(tuple(t.shape), _kept(t)) for t in leaves] if leaves else None
        return out


def _kept(t: torch.Tensor) -> torch.Tensor:
    flat = t.detach().reshape(-1)
    if flat.numel() > FULL:
        flat = flat[:: max(1, flat.numel() // SAMPLED)][:SAMPLED]
    return flat.to("cpu").clone()


def _run(module: Any, inputs: tuple[Any, ...], wanted: set[str], side: str) -> dict[str, Any]:
    recorder = _Recorder(module, wanted)
    try:
        with torch.no_grad():
            recorder.run(*inputs)
    except RunError:
        raise
    except Exception as exc:
        raise RunError(
            f"The {side} graph failed on the shared inputs: {type(exc).__name__}: {exc}"
        ) from exc
    return recorder.kept


def compare_values(
    left: GraphDocument,
    right: GraphDocument,
    alignment: Alignment,
    device: str = "cpu",
    dtype: str | None = None,
) -> Values:
    """Run both graphs on the left's example inputs and compare every aligned pair."""
    pairs = [(p.left[-1], p.right[-1]) for p in alignment.pairs]  # (each side's output)
    with prepared(left, device, dtype) as pl, prepared(right, device, dtype) as pr:
        check_same_inputs(pl.inputs, pr.inputs)
        kept_l = _run(pl.module, pl.inputs, {a for a, _ in pairs}, "left")
        kept_r = _run(pr.module, pl.inputs, {b for _, b in pairs}, "right")
    order = {n.name: i for i, n in enumerate(right.graph.nodes)}
    out = Values()
    for a, b in sorted(pairs, key=lambda ab: order[ab[1]]):
        va, vb = kept_l.get(a), kept_r.get(b)
        if va is None or vb is None:
            continue  # not a tensor on one side (a shape, a flag)
        out.nodes.append(_compared(a, b, va, vb))
    out.first_difference = next((v.right for v in out.nodes if v.differs), None)
    return out


def _compared(a: str, b: str, va: list[Any], vb: list[Any]) -> NodeValues:
    """``va``, ``vb``: each side's tensors at the pair, as (shape, the elements kept)."""
    numel = sum(t.numel() for _, t in vb)
    real = sum(int(torch.Size(shape).numel()) for shape, _ in vb)
    tol = max(tolerance(t.dtype) for _, t in va)
    if [s for s, _ in va] != [s for s, _ in vb]:
        note = f"shapes differ: left {[list(s) for s, _ in va]}, right {[list(s) for s, _ in vb]}"
        return NodeValues(a, b, None, None, tol, 0, real, note)
    worst_abs = worst_rel = 0.0
    for (_, x), (_, y) in zip(vb, va, strict=True):
        if x.numel():
            d, r = largest_difference(x, y)
            worst_abs, worst_rel = max(worst_abs, d), max(worst_rel, r)
    return NodeValues(a, b, worst_abs, worst_rel, tol, numel, real)
