"""Find every match of a pattern in a graph, in time linear in the graph's size.

The search is torch.fx's ``SubgraphMatcher`` (anchors = the pattern's outputs, matched
backwards along arguments, one graph node per pattern node, inner values used only inside,
no cycle, non-overlapping in graph order) with three differences:

* only graph nodes that can be the anchor are tried: they are indexed once by op and target
  (or by op family, see :mod:`~fxstudio.core.patterns.ops`); a second output's candidates are
  the users of nodes already matched, not the whole graph;
* the cycle check of a match only walks the nodes between its first and last node (a path
  out of a match and back in cannot leave that span), not the rest of the graph;
* per-node :class:`~fxstudio.core.patterns.pattern.Rules`: module by type, equivalent
  spellings, commutative ``add``/``mul``, keyword = positional, literals as any value or
  bound, inner nodes with outside users kept.  With :data:`FX_RULES` it finds exactly what
  ``SubgraphMatcher`` finds.

Example:
    >>> import torch
    >>> from fxstudio.core.patterns.making import from_function
    >>> def graph(x, y):
    ...     return torch.relu(x + y) * torch.relu(y + x)
    >>> def pattern(a, b):
    ...     return torch.relu(a + b)
    >>> found = find(torch.fx.symbolic_trace(graph), from_function(pattern))
    >>> [m.outputs for m in found.matches]  # the second is b + a: commutative
    [('relu',), ('relu_1',)]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch.fx as fx
from torch.fx.node import Node

from fxstudio.core.patterns.attempt import MatchState
from fxstudio.core.patterns.found import Found, Match, Skipped
from fxstudio.core.patterns.ops import (
    dialect_of,
    family,
)
from fxstudio.core.patterns.pattern import Pattern, Rules
from fxstudio.core.patterns.reasons import Failure, Why
from fxstudio.core.patterns.walk import Walk


class _Stop(Exception):
    """A valid match was recorded for these anchor candidates: try the next ones."""


class Matcher(Walk):
    """Matches one pattern; :meth:`find` on any number of graphs."""

    def __init__(self, pattern: Pattern) -> None:
        self.pattern = pattern
        self.pgm = pattern.graph_module
        self.rules: dict[Node, Rules] = {n: pattern.rule(n.name) for n in pattern.graph.nodes}
        returning = pattern.outputs
        self.returning = returning
        self.anchors = [n for n in returning if len(n.users) == 1] or returning[-1:]
        self.subtree = [_ancestors(a) for a in self.anchors]
        self.hooks = [self._hook(j) for j in range(len(self.anchors))]
        self.compute = [n for n in pattern.graph.nodes if n.op not in ("placeholder", "output")]
        self.order = {n.name: i for i, n in enumerate(pattern.graph.nodes)}
        self.pfam = {n: family(n, self.pgm) for n in pattern.graph.nodes}
        self.gm: Any = None
        self.gfam: dict[Node, str | None] = {}  # graph node -> its op family, per graph read
        self.gschema: dict[Node, Any] = {}  # graph node -> its ATen arguments, per graph read
        self.later: dict[int, list[Node]] = {}  # anchor j -> its candidates, per graph read

    # --- public ----------------------------------------------------------------------------

    def _read(self, gm: fx.GraphModule) -> None:
        """Start on ``gm`` as it is now: what was worked out about a graph before is dropped
        (an edit may have changed a node's target since)."""
        self.gm = gm
        self.gfam = {}
        self.gschema = {}
        self.later = {}

    def find(self, gm: fx.GraphModule) -> Found:
        start = time.perf_counter()
        self._read(gm)
        warnings = dialect_warnings(self.pattern, gm.graph)
        matches: list[Match] = []
        skipped: list[Skipped] = []
        taken: dict[Node, int] = {}  # graph node -> index of the match that has it
        candidates = self.candidates(gm.graph, 0)

        def record(st: MatchState) -> None:
            nodes = [st.map[p] for p in self.compute]
            failure = self._check(st, nodes, taken)
            if failure is not None:
                skipped.append(Skipped(_names(st), failure))
                return
            for n in nodes:
                taken[n] = len(matches)
            matches.append(self._match(st, len(matches)))
            raise _Stop

        single = len(self.anchors) == 1
        for c in candidates:
            st = MatchState(explain=False)
            if single:
                if self._fast(self.anchors[0], c, st):
                    try:
                        record(st)
                    except _Stop:
                        continue
                if not st.branched:
                    continue
                st = MatchState(explain=False)  # an alternative was passed over: search them all
            try:
                self._search(0, c, st, record)
            except _Stop:
                pass
        # a skipped attempt that a later valid one of the same nodes superseded is noise
        kept = {frozenset(m.nodes.values()) for m in matches}
        skipped = [s for s in skipped if frozenset(s.nodes.values()) not in kept]
        return Found(matches, _unique(skipped), warnings, time.perf_counter() - start)

    def attempt(self, gm: fx.GraphModule, anchor: Node, taken: dict[Node, int]) -> Failure | Match:
        """Try one graph node as the first anchor; the match, or the deepest failure (after
        :meth:`near_candidates` or :meth:`find` on the same graph)."""
        if gm is not self.gm:
            self._read(gm)
        st = MatchState(explain=True)
        result: list[Match] = []

        def record(s: MatchState) -> None:
            if s.tolerated is not None:  # everything matched but the one node
                s.keep(s.tolerated, (len(self.compute) - 1, len(s.map)))
                return
            nodes = [s.map[p] for p in self.compute]
            failure = self._check(s, nodes, taken)
            if failure is not None:
                s.keep(failure, (len(self.compute), len(s.map)), force=True)
                return
            result.append(self._match(s, -1))
            raise _Stop

        try:
            self._search(0, anchor, st, record)
        except _Stop:
            return result[0]
        return st.best or Failure(
            Why.OP, self.anchors[0].name, anchor.name, "", "it does not match"
        )

    def pattern_node(self, name: str) -> Node | None:
        """The pattern's node called ``name``."""
        return next((n for n in self.compute if n.name == name), None)

    def near_candidates(self, gm: fx.GraphModule) -> list[Node]:
        """Graph nodes worth trying as the anchor when explaining: those that can be it, and
        those of another op whose inputs come from what the anchor's inputs would be (one
        op differing).  Not every node: a 20,000-node graph is explained in a blink."""
        self._read(gm)
        anchor = self.anchors[0]
        rule = self.rules[anchor]
        want = self._key(anchor, self.pgm)
        feeds = {self._key(a, self.pgm) for a in anchor.all_input_nodes if a.op != "placeholder"}
        out = []
        for n in gm.graph.nodes:
            if n.op in ("placeholder", "output"):
                continue
            if not feeds or self.key_of(n, rule) == want:
                out.append(n)
            elif any(self.key_of(a, self.rules[anchor]) in feeds for a in n.all_input_nodes):
                out.append(n)
        return out

    def candidates(self, graph: fx.Graph, j: int) -> list[Node]:
        """Graph nodes that can be the ``j``-th anchor, in graph order."""
        pn = self.anchors[j]
        rule = self.rules[pn]
        want = self._key(pn, self.pgm)
        if want[0] == "family":
            return [n for n in graph.nodes if self._gf(n) == want[1]]
        if rule.spelling == "exact" and pn.op in ("call_function", "call_method"):
            return list(graph.find_nodes(op=pn.op, target=pn.target, sort=True))
        return [n for n in graph.nodes if self.key_of(n, rule) == want]

    def _search(
        self, j: int, gn: Node, st: MatchState, record: Callable[[MatchState], None]
    ) -> None:
        for _ in self._node(self.anchors[j], gn, st, "output"):
            if j + 1 == len(self.anchors):
                record(st)
            else:
                for c in self._next_candidates(j + 1, st):
                    self._search(j + 1, c, st, record)

    def _next_candidates(self, j: int, st: MatchState) -> list[Node]:
        hook = self.hooks[j]
        first = st.map.get(hook[0]) if hook is not None else None
        if hook is None or not isinstance(first, Node):  # not reached from earlier anchors
            if j not in self.later:
                self.later[j] = self.candidates(self.gm.graph, j)
            return [c for c in self.later[j] if c not in st.used]
        path = hook[1]
        frontier: list[Node] = [first]
        for pn in path:
            nxt: dict[Node, None] = {}
            for g in frontier:
                for u in g.users:
                    if self._same(pn, u) is None:
                        nxt[u] = None
            frontier = list(nxt)
        return sorted(c for c in frontier if c not in st.used)

    def _check(self, st: MatchState, nodes: list[Node], taken: dict[Node, int]) -> Failure | None:
        inside = set(nodes)
        returning = set(self.returning)
        for pn in self.compute:
            if pn in returning or self.rules[pn].outside_users:
                continue
            gn = st.map[pn]
            for u in gn.users:
                if u not in inside:
                    return Failure(
                        Why.OUTSIDE_USER,
                        pn.name,
                        gn.name,
                        "",
                        f"{u.name} also uses {gn.name}, which the replacement would remove",
                        "allow outside users of this node (it is then kept)",
                        len(nodes),
                        _names(st),
                        u.name,
                    )
        cycle = _cycle(nodes, inside)
        if cycle is not None:
            return Failure(
                Why.CYCLE,
                "",
                cycle[0].name,
                "",
                f"{cycle[1].name} depends on the match and feeds it: replacing it "
                "would make the graph a cycle",
                "",
                len(nodes),
                _names(st),
                cycle[1].name,
            )
        for gn in nodes:
            if gn in taken:
                k = taken[gn]
                return Failure(
                    Why.OVERLAP,
                    "",
                    gn.name,
                    "",
                    f"{gn.name} is already in match {k + 1}",
                    "",
                    len(nodes),
                    _names(st),
                    str(k + 1),
                )
        return None

    def _match(self, st: MatchState, index: int) -> Match:
        inputs = [st.map[p] for p in self.pattern.inputs]
        order = self.order
        bound = sorted(st.bound.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))
        return Match(
            index,
            {p.name: st.map[p].name for p in self.compute},  # in the pattern's order
            tuple(v.name if isinstance(v, Node) else v for v in inputs),
            tuple(isinstance(v, Node) for v in inputs),
            tuple(st.map[p].name for p in self.returning),
            tuple((f"{k[0]}.{k[1]}", v) for k, v in bound),
        )

    def _hook(self, j: int) -> tuple[Node, list[Node]] | None:
        """For anchor ``j`` after the first: a pattern node matched by an earlier anchor and
        the path of users from it to anchor ``j`` (its candidates are found along it)."""
        if j == 0:
            return None
        earlier = set().union(*self.subtree[:j])
        shared = [n for n in self.subtree[j] if n in earlier]
        if not shared:
            return None
        shared.sort(key=lambda n: n.op == "placeholder")  # a computed node fans out less
        start = shared[0]
        path = _path(start, self.anchors[j], self.subtree[j])
        return (start, path) if path is not None else None


# --- helpers -------------------------------------------------------------------------------


def find(gm: fx.GraphModule, pattern: Pattern) -> Found:
    """Every non-overlapping match of ``pattern`` in ``gm``, in graph order."""
    return Matcher(pattern).find(gm)


def dialect_warnings(pattern: Pattern, graph: fx.Graph) -> list[str]:
    graph_dialect = dialect_of(graph)
    pattern_dialect = dialect_of(pattern.graph)
    calls = any(n.op == "call_function" for n in pattern.graph.nodes)
    if calls and pattern_dialect != graph_dialect:
        words = {"fx": "torch functions (symbolic_trace)", "export": "ATen ops (torch.export)"}
        return [
            f"The pattern {pattern.name} calls {words[pattern_dialect]} but the graph calls "
            f"{words[graph_dialect]}: trace the pattern the way the model was captured "
            f"(--frontend {graph_dialect})."
        ]
    return []


def _names(st: MatchState) -> dict[str, str]:  # (the pattern's compute nodes, in its order)
    return {
        p.name: g.name for p, g in st.map.items() if p.op != "placeholder" and isinstance(g, Node)
    }


def _unique(skipped: list[Skipped]) -> list[Skipped]:
    seen: set[frozenset[str]] = set()
    out = []
    for s in skipped:
        key = frozenset(s.nodes.values())
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def _ancestors(node: Node) -> set[Node]:
    seen: set[Node] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if n not in seen:
            seen.add(n)
            stack.extend(n.all_input_nodes)
    return seen


def _path(start: Node, end: Node, within: set[Node]) -> list[Node] | None:
    """The pattern nodes after ``start`` on a path of users to ``end``."""
    prev: dict[Node, Node] = {}
    queue = [start]
    while queue:
        n = queue.pop(0)
        if n is end:
            path = []
            while n is not start:
                path.append(n)
                n = prev[n]
            return path[::-1]
        for u in n.users:
            if u in within and u not in prev:
                prev[u] = n
                queue.append(u)
    return None


def _cycle(nodes: list[Node], inside: set[Node]) -> tuple[Node, Node] | None:
    """A node outside the match that depends on it and feeds it, as (match node it feeds,
    the outside node); only the span between the match's first and last node is walked."""
    last = max(nodes)
    stack = [u for n in nodes for u in n.users if u not in inside and u < last]
    seen = set(stack)
    while stack:
        w = stack.pop()
        for u in w.users:
            if u in inside:
                return u, w
            if u not in seen and u < last:
                seen.add(u)
                stack.append(u)
    return None
