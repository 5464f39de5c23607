"""Time deltas of two aligned graphs: both profiled node by node in one session, their calls
interleaved (:func:`fxstudio.core.runtime.speedup.compare`), then for each aligned pair the
summed time of its nodes on each side, the speed-up and its confidence interval as the Run
dock computes them, tested at ALPHA ÷ pairs (Bonferroni); and the modules both models still
have, rolled up.

Example:
    >>> from fxstudio.core.compare.align import align
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
    >>> before, after = open_document("examples:negrelu"), open_document("examples:negrelu")
    >>> _ = rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="negrelu")))
    >>> t = time_both(before, after, align(before, after), min_time=0.05)
    >>> [(p.left, p.right) for p in t.pairs]  # the new relu's before: all the rewrite took
    [(('relu', 'neg', 'add'), ('relu',)), (('mul',), ('mul',))]
    >>> t.pairs[0].change.ci_low <= t.pairs[0].change.speedup <= t.pairs[0].change.ci_high
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fxstudio.core.compare.align import Alignment
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.results import Json
from fxstudio.core.runtime.breakdown import NodeProfile
from fxstudio.core.runtime.speedup import (
    ALPHA,
    MIN_REPLICATES,
    Comparison,
    Delta,
    Speedup,
    compare,
    speedup,
    summed_calls,
)


@dataclass(frozen=True)
class PairTime:
    """``left`` with the nodes its rewrite took away (see ``Pair.absorbed``)."""

    left: tuple[str, ...]
    right: tuple[str, ...]
    before_s: float  # the medians of the summed per-call times
    after_s: float
    change: Speedup

    @property
    def delta_s(self) -> float:
        return self.after_s - self.before_s

    def to_json(self) -> Json:
        return {
            "left": list(self.left),
            "right": list(self.right),
            "delta_s": self.delta_s,
            **self.change.to_json(),
        }


@dataclass
class Times:
    whole: Speedup
    pairs: list[PairTime] = field(default_factory=list)  # in the left graph's order
    modules: list[Delta] = field(default_factory=list)

    def to_json(self) -> Json:
        return {
            "whole": self.whole.to_json(),
            "pairs": [p.to_json() for p in self.pairs],
            "modules": [m.to_json() for m in self.modules],
        }


def pair_times(alignment: Alignment, before: NodeProfile, after: NodeProfile) -> list[PairTime]:
    """Each aligned pair's time on both sides (pairs with no profiled call on a side left
    out: an input, a parameter read)."""
    rows = []
    for p in alignment.pairs:  # a folded conv's before: the conv and the BatchNorm it took
        b, a = summed_calls(before, [*p.left, *p.absorbed]), summed_calls(after, p.right)
        if b and a:
            rows.append((p, b, a))
    alpha = ALPHA / max(1, len(rows))
    out = []
    for p, b, a in rows:
        s = speedup(b, a, alpha=alpha)
        out.append(PairTime((*p.left, *p.absorbed), p.right, s.before_s, s.after_s, s))
    return out


def time_both(
    left: GraphDocument,
    right: GraphDocument,
    alignment: Alignment,
    device: str = "cpu",
    threads: int | None = None,
    min_time: float = 1.0,
    replicates: int = MIN_REPLICATES,
) -> Times:
    """Profile both node by node (interleaved) and compare each aligned pair."""
    made: Comparison = compare(
        left, right, device, threads, min_time=min_time, replicates=replicates, per_node=True
    )
    before, after = made.before.nodes, made.after.nodes
    assert before is not None and after is not None  # (per_node)
    return Times(made.whole, pair_times(alignment, before, after), made.modules)
