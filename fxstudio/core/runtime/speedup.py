"""Before vs after: a speed-up with its 95 % confidence interval and a significance verdict,
for the whole model (interleaved A/B/A/B runs) and for each module and node (the profiled
calls of each side), with nodes matched across a rewrite by provenance.

The statistics: the speed-up is median(before) ÷ median(after); its interval is the
percentile bootstrap of that ratio (seeded: the same data give the same interval); the
Mann–Whitney U test (normal approximation, ties corrected) gives the p-value.  A difference
is *significant* only when p < 0.01, the interval excludes 1, and it is at least 1 % -- a
smaller one never is (pyperf's rule), however many replicates.

Example:
    >>> s = speedup([10.0, 10.2, 9.9, 10.1, 10.0] * 2, [5.0, 5.1, 4.9, 5.0, 5.05] * 2)
    >>> round(s.speedup, 2), s.significant
    (2.0, True)
    >>> speedup([1.0, 1.01, 0.99] * 3, [1.0, 0.995, 1.005] * 3).significant
    False
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.results import Json
from fxstudio.core.runtime.breakdown import NodeProfile
from fxstudio.core.runtime.ondevice import (
    RunError,
    WholeModel,
    check_outputs,
    default_calls,
    outputs_of,
    prepared,
    profile_nodes,
)
from fxstudio.core.runtime.timer import time_interleaved
from fxstudio.core.saving.verify import largest_difference

MIN_REPLICATES = 9  # a side; Google Benchmark's compare warns below 9
FLOOR = 0.01  # |speed-up − 1| below this is never significant
ALPHA = 0.01


@dataclass(frozen=True)
class Speedup:
    before_s: float  # medians
    after_s: float
    speedup: float  # before ÷ after: above 1 is faster after
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool
    n_before: int
    n_after: int

    @property
    def verdict(self) -> str:
        if not self.significant:
            return "no significant change"
        if self.speedup > 1:
            return f"{self.speedup:.2f}× faster"
        return f"{1 / self.speedup:.2f}× slower"

    def describe(self) -> str:
        return (
            f"{self.verdict}: {self.before_s * 1e3:.3f} → {self.after_s * 1e3:.3f} ms, speed-up "
            f"{self.speedup:.3f}× (95 % CI {self.ci_low:.3f}–{self.ci_high:.3f}, Mann–Whitney "
            f"p = {self.p_value:.2g}, {self.n_before} vs {self.n_after} replicates)"
        )

    def to_json(self) -> Json:
        return {
            "before_s": self.before_s,
            "after_s": self.after_s,
            "speedup": self.speedup,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "p_value": self.p_value,
            "significant": self.significant,
            "verdict": self.verdict,
            "n_before": self.n_before,
            "n_after": self.n_after,
        }


def by_change(rows: list[Delta]) -> list[Delta]:
    """Rows by how much time they gained or lost, most first."""
    return sorted(rows, key=lambda d: -abs(d.change.before_s - d.change.after_s))


def mann_whitney(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Mann–Whitney U test (normal approximation, tie-corrected,
    continuity-corrected)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0
    pooled = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(pooled)
    ties = 0.0
    i = 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1][0] == pooled[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    r1 = sum(r for r, (_, side) in zip(ranks, pooled, strict=True) if side == 0)
    u = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    if sigma == 0:
        return 1.0
    z = (abs(u - n1 * n2 / 2) - 0.5) / sigma
    return max(0.0, min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2))))


def speedup(
    before: Sequence[float],
    after: Sequence[float],
    resamples: int = 2000,
    seed: int = 0,
    alpha: float = ALPHA,
) -> Speedup:
    """The speed-up of ``after`` over ``before`` (both: seconds, one value per replicate);
    significant below ``alpha`` (a table of many rows passes ALPHA ÷ rows: Bonferroni)."""
    mb, ma = statistics.median(before), statistics.median(after)
    ratio = mb / ma if ma > 0 else math.inf
    rng = random.Random(seed)
    boots = []
    for _ in range(resamples):
        b = statistics.median(rng.choices(before, k=len(before)))
        a = statistics.median(rng.choices(after, k=len(after)))
        boots.append(b / a if a > 0 else math.inf)
    boots.sort()
    low = boots[int(0.025 * resamples)]
    high = boots[min(resamples - 1, int(0.975 * resamples))]
    p = mann_whitney(before, after)
    significant = p < alpha and not (low <= 1.0 <= high) and abs(ratio - 1) >= FLOOR
    return Speedup(mb, ma, ratio, low, high, p, significant, len(before), len(after))


@dataclass(frozen=True)
class Delta:
    """One row of the before/after table: a node (or the nodes a rewrite replaced), or a module."""

    label: str
    before: tuple[str, ...]  # node names (modules: the path)
    after: tuple[str, ...]
    change: Speedup
    how: str  # "name", "provenance", "module"

    def to_json(self) -> Json:
        return {
            "label": self.label,
            "before": list(self.before),
            "after": list(self.after),
            "how": self.how,
            **self.change.to_json(),
        }


@dataclass
class Comparison:
    whole: Speedup
    before: WholeModel
    after: WholeModel
    max_abs_diff: float  # the outputs before vs after, in this process
    max_rel_diff: float
    nodes: list[Delta] = field(default_factory=list)
    modules: list[Delta] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # after only
    removed: list[str] = field(default_factory=list)  # before only

    def to_json(self) -> Json:
        return {
            **self.whole.to_json(),
            "max_abs_diff": self.max_abs_diff,
            "max_rel_diff": self.max_rel_diff,
            "nodes": [d.to_json() for d in self.nodes],
            "modules": [d.to_json() for d in self.modules],
            "added": self.added,
            "removed": self.removed,
        }

    def describe(self, top: int = 10) -> str:
        lines = [
            f"before vs after (interleaved A/B, {self.whole.n_before} replicates a side): "
            + self.whole.describe(),
            f"  outputs after vs before: max abs diff {self.max_abs_diff:.3g}, max rel diff "
            f"{self.max_rel_diff:.3g}",
        ]
        rows = by_change(self.nodes)
        for d in rows[:top]:
            lines.append(f"  {d.label}: {d.change.describe()}")
        if self.removed:
            lines.append(
                f"  removed: {', '.join(self.removed[:12])}"
                + (" …" if len(self.removed) > 12 else "")
            )
        if self.added:
            lines.append(
                f"  added: {', '.join(self.added[:12])}" + (" …" if len(self.added) > 12 else "")
            )
        return "\n".join(lines)


# a row before its test: label, before names, after names, before and after per call, how
_Row = tuple[str, tuple[str, ...], tuple[str, ...], list[float], list[float], str]


def _tested(rows: list[_Row]) -> list[Delta]:
    """Test every row at ALPHA ÷ rows (Bonferroni: a table of 60 nodes with nothing changed
    must not show one 'significant' by chance)."""
    alpha = ALPHA / max(1, len(rows))
    return [
        Delta(label, was, made, speedup(b, a, alpha=alpha), how)
        for label, was, made, b, a, how in rows
    ]


def summed_calls(profile: NodeProfile, names: Sequence[str]) -> list[float]:
    rows = [profile.node(n) for n in names]
    series = [r.times_s for r in rows if r is not None]
    if not series:
        return []
    return [sum(values) for values in zip(*series, strict=True)]


def match_nodes(
    before: NodeProfile, after: NodeProfile, after_graph: Any
) -> tuple[list[Delta], list[str], list[str]]:
    """Rows for nodes in both profiles: by the rewrite's provenance (``meta["fxstudio_rewrite"]``:
    the nodes it replaced), else by name; the rest are added or removed."""
    old = {n.name for n in before.nodes}
    new = {n.name for n in after.nodes}
    groups: dict[tuple[str, ...], list[str]] = {}
    for n in after_graph.nodes:
        made = n.meta.get("fxstudio_rewrite")
        if n.name in new and made and made.get("from"):
            groups.setdefault(tuple(made["from"]), []).append(n.name)
    rows: list[_Row] = []
    used_old: set[str] = set()
    used_new: set[str] = set()
    for source, made in groups.items():
        was = tuple(s for s in source if s in old)
        if not was:
            continue
        b, a = summed_calls(before, was), summed_calls(after, made)
        if b and a:
            label = f"{' + '.join(was)} → {' + '.join(made)}"
            rows.append((label, was, tuple(made), b, a, "provenance"))
            used_old.update(was)
            used_new.update(made)
    for n in after.nodes:
        if n.name in used_new or n.name not in old or n.name in used_old:
            continue
        b, a = summed_calls(before, [n.name]), list(n.times_s)
        rows.append((n.name, (n.name,), (n.name,), b, a, "name"))
        used_old.add(n.name)
        used_new.add(n.name)
    removed = [n.name for n in before.nodes if n.name not in used_old]
    added = [n.name for n in after.nodes if n.name not in used_new]
    return _tested(rows), added, removed


def match_modules(before: NodeProfile, after: NodeProfile, kept: set[str]) -> list[Delta]:
    """Rows for the modules of both trees that are still modules of both models (a module a
    rewrite took out -- a folded BatchNorm -- has no row: its node is compared instead)."""
    after_modules = {m.path: m for m in after.modules}
    rows: list[_Row] = []
    for m in before.modules:
        if m.path not in after_modules or m.path not in kept:
            continue
        b, a = summed_calls(before, m.names), summed_calls(after, after_modules[m.path].names)
        if b and a:
            rows.append((m.path or "(whole model)", (m.path,), (m.path,), b, a, "module"))
    return _tested(rows)


def check_same_inputs(a: Sequence[Any], b: Sequence[Any]) -> None:
    """Refuse two models whose example inputs differ in number or shape: one set of tensors
    cannot be given to both."""
    if len(a) != len(b) or any(
        isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape != y.shape
        for x, y in zip(a, b, strict=True)
    ):
        raise RunError(
            "The two models take different inputs: they cannot be compared (open both with "
            "the same --input)."
        )


def compare(
    before: GraphDocument,
    after: GraphDocument,
    device: str = "cpu",
    threads: int | None = None,
    dtype: str | None = None,
    min_time: float = 2.0,
    replicates: int = MIN_REPLICATES,
    per_node: bool = False,
    batch: int | None = None,
    stage: Callable[[str], None] | None = None,
) -> Comparison:
    """Time ``before`` and ``after`` interleaved on the same inputs; with ``per_node``, each
    also profiled node by node and compared row by row."""
    if replicates < MIN_REPLICATES:
        raise RunError(f"A comparison needs at least {MIN_REPLICATES} replicates a side.")
    with prepared(before, device, dtype, batch) as pb, prepared(after, device, dtype, batch) as pa:
        check_same_inputs(pb.inputs, pa.inputs)
        inputs = pb.inputs  # the same tensors for both sides
        say = stage or (lambda _text: None)
        say("checking both models' outputs…")
        out_b, out_a = outputs_of(pb.module, inputs), outputs_of(pa.module, inputs)
        worst_abs = worst_rel = 0.0
        for x, y in zip(out_a, out_b, strict=False):
            if x.is_floating_point() and x.shape == y.shape:
                d, r = largest_difference(x, y)
                worst_abs, worst_rel = max(worst_abs, d), max(worst_rel, r)
        say(f"timing both interleaved, {replicates} replicates a side…")
        with torch.no_grad():
            tb, ta = time_interleaved(
                (lambda: pb.module(*inputs), lambda: pa.module(*inputs)),
                pb.target,
                min_time,
                threads,
                replicates,
            )
        whole = speedup(list(tb.times_s), list(ta.times_s))
        profiles: list[NodeProfile | None] = [None, None]
        if per_node:  # both profiled in one session, their calls interleaved
            calls = max(MIN_REPLICATES, default_calls(max(tb.median_s, ta.median_s)))
            say(f"profiling both node by node, interleaved ({calls} calls each)…")
            profiles = list(profile_nodes([pb, pa], threads, [tb.median_s, ta.median_s], calls))
        sides = []
        for p, timing, outputs, prof in (
            (pb, tb, out_b, profiles[0]),
            (pa, ta, out_a, profiles[1]),
        ):
            check = check_outputs(outputs, p.reference)
            env = p.stamp(timing.threads)
            sides.append(WholeModel(timing, check, env, p.items, None, p.notes, prof))
        result = Comparison(whole, sides[0], sides[1], worst_abs, worst_rel)
        if per_node and sides[0].nodes is not None and sides[1].nodes is not None:
            result.nodes, result.added, result.removed = match_nodes(
                sides[0].nodes, sides[1].nodes, pa.module.graph
            )
            kept = {p for p, _ in pb.module.named_modules()} & {
                p for p, _ in pa.module.named_modules()
            }
            result.modules = match_modules(sides[0].nodes, sides[1].nodes, kept)
        return result
