"""The memory flow: where the bytes go -- the one flow behind ``fxstudio memory`` and the
Memory dock (:mod:`fxstudio.core.memory`).

:func:`memory_flow` (the document, a :class:`MemoryRequest`, a baseline) ->
:class:`MemoryResult`: the static estimate (:func:`~fxstudio.core.memory.estimate.estimate`:
each node's bytes, the live bytes after it, the peak and what is live there, parameters
and buffers apart, per-module roll-ups) on the document's inputs or on others given as
``inputs`` (any size: nothing is allocated, a structure-only model too); against a
baseline, both and the difference (the peak, each module, the values one side makes and the
other does not -- a fused attention's scores).

The result's :meth:`~MemoryResult.to_json` is what the CLI's ``--json`` and the window's
saved memory JSON write: ``params_bytes`` (parameters and buffers), ``buffers_bytes``,
``peak_bytes`` (the peak of live activation bytes in the forward: the inputs and every value
the graph makes), ``peak_node``, ``live_at_peak``, ``nodes`` (``name``, ``op``, ``target``,
``module``, ``bytes``, ``live_bytes``, ``alias_of``, ``freed_after``), ``modules`` (``path``,
``bytes``, ``params_bytes``, ``peak_live_bytes``), ``inputs``, ``how``; with a baseline
``before`` and ``after`` (each side's estimate as above) and ``difference``.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:simple")
    >>> result = memory_flow(doc, MemoryRequest())
    >>> result.to_json()["peak_bytes"], result.to_json()["peak_node"]
    (640, 'act')
    >>> memory_flow(doc, MemoryRequest(inputs="64x16")).estimate.peak_bytes
    20480
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

import torch

from fxstudio.core.errors import InputSpecError, UserError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.nodedata import Overlay
from fxstudio.core.graph.shapes import describe_value
from fxstudio.core.memory.agreement import Agreement, agreement
from fxstudio.core.memory.estimate import MemoryEstimate, ModuleBytes, NodeBytes, estimate
from fxstudio.core.memory.fits import Holds, Need, require_fits, run_need
from fxstudio.core.memory.measure import measure, real_inputs
from fxstudio.core.memory.training import TrainingEstimate, training_estimate
from fxstudio.core.memory.training_run import measure_training
from fxstudio.core.model.modelspec import parse_input_spec
from fxstudio.core.process.files import write_json
from fxstudio.core.process.guard import WontFit, format_bytes
from fxstudio.core.results import Json

__all__ = [
    "MemoryEstimate",
    "MemoryRequest",
    "MemoryResult",
    "ModuleBytes",
    "NodeBytes",
    "format_bytes",
    "memory_flow",
    "parse_inputs",
]

OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")


@dataclass(frozen=True)
class MemoryRequest:
    """What to work out: ``inputs`` -- other input sizes, one spec per forward argument
    (``"1x3x224x224"``, ``"1x8192:int64"``, several joined by commas), None for the
    document's own; ``train`` -- a training step too (with ``optimizer``: sgd, momentum,
    adam, adamw); ``measure`` -- a real run on ``device`` measured beside the estimate."""

    inputs: str | None = None
    train: bool = False
    optimizer: str = "adamw"
    measure: bool = False
    device: str = "cpu"


@dataclass
class MemoryResult:
    """The estimate of the document's graph (``title``: the model; ``inputs``: what it was
    worked out on, in words), the parts a request adds (``measured``, ``training``) and,
    against a baseline, ``before`` (the baseline's result); ``refused``: why a measurement
    asked for was not started (the estimate says it would not fit: both numbers, what to
    do)."""

    title: str
    inputs: tuple[str, ...]
    estimate: MemoryEstimate
    measured: Agreement | None = None  # the measurement against the estimate, with measure
    training: TrainingEstimate | None = None  # the training step's, with train
    before: MemoryResult | None = None
    notes: list[str] = field(default_factory=list)
    refused: str = ""  # why the measurement asked for was not started (it would not fit)

    @property
    def peak_bytes(self) -> int:
        return self.estimate.peak_bytes

    def side(self) -> dict[str, Any]:
        """This side alone (the estimate, what it was worked out on, what a request added)."""
        data: dict[str, Any] = {"model": self.title, "inputs": list(self.inputs)}
        data.update(self.estimate.to_json())
        if self.measured is not None:
            data["measured_peak_bytes"] = self.measured.peak_bytes
            data["measured"] = _json(self.measured)
        if self.training is not None:
            data["training"] = _json(self.training)
        if self.notes:
            data["notes"] = list(self.notes)
        if self.refused:
            data["refused"] = self.refused
        return data

    def to_json(self) -> Json:
        """:meth:`side`; against a baseline also ``before``, ``after`` and ``difference``."""
        data = self.side()
        if self.before is not None:
            data["before"] = self.before.side()
            data["after"] = self.side()
            data["difference"] = self.difference()
        return data

    def difference(self) -> dict[str, Any]:
        """After minus before: the peak, the parameters, each module's bytes and peak, and
        the values only one side makes (``gone``: the baseline's, ``new``: this one's), the
        largest first."""
        if self.before is None:
            return {}
        a, b = self.estimate, self.before.estimate
        made_b = {n.name: n.bytes for n in b.nodes if n.bytes}
        made_a = {n.name: n.bytes for n in a.nodes if n.bytes}
        mods_b = {m.path: m for m in b.modules}
        mods_a = {m.path: m for m in a.modules}
        modules = []
        for path in dict.fromkeys([*mods_b, *mods_a]):
            mb, ma = mods_b.get(path), mods_a.get(path)
            before = mb.bytes if mb else 0
            after = ma.bytes if ma else 0
            modules.append(
                {
                    "path": path,
                    "bytes_before": before,
                    "bytes_after": after,
                    "bytes": after - before,
                    "peak_live_before": mb.peak_live_bytes if mb else 0,
                    "peak_live_after": ma.peak_live_bytes if ma else 0,
                }
            )
        gone = sorted((n for n in made_b if n not in made_a), key=lambda n: -made_b[n])
        new = sorted((n for n in made_a if n not in made_b), key=lambda n: -made_a[n])
        measured = {}
        if self.measured is not None and self.before.measured is not None:
            measured = {
                "measured_peak_bytes": self.measured.peak_bytes - self.before.measured.peak_bytes
            }
        return {
            "peak_bytes": a.peak_bytes - b.peak_bytes,
            **measured,
            "peak_ratio": a.peak_bytes / b.peak_bytes if b.peak_bytes else None,
            "params_bytes": a.params_bytes - b.params_bytes,
            "allocated_bytes": sum(made_a.values()) - sum(made_b.values()),
            "modules": modules,
            "gone": [{"name": n, "bytes": made_b[n]} for n in gone],
            "new": [{"name": n, "bytes": made_a[n]} for n in new],
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """:meth:`to_json`, written atomically."""
        write_json(path, self.to_json(), indent=2, default=str)

    def node_bytes(self) -> Overlay:
        """The bytes each node allocates, in MiB, as per-node data (the canvas's heat, Model
        Explorer's node data, Netron's metrics)."""
        return Overlay("memory", {n.name: n.bytes / 2**20 for n in self.estimate.nodes}, "MiB")

    def describe(self, top: int = 5) -> str:
        """The peak, what holds it and the largest values in words (GiB, MiB); against a
        baseline, the change."""
        e = self.estimate
        lines = [_summary(self)]
        largest = sorted((n for n in e.nodes if n.bytes), key=lambda n: -n.bytes)[:top]
        if largest:
            lines.append(
                "  largest values: "
                + ", ".join(f"{n.name} {format_bytes(n.bytes)}" for n in largest)
            )
        modules = sorted(
            (m for m in e.modules if "." not in m.path), key=lambda m: -m.peak_live_bytes
        )[:top]
        if modules:
            lines.append(
                "  modules (peak while they run): "
                + ", ".join(
                    f"{m.path or '(top)'} {format_bytes(m.peak_live_bytes)}" for m in modules
                )
            )
        if self.measured is not None:
            lines.append(f"  measured: {self.measured.describe()}")
        if self.refused:
            lines.append(f"  not measured: {self.refused.splitlines()[0]}")
        if self.training is not None:
            lines.append(f"  training step: {self.training.describe()}")
        lines.extend(f"  note: {n}" for n in self.notes)
        if self.before is not None:
            lines.append(_change(self))
        return "\n".join(lines)


def _json(part: Any) -> Any:
    return part.to_json() if hasattr(part, "to_json") else part


def _summary(result: MemoryResult) -> str:
    e = result.estimate
    live = list(e.live_at_peak)
    shown = ", ".join(live[:6]) + (f" and {len(live) - 6} more" if len(live) > 6 else "")
    on = ", ".join(result.inputs) or "no inputs"
    return (
        f"{result.title} on {on}: peak {format_bytes(e.peak_bytes)} of activations (inputs "
        f"and the values the graph makes) at node '{e.peak_node}', {len(live)} value(s) live "
        f"there ({shown}); parameters and buffers {format_bytes(e.params_bytes)}"
        + (f" (buffers {format_bytes(e.buffers_bytes)})" if e.buffers_bytes else "")
    )


def _change(result: MemoryResult) -> str:
    assert result.before is not None
    d = result.difference()
    before, after = result.before.estimate.peak_bytes, result.estimate.peak_bytes
    sign = "-" if d["peak_bytes"] < 0 else "+"
    share = f" ({sign}{abs(d['peak_bytes']) / before:.1%})" if before else ""
    text = (
        f"  against {result.before.title}: peak {format_bytes(before)} -> "
        f"{format_bytes(after)}, {sign}{format_bytes(abs(d['peak_bytes']))}{share}"
    )
    if result.before.measured is not None and result.measured is not None:
        mb, ma = result.before.measured.peak_bytes, result.measured.peak_bytes
        text += f"\n  measured: peak {format_bytes(mb)} -> {format_bytes(ma)}"
    gone = d["gone"]
    if gone:
        total = sum(g["bytes"] for g in gone)
        text += (
            f"\n  no longer made: {len(gone)} value(s), {format_bytes(total)} in all (largest: "
            + ", ".join(f"{g['name']} {format_bytes(g['bytes'])}" for g in gone[:3])
            + ")"
        )
    if d["new"]:
        total = sum(g["bytes"] for g in d["new"])
        text += f"\n  made only now: {len(d['new'])} value(s), {format_bytes(total)} in all"
    return text


def parse_inputs(text: str) -> tuple[torch.Tensor, ...]:
    """``"1x3x224x224, 1x16:int64"`` as meta tensors of those shapes and dtypes (nothing is
    allocated: any size)."""
    parts = [p for p in re.split(r"[,;\s]+", text.strip()) if p]
    if not parts:
        raise InputSpecError(
            "No input sizes were given. Write one per forward argument, e.g. 1x3x224x224 or "
            "1x16:int64, several joined by commas."
        )
    specs = [parse_input_spec(p) for p in parts]
    return tuple(torch.empty(s.shape, dtype=s.dtype, device="meta") for s in specs)


def memory_flow(
    document: GraphDocument,
    request: MemoryRequest | None = None,
    against: GraphDocument | None = None,
) -> MemoryResult:
    """The memory of ``document``'s graph as ``request`` asks; against a baseline document
    (before a rewrite, another model), both and the difference.  Raises
    :class:`~fxstudio.core.errors.UserError` for inputs the graph does not take (the node
    and what to give instead)."""
    request = request if request is not None else MemoryRequest()
    if request.optimizer.lower() not in OPTIMIZERS:
        raise UserError(
            f"Unknown optimizer '{request.optimizer}'. Use one of: {', '.join(OPTIMIZERS)}."
        )
    before = _side(against, request) if against is not None else None
    result = _side(document, request)
    result.before = before
    return result


def _side(doc: GraphDocument, request: MemoryRequest) -> MemoryResult:
    gm = doc.graph_module
    if request.inputs is not None:
        inputs = parse_inputs(request.inputs)
        _check_count(gm, inputs)
    else:
        inputs = tuple(doc.example_inputs)
        _check_count(gm, inputs)
    # the recorded values are read only while they are the graph's (not behind an edit)
    fresh = not doc.shapes_stale and doc.shape_problem is None
    est = estimate(gm, inputs, recorded=fresh)
    words = tuple(describe_value(v) for v in inputs)
    result = MemoryResult(doc.request.spec, words, est)
    # a real run beside the estimate (sizes given: made real) -- not started, and said
    # why, when the estimate says it cannot fit (the estimate is shown all the same)
    run = "Measuring the memory of a run at these inputs"
    if request.measure and _fits(result, run, run_need(doc, est=est), request.device):
        doc.ensure_compiled()
        real = tuple(real_inputs(inputs))
        result.measured = agreement(est, measure(gm, real, request.device))
    if request.train:  # a training step: the joint graph AOTAutograd partitions (fake tensors)
        optimizer = request.optimizer.lower()
        step = training_estimate(gm, inputs, optimizer, device=request.device)
        need = Need(step.peak_bytes + step.scratch_bytes, holds=Holds.STEP)
        run = "Measuring a training step at these inputs"
        if request.measure and not result.refused and _fits(result, run, need, request.device):
            step = step.measured_by(measure_training(gm, real, optimizer, request.device))
        result.training = step
    return result


def _fits(result: MemoryResult, what: str, need: Need | None, device: str) -> bool:
    """Whether a measurement ``need`` says fits; if not, why, on ``result.refused``."""
    try:
        require_fits(what, need, device)
    except WontFit as exc:
        result.refused = str(exc)
        return False
    return True


def _check_count(gm: Any, inputs: tuple[Any, ...]) -> None:
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    required = [n for n in placeholders if not n.args]
    if not (len(required) <= len(inputs) <= len(placeholders)):
        names = ", ".join(n.name for n in placeholders)
        raise InputSpecError(
            f"The model's forward takes {len(required)} input(s) ({names}), but "
            f"{len(inputs)} were given. Give one size per argument, in order (--input, or "
            "the Memory dock's inputs), e.g. 1x3x224x224 or 1x16:int64."
        )
