"""Why a pattern did not match: the nearest partial matches over the whole graph, ranked, each
with its first failing check (a :class:`~fxstudio.core.patterns.reasons.Why`), the culprit
node and argument, and the option that would make it match.

Example:
    >>> import torch, torch.nn.functional as F
    >>> from fxstudio.core.patterns.pattern import FX_RULES, from_function
    >>> def graph(x):
    ...     return F.relu(x + 1.0)
    >>> def pattern(x):
    ...     return torch.relu(x + 1.0)
    >>> gm = torch.fx.symbolic_trace(graph)
    >>> best = explain(gm, from_function(pattern, rules=FX_RULES)).near[0]
    >>> best.why.value, best.culprit, best.hint
    ('target differs', 'relu', "turn on 'equivalent spellings'")
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxstudio.core.patterns.matcher import Found, Match, Matcher
from fxstudio.core.patterns.pattern import Pattern
from fxstudio.core.patterns.reasons import Failure, Why


@dataclass
class Explanation:
    near: list[Failure]  # ranked, nearest first
    at: Failure | Match | None = None  # for "why not here?": that node's attempt
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def describe(self) -> str:
        lines = list(self.warnings)
        if isinstance(self.at, Match):
            lines.append(f"{self.at.anchor} matches (match {self.at.index + 1}).")
        elif isinstance(self.at, Failure):
            lines.append(f"Here: {self.at.describe()}")
        if not self.near:
            lines.append("No node of the graph comes near the pattern.")
        for i, f in enumerate(self.near, 1):
            matched = f"{f.depth} of the pattern's nodes matched" if f.depth else "nothing matched"
            lines.append(f"{i}. {f.describe()} ({matched})")
        return "\n".join(lines)

    def to_json(self) -> list[dict[str, Any]]:
        return [f.to_json() for f in self.near]


def _score(f: Failure) -> tuple[int, int, int]:
    return (f.depth, 1 if f.hint else 0, 0 if f.why is Why.OP else 1)


def explain(
    gm: fx.GraphModule,
    pattern: Pattern,
    at: str | None = None,
    limit: int = 5,
    found: Found | None = None,
) -> Explanation:
    """Every graph node tried as the pattern's anchor; the ``limit`` nearest misses.  With
    ``at`` (a node the user expected to match), also that node's own attempt: as the anchor,
    or as part of an attempt from a node after it."""
    start = time.perf_counter()
    matcher = Matcher(pattern)
    if found is None:
        found = matcher.find(gm)
    index = {n.name: n for n in gm.graph.nodes}
    taken = {index[g]: m.index for m in found.matches for g in m.graph_nodes}
    in_match = set(taken)
    misses: dict[frozenset[str], Failure] = {}
    for s in found.skipped:
        misses[frozenset(s.nodes.values())] = s.failure
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output") or node in in_match:
            continue
        result = matcher.attempt(gm, node, taken)
        if isinstance(result, Failure):
            key = frozenset(result.partial.values()) or frozenset([result.culprit])
            old = misses.get(key)
            if old is None or _score(result) > _score(old):
                misses[key] = result
    ranked = sorted(misses.values(), key=_score, reverse=True)
    if any(f.depth > 0 or f.hint for f in ranked):  # a node that matched nothing is not near
        ranked = [f for f in ranked if f.depth > 0 or f.hint]
    here: Failure | Match | None = None
    if at is not None:
        here = _here(gm, matcher, index, at, taken, found, ranked)
    return Explanation(ranked[:limit], here, found.warnings, time.perf_counter() - start)


def _here(
    gm: fx.GraphModule,
    matcher: Matcher,
    index: dict[str, fx.Node],
    at: str,
    taken: dict[fx.Node, int],
    found: Found,
    ranked: list[Failure],
) -> Failure | Match:
    if at not in index:
        raise KeyError(at)
    for m in found.matches:
        if at in m.graph_nodes:
            return m
    involved = [f for f in ranked if at in f.partial.values() or f.culprit == at]
    tried = matcher.attempt(gm, index[at], taken)
    if isinstance(tried, Match):
        return tried
    # an attempt from a later node that reached this one went further than this node alone
    for f in sorted(involved, key=_score, reverse=True):
        if _score(f) > _score(tried):
            return f
    return tried


def side_by_side(gm: fx.GraphModule, pattern: Pattern, match: Match) -> str:
    """The pattern's table beside the matched region's (the ``print_tabular`` comparison),
    one row per pattern node: opcode, name, target, args."""
    from fxstudio.core.document import make_row

    index = {n.name: n for n in gm.graph.nodes}
    rows = []
    for pn in pattern.graph.nodes:
        if pn.op in ("placeholder", "output"):
            continue
        p = make_row(pn)
        graph_name = match.nodes.get(pn.name)
        g = make_row(index[graph_name]) if graph_name in index else None
        rows.append(
            (
                p.opcode,
                p.name,
                p.target,
                p.args,
                "│",
                g.opcode if g else "",
                g.name if g else "",
                g.target if g else "",
                g.args if g else "",
            )
        )
    head = ("opcode", "name", "target", "args", "│", "opcode", "name", "target", "args")
    cells = [head, *rows]
    widths = [min(28, max(len(r[i]) for r in cells)) for i in range(len(head))]

    def line(r: tuple[str, ...]) -> str:
        return "  ".join(c[: widths[i]].ljust(widths[i]) for i, c in enumerate(r)).rstrip()

    title = "pattern".ljust(sum(widths[:4]) + 6) + "  │  match " + str(match.index + 1)
    return "\n".join([title, line(head), *(line(r) for r in rows)])
