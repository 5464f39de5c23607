"""The eager model's values at the points where a module boundary allows, for comparison.

The graph's nodes are matched to the modules of the eager model: a ``call_module`` node is
its module's output; a module that tracing inlined is matched to the one node of its group
that is used outside it (its output).  One eager forward with ``register_forward_hook`` on
those modules records each output -- not the whole tensor but a fixed sample of at most
:data:`SAMPLE` elements (every k-th, the same positions in the graph's value), so memory
stays bounded on a big model.  :meth:`EagerReference.compare` checks the graph's value at the
node against it, with a tolerance derived from the dtype (``sqrt(eps)`` of the scale: 3.5e-4
for float32, 3.1e-2 for float16), in this one process.

Example:
    >>> import torch
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.model.loading import load_model
    >>> doc = open_document("examples:simple")
    >>> ref = EagerReference(load_model("examples:simple").module.eval(), doc.example_inputs,
    ...                      doc.graph)
    >>> sorted(ref.boundaries.values())
    ['', 'act', 'fc1', 'fc2']
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.fxcompat import tree_leaves
from fxstudio.core.graph.graphviews import module_path, module_tree_of
from fxstudio.core.results import Json

SAMPLE = 4096


def boundaries(graph: fx.Graph) -> dict[str, str]:
    """Node name -> the module path whose output the node is ("" for the graph's output).

    A node a rewrite made (``meta["fxstudio_rewrite"]``) stands for what it replaced: it is
    compared at the output of the match it replaced (``"at"``: a conv folded with its BN,
    the BN's output), not at the module it calls.
    """
    out: dict[str, str] = {}
    taken: set[str] = set()
    for n in graph.nodes:
        if n.op == "call_module":
            made = n.meta.get("fxstudio_rewrite")
            path = (made.get("at") or module_path(n)) if made else str(n.target)
            out[n.name] = path
            taken.add(path)
        elif n.op == "output":
            out[n.name] = ""
    by_name = {n.name: n for n in graph.nodes}
    for group in module_tree_of(graph).walk():
        if not group.path or group.path in taken:
            continue
        members = set(group.all_nodes())
        leaving = [
            name
            for name in members
            if by_name[name].op not in ("get_attr", "placeholder")
            and any(u.name not in members for u in by_name[name].users)
        ]
        if len(leaving) == 1 and leaving[0] not in out:
            out[leaving[0]] = group.path
    return out


def tolerance(dtype: torch.dtype) -> float:
    """The relative difference (to the value's scale) still called the same: ``sqrt(eps)``."""
    if not dtype.is_floating_point:
        return 0.0
    return float(torch.finfo(dtype).eps) ** 0.5


def _sample(t: torch.Tensor) -> torch.Tensor:
    flat = t.detach().reshape(-1)
    step = max(1, flat.numel() // SAMPLE)
    return flat[::step][:SAMPLE].to("cpu", torch.float64).clone()


def _tensors(value: Any) -> list[torch.Tensor]:
    return [t for t in tree_leaves(value) if isinstance(t, torch.Tensor)]


@dataclass(frozen=True)
class Recorded:
    shapes: tuple[tuple[int, ...], ...]
    samples: tuple[torch.Tensor, ...]


@dataclass(frozen=True)
class Agreement:
    """The graph's value at a node against the eager module's output."""

    module: str  # the module path ("" = the whole model)
    same: bool
    difference: float  # the largest |graph - eager| over the compared elements
    scale: float  # the largest |eager| there
    tolerance: float  # relative to scale
    compared: int  # elements compared
    numel: int  # elements in the value
    note: str = ""  # why nothing could be compared

    @property
    def differs(self) -> bool:
        """Compared and found different (a value that could not be compared does not)."""
        return not self.same and (self.compared > 0 or self.difference == float("inf"))

    def describe(self) -> str:
        where = f"module {self.module}" if self.module else "the eager model's output"
        if self.note:
            return f"{where}: {self.note}"
        of = (
            "all" if self.compared == self.numel else f"{self.compared:,} sampled of {self.numel:,}"
        )
        verdict = "same" if self.same else "DIFFERENT"
        return (
            f"{verdict} as {where}: max |Δ| {self.difference:.3g} (scale {self.scale:.3g}, "
            f"tolerance {self.tolerance:.2g}×scale), {of} elements"
        )

    def to_json(self) -> Json:
        return asdict(self)


class EagerReference:
    """The eager ``module`` run once on ``inputs``, its outputs recorded at the boundaries of
    ``graph`` (see the module docstring).  ``calls`` counts each module's calls: a module
    called more than once is not compared (which call a node is would be a guess)."""

    def __init__(self, module: nn.Module, inputs: tuple[Any, ...], graph: fx.Graph) -> None:
        self.boundaries = boundaries(graph)
        wanted = {p for p in self.boundaries.values() if p}
        self.recorded: dict[str, Recorded] = {}
        self.calls: dict[str, int] = {}
        named = dict(module.named_modules())
        handles = []
        for path in wanted:
            sub = named.get(path)
            if sub is not None:
                handles.append(sub.register_forward_hook(self._hook(path)))
        try:
            with torch.no_grad():
                self._record("", module(*inputs))
        finally:
            for h in handles:
                h.remove()

    def _hook(self, path: str) -> Any:
        def hook(_module: nn.Module, _args: Any, output: Any) -> None:
            self._record(path, output)

        return hook

    def _record(self, path: str, output: Any) -> None:
        self.calls[path] = self.calls.get(path, 0) + 1
        ts = _tensors(output)
        self.recorded[path] = Recorded(
            tuple(tuple(t.shape) for t in ts),
            tuple(_sample(t) for t in ts),
        )

    def compare(self, name: str, value: Any) -> Agreement | None:
        """The graph's ``value`` at node ``name`` against the eager output there, or None
        where the node is at no module boundary."""
        path = self.boundaries.get(name)
        if path is None:
            return None
        ts = _tensors(value)
        numel = sum(t.numel() for t in ts)
        rec = self.recorded.get(path)

        def unmatched(note: str) -> Agreement:
            return Agreement(path, False, float("nan"), float("nan"), 0.0, 0, numel, note)

        if rec is None:  # the eager model never called it (a module the graph added)
            return None
        if self.calls.get(path, 0) > 1:
            return unmatched(f"called {self.calls[path]} times by the eager model: not compared")
        shapes = tuple(tuple(t.shape) for t in ts)
        if shapes != rec.shapes:
            return Agreement(
                path,
                False,
                float("inf"),
                0.0,
                0.0,
                0,
                numel,
                f"shapes differ: graph {[list(s) for s in shapes]}, "
                f"eager {[list(s) for s in rec.shapes]}",
            )
        diff = scale = 0.0
        compared = 0
        tol = 0.0
        for t, eager in zip(ts, rec.samples, strict=True):
            mine = _sample(t)
            compared += mine.numel()
            tol = max(tol, tolerance(t.dtype))
            if mine.numel():
                both_nan = torch.isnan(mine) & torch.isnan(eager)
                delta = (mine - eager).abs()
                delta[both_nan] = 0
                diff = max(diff, float(delta.max()))
                finite = eager[torch.isfinite(eager)]
                if finite.numel():
                    scale = max(scale, float(finite.abs().max()))
        same = diff <= tol * scale if diff == diff else False  # NaN: never the same
        return Agreement(path, same, diff, scale, tol, compared, numel)
