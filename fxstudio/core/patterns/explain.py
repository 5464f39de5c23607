"""Why a pattern did not match: the nearest partial matches over the whole graph, ranked, each
with its first failing check (a :class:`~fxstudio.core.patterns.reasons.Why`), the culprit
node and argument, and the option that would make it match.

Example:
    >>> import torch, torch.nn.functional as F
    >>> from fxstudio.core.patterns.pattern import FX_RULES
    >>> from fxstudio.core.patterns.making import from_function
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

import os
import time
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxstudio.core.patterns.found import Found, Match
from fxstudio.core.patterns.here import here as user_side
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.pattern import Pattern, PatternError
from fxstudio.core.patterns.reasons import Failure, Why
from fxstudio.core.process.files import write_json
from fxstudio.core.results import Json


@dataclass
class Explanation:
    near: list[Failure]  # ranked, nearest first
    at: Failure | Match | None = None  # for "why not here?": that node's attempt
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    places: list[int] = field(default_factory=list)  # per near miss: places that look alike
    asked: str | None = None  # the node "why not here?" was asked about

    def describe(self) -> str:
        lines = list(self.warnings)
        if isinstance(self.at, Match):
            who = self.asked or self.at.anchor
            nodes = ", ".join(self.at.graph_nodes)
            lines.append(f"{who} is in match {self.at.index + 1} ({nodes}): it matches.")
        elif isinstance(self.at, Failure):
            lines.append(f"Here: {self.at.describe()}")
        if not self.near:
            lines.append("No node of the graph comes near the pattern.")
        for i, f in enumerate(self.near, 1):
            matched = f"{f.depth} of the pattern's nodes matched" if f.depth else "nothing matched"
            more = self.places[i - 1] - 1 if i - 1 < len(self.places) else 0
            also = f"; {more} more place{'s' if more != 1 else ''} like it" if more > 0 else ""
            lines.append(f"{i}. {f.describe()} ({matched}{also})")
        return "\n".join(lines)

    def to_json(self) -> list[Json]:
        places = self.places or [1] * len(self.near)
        return [{**f.to_json(), "places": n} for f, n in zip(self.near, places, strict=False)]

    def write(self, path: str | os.PathLike[str]) -> None:
        """:meth:`to_json`, written atomically."""
        write_json(path, self.to_json(), indent=2)


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
    alike: dict[int, int] = {}  # id of a kept miss -> places that look the same
    for s in found.skipped:
        misses[frozenset(s.nodes.values())] = s.failure
    depth = _depth(matcher.anchors[0])
    shapes: dict[int, Failure | None] = {}  # a place's look -> its miss
    memo: dict[Any, Any] = {}
    for node in (
        _around(index, at, len(pattern.compute_nodes)) if at else matcher.near_candidates(gm)
    ):
        if node.op in ("placeholder", "output") or node in in_match:
            continue
        look = _look(matcher, node, depth, memo)
        if look in shapes and at is None:  # the same ops around it: the same miss elsewhere
            seen = shapes[look]
            if seen is not None:
                alike[id(seen)] = alike.get(id(seen), 1) + 1
            continue
        result = matcher.attempt(gm, node, taken)
        shapes[look] = result if isinstance(result, Failure) else None
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
    near = ranked[:limit]
    places = [alike.get(id(f), 1) for f in near]
    return Explanation(near, here, found.warnings, time.perf_counter() - start, places, at)


def _depth(node: fx.Node) -> int:
    """The longest path of arguments from ``node`` back to the pattern's inputs."""
    ins = [a for a in node.all_input_nodes if a.op != "placeholder"]
    return 1 + max((_depth(a) for a in ins), default=0)


def _look(matcher: Matcher, node: fx.Node, depth: int, memo: dict[Any, Any]) -> int:
    """What a node and the nodes it reads from (``depth`` levels) compute, literals included,
    as a number: two places with the same number miss the pattern the same way."""
    key = (node, depth)
    found = memo.get(key)
    if found is not None:
        return found
    rule = matcher.rules[matcher.anchors[0]]
    me: tuple[Any, ...] = (matcher.key_of(node, rule), tuple(node.kwargs), len(node.users) > 1)
    if depth > 0:
        me = (
            me,
            tuple(
                _look(matcher, a, depth - 1, memo) if isinstance(a, fx.Node) else repr(a)[:40]
                for a in node.args
            ),
        )
    number: int = memo.setdefault(("look", me), len(memo))
    memo[key] = number
    return number


def _around(index: dict[str, fx.Node], at: str, steps: int) -> list[fx.Node]:
    """``at`` and the nodes a few users after it (attempts that may reach back to it)."""
    if at not in index:
        raise PatternError(f"There is no node named '{at}' to explain.")
    seen = {index[at]: None}
    frontier = [index[at]]
    for _ in range(steps):
        frontier = [u for n in frontier for u in n.users if u not in seen]
        seen.update(dict.fromkeys(frontier))
    return sorted(seen)


def _here(
    gm: fx.GraphModule,
    matcher: Matcher,
    index: dict[str, fx.Node],
    at: str,
    taken: dict[fx.Node, int],
    found: Found,
    ranked: list[Failure],
) -> Failure | Match:
    for m in found.matches:  # (``at`` is a node: _around said so)
        if at in m.graph_nodes:
            return m
    told = user_side(gm, matcher, index[at], taken)  # from the node asked about
    if told is not None:
        return told
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
    from fxstudio.core.graph.graphviews import make_row

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
