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
    >>> from fxstudio.core.patterns.pattern import from_function
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import torch
import torch.fx as fx
from torch.fx.node import Node

from fxstudio.core.capture import node_dtype, node_shape
from fxstudio.core.patterns.ops import (
    COMMUTATIVE,
    IN_PLACE_FLAGS,
    dialect_of,
    family,
    is_aten,
    spelled,
    strict_key,
    submodule,
)
from fxstudio.core.patterns.pattern import Pattern, Rules
from fxstudio.core.patterns.reasons import Failure, Why


@dataclass(frozen=True)
class Match:
    """One match, by names: pattern node -> graph node."""

    index: int
    nodes: dict[str, str]  # pattern compute node -> graph node
    inputs: tuple[Any, ...]  # per pattern input: a graph node name (str) or a literal
    input_is_node: tuple[bool, ...]
    outputs: tuple[str, ...]  # graph node per pattern output
    bound: tuple[tuple[str, Any], ...] = ()  # literals bound for the replacement, labelled

    @property
    def graph_nodes(self) -> list[str]:
        return list(self.nodes.values())

    @property
    def anchor(self) -> str:
        return self.outputs[-1]

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "nodes": dict(self.nodes),
            "inputs": [
                v if isinstance(v, (str, int, float, bool)) or v is None else repr(v)
                for v in self.inputs
            ],
            "outputs": list(self.outputs),
            "bound": {k: repr(v) for k, v in self.bound},
        }


@dataclass(frozen=True)
class Skipped:
    """A structural match refused by a check (outside user, cycle, overlap)."""

    nodes: dict[str, str]
    failure: Failure

    def to_json(self) -> dict[str, Any]:
        return {"nodes": dict(self.nodes), **self.failure.to_json()}


@dataclass
class Found:
    matches: list[Match]
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0


_UNKNOWN = object()
_LABELS = tuple(f"args[{i}]" for i in range(64))
_ORDER = object()  # marks an argument order tried only to explain a miss


class _Stop(Exception):
    """A valid match was recorded for these anchor candidates: try the next ones."""


class _State:
    __slots__ = (
        "map",
        "used",
        "bound",
        "depth",
        "best",
        "best_at",
        "explain",
        "trail",
        "branched",
        "tolerated",
    )

    def __init__(self, explain: bool) -> None:
        self.map: dict[Node, Any] = {}  # pattern node -> graph node (or literal, for inputs)
        self.used: set[Node] = set()
        self.bound: dict[tuple[str, str], Any] = {}
        self.depth = 0
        self.best: Failure | None = None
        self.best_at = (-1, -1)
        self.explain = explain
        # explaining: the one node whose op differs, matched past to see how much else fits
        self.tolerated: Failure | None = None
        self.trail: list[Any] = []  # the fast path's bindings, in order, for undoing
        self.branched = False  # the fast path passed over an alternative (a commuted order)

    def undo(self, mark: int) -> None:
        while len(self.trail) > mark:
            key = self.trail.pop()
            if isinstance(key, tuple):
                self.bound.pop(key, None)
            else:
                self.used.discard(self.map.pop(key))

    def fail(
        self, why: Why, pn: Node, gn: Any, arg: str, text: str, hint: str = "", other: str = ""
    ) -> None:
        if not self.explain:
            return
        culprit = gn.name if isinstance(gn, Node) else repr(gn)
        found = Failure(why, pn.name, culprit, arg, text, hint, self.depth, {}, other)
        if self.tolerated is not None:  # the first failing check is the one to tell
            found, depth = self.tolerated, self.depth - 1
        else:
            depth = self.depth
        self.keep(found, (depth, len(self.map)), why is Why.ORDER)

    def keep(self, failure: Failure, progress: tuple[int, int], force: bool = False) -> None:
        """Keep ``failure`` if this attempt got further than the one kept (``progress``:
        pattern nodes that match, bindings made)."""
        if self.best is not None and self.best_at >= progress and not force:
            return
        self.best_at = progress
        partial = {
            p.name: g.name
            for p, g in self.map.items()
            if isinstance(g, Node) and p.op != "placeholder"
        }
        self.best = replace(failure, depth=progress[0], partial=partial)


class Matcher:
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
        self.gfam: dict[Node, str | None] = {}

    # --- public ----------------------------------------------------------------------------

    def find(self, gm: fx.GraphModule) -> Found:
        start = time.perf_counter()
        self.gm = gm
        warnings = dialect_warnings(self.pattern, gm.graph)
        matches: list[Match] = []
        skipped: list[Skipped] = []
        taken: dict[Node, int] = {}  # graph node -> index of the match that has it
        candidates = self.candidates(gm.graph, 0)

        def record(st: _State) -> None:
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
            st = _State(explain=False)
            if single:
                if self._fast(self.anchors[0], c, st):
                    try:
                        record(st)
                    except _Stop:
                        continue
                if not st.branched:
                    continue
                st = _State(explain=False)  # an alternative was passed over: search them all
            try:
                self._search(0, c, st, record)
            except _Stop:
                pass
        # a skipped attempt that a later valid one of the same nodes superseded is noise
        kept = {frozenset(m.nodes.values()) for m in matches}
        skipped = [s for s in skipped if frozenset(s.nodes.values()) not in kept]
        return Found(matches, _unique(skipped), warnings, time.perf_counter() - start)

    def attempt(self, gm: fx.GraphModule, anchor: Node, taken: dict[Node, int]) -> Failure | Match:
        """Try one graph node as the first anchor; the match, or the deepest failure."""
        self.gm = gm
        st = _State(explain=True)
        result: list[Match] = []

        def record(s: _State) -> None:
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

    def near_candidates(self, gm: fx.GraphModule) -> list[Node]:
        """Graph nodes worth trying as the anchor when explaining: those that can be it, and
        those of another op whose inputs come from what the anchor's inputs would be (one
        op differing).  Not every node: a 20,000-node graph is explained in a blink."""
        self.gm = gm
        anchor = self.anchors[0]
        rule = self.rules[anchor]
        want = self._key(anchor, self.pgm)
        feeds = {self._key(a, self.pgm) for a in anchor.all_input_nodes if a.op != "placeholder"}
        out = []
        for n in gm.graph.nodes:
            if n.op in ("placeholder", "output"):
                continue
            if not feeds or self._key_of(n, rule) == want:
                out.append(n)
            elif any(self._key_of(a, self.rules[anchor]) in feeds for a in n.all_input_nodes):
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
        return [n for n in graph.nodes if self._key_of(n, rule) == want]

    def _gf(self, gn: Node) -> str | None:
        fam = self.gfam.get(gn, _UNKNOWN)
        if fam is _UNKNOWN:
            fam = self.gfam[gn] = family(gn, self.gm)
        return fam  # type: ignore[return-value]

    # --- the fast path: no alternatives tried, no reasons kept ------------------------------

    def _fast(self, pn: Node, gn: Any, st: _State) -> bool:
        m = st.map
        if pn in m:
            got = m[pn]
            return got is gn or (not isinstance(gn, Node) and _same_literal(got, gn))
        if not isinstance(gn, Node):
            if pn.op != "placeholder":
                return False
            m[pn] = gn
            st.trail.append(pn)
            return True
        if gn in st.used:
            return False
        if pn.op != "placeholder" and self._same(pn, gn) is not None:
            return False
        m[pn] = gn
        st.used.add(gn)
        st.trail.append(pn)
        if pn.op == "placeholder":
            return True
        mark = len(st.trail)
        pargs, gargs = pn.args, gn.args
        if not pn.kwargs and not gn.kwargs and len(pargs) == len(gargs):
            ok = True
            for i, pa in enumerate(pargs):
                if not self._fast_arg(pn, pa, gargs[i], _LABELS[i], st):
                    ok = False
                    break
            if ok:
                return True
            st.undo(mark)
            if len(pargs) == 2 and self.pfam[pn] in COMMUTATIVE and self.rules[pn].commutative:
                st.branched = True
                if self._fast_arg(pn, pargs[0], gargs[1], "args[1]", st) and self._fast_arg(
                    pn, pargs[1], gargs[0], "args[0]", st
                ):
                    return True
                st.undo(mark)
            return False
        plans = self._plans(pn, gn, st)
        if len(plans) > 1:
            st.branched = True
        for plan in plans:
            if all(self._fast_arg(o, pa, ga, lab, st) for o, pa, ga, lab in plan):
                return True
            st.undo(mark)
        return False

    def _fast_arg(self, owner: Node, pa: Any, ga: Any, label: str, st: _State) -> bool:
        if isinstance(pa, Node):
            return (isinstance(ga, Node) or pa.op == "placeholder") and self._fast(pa, ga, st)
        if isinstance(pa, (list, tuple)):
            return (
                isinstance(ga, (list, tuple))
                and len(pa) == len(ga)
                and all(
                    self._fast_arg(owner, a, b, f"{label}[{k}]", st)
                    for k, (a, b) in enumerate(zip(pa, ga, strict=True))
                )
            )
        mode = self.rules[owner].literals
        if mode == "any":
            return True
        if mode == "bind":
            key = (owner.name, label)
            st.bound[key] = ga
            st.trail.append(key)
            return True
        return not isinstance(ga, Node) and _same_literal(pa, ga)

    # --- search ----------------------------------------------------------------------------

    def _search(self, j: int, gn: Node, st: _State, record: Callable[[_State], None]) -> None:
        for _ in self._node(self.anchors[j], gn, st, "output"):
            if j + 1 == len(self.anchors):
                record(st)
            else:
                for c in self._next_candidates(j + 1, st):
                    self._search(j + 1, c, st, record)

    def _next_candidates(self, j: int, st: _State) -> list[Node]:
        hook = self.hooks[j]
        if hook is None:
            return [c for c in self.candidates(self.gm.graph, j) if c not in st.used]
        start, path = hook
        first = st.map.get(start)
        if not isinstance(first, Node):
            return [c for c in self.candidates(self.gm.graph, j) if c not in st.used]
        frontier: list[Node] = [first]
        for pn in path:
            nxt: dict[Node, None] = {}
            for g in frontier:
                for u in g.users:
                    if self._same(pn, u) is None:
                        nxt[u] = None
            frontier = list(nxt)
        return sorted(c for c in frontier if c not in st.used)

    def _node(self, pn: Node, gn: Any, st: _State, label: str) -> Iterator[None]:
        if pn in st.map:
            if st.map[pn] is gn or (not isinstance(gn, Node) and _same_literal(st.map[pn], gn)):
                yield
            else:
                mapped = st.map[pn]
                was = mapped.name if isinstance(mapped, Node) else repr(mapped)
                what = "input" if pn.op == "placeholder" else "value"
                here = gn.name if isinstance(gn, Node) else repr(gn)
                st.fail(
                    Why.INPUT,
                    pn,
                    gn,
                    label,
                    f"the pattern's {what} {pn.name} is {was} elsewhere in this match, {here} here",
                )
            return
        if not isinstance(gn, Node):
            if pn.op == "placeholder":  # torch.fx binds an input to a literal too
                st.map[pn] = gn
                try:
                    yield
                finally:
                    del st.map[pn]
                return
            st.fail(
                Why.LITERAL,
                pn,
                gn,
                label,
                f"the graph passes the literal {gn!r} where the pattern computes {pn.name}",
            )
            return
        if gn in st.used:
            st.fail(
                Why.INPUT, pn, gn, label, f"{gn.name} is already matched to another pattern node"
            )
            return
        if pn.op == "placeholder":
            st.map[pn] = gn
            st.used.add(gn)
            try:
                yield
            finally:
                del st.map[pn]
                st.used.discard(gn)
            return
        failure = self._same(pn, gn)
        tolerating = False
        if failure is not None:
            why, text, hint = failure
            if not st.explain or st.tolerated is not None:
                st.fail(why, pn, gn, "", text, hint)
                return
            # explaining: say this node's reason, but see how much of the rest matches
            st.tolerated = Failure(why, pn.name, gn.name, "", text, hint)
            tolerating = True
        st.map[pn] = gn
        st.used.add(gn)
        st.depth += 1
        try:
            for plan in self._plans(pn, gn, st):
                yield from self._all(plan, 0, st)
        finally:
            st.depth -= 1
            del st.map[pn]
            st.used.discard(gn)
            if tolerating:
                st.tolerated = None

    def _all(self, plan: list[tuple[Node, Any, Any, str]], i: int, st: _State) -> Iterator[None]:
        if i == len(plan):
            yield
            return
        owner, pa, ga, label = plan[i]
        for _ in self._arg(owner, pa, ga, label, st):
            yield from self._all(plan, i + 1, st)

    def _arg(self, owner: Node, pa: Any, ga: Any, label: str, st: _State) -> Iterator[None]:
        if pa is _ORDER:
            st.fail(
                Why.ORDER,
                owner,
                st.map[owner],
                label,
                f"{st.map[owner].name} takes the same two values the other way round",
                "treat add and mul as commutative",
            )
            return
        if isinstance(pa, Node):
            if isinstance(ga, Node) or pa.op == "placeholder":
                yield from self._node(pa, ga, st, label)
            else:
                st.fail(
                    Why.LITERAL,
                    owner,
                    st.map[owner],
                    label,
                    f"the graph passes {ga!r} where the pattern computes {pa.name}",
                )
            return
        if isinstance(pa, (list, tuple)) and isinstance(ga, (list, tuple)):
            if len(pa) != len(ga):
                st.fail(
                    Why.ARGUMENTS,
                    owner,
                    st.map[owner],
                    label,
                    f"{len(ga)} items where the pattern has {len(pa)}",
                )
                return
            plan = [
                (owner, a, b, f"{label}[{k}]") for k, (a, b) in enumerate(zip(pa, ga, strict=True))
            ]
            yield from self._all(plan, 0, st)
            return
        mode = self.rules[owner].literals
        if mode == "any":
            yield
            return
        if mode == "bind":
            key = (owner.name, label)
            st.bound[key] = ga
            try:
                yield
            finally:
                st.bound.pop(key, None)
            return
        if isinstance(ga, Node):
            st.fail(
                Why.LITERAL,
                owner,
                st.map[owner],
                label,
                f"the graph computes {ga.name} where the pattern has the literal {pa!r}",
                "match literals as any value",
            )
            return
        if _same_literal(pa, ga):
            yield
            return
        st.fail(
            Why.LITERAL,
            owner,
            st.map[owner],
            label,
            f"{ga!r} where the pattern has {pa!r}",
            "match this literal as any value (or bind it for the replacement)",
        )

    # --- comparing one node ----------------------------------------------------------------

    def _key(self, pn: Node, gm: Any) -> Any:
        rule = self.rules[pn]
        if rule.spelling == "equivalent":
            fam = family(pn, gm)
            if fam is not None:
                return ("family", fam)
        return strict_key(pn, gm, rule.module != "name")

    def _key_of(self, gn: Node, rule: Rules) -> Any:
        if rule.spelling == "equivalent":
            fam = family(gn, self.gm)
            if fam is not None:
                return ("family", fam)
        return strict_key(gn, self.gm, rule.module != "name")

    def _same(self, pn: Node, gn: Node) -> tuple[Why, str, str] | None:
        """``None`` when ``gn`` computes what ``pn`` does (arguments aside), else the reason."""
        rule = self.rules[pn]
        if pn.op == "placeholder":
            return None
        if pn.op == gn.op and pn.target == gn.target and pn.op in ("call_function", "call_method"):
            return self._constraints(pn, gn, rule) if rule.same_shape or rule.same_dtype else None
        pf = self.pfam[pn]
        gf = self._gf(gn)
        if rule.spelling == "equivalent" and pf is not None and pf == gf:
            return self._constraints(pn, gn, rule)
        if pn.op != gn.op:
            hint = "turn on 'equivalent spellings'" if pf is not None and pf == gf else ""
            return (
                Why.OP,
                f"{spelled(gn)} is a {gn.op}, the pattern's {spelled(pn)} a {pn.op}",
                hint,
            )
        if pn.op == "call_module":
            return self._module(pn, gn, rule) or self._constraints(pn, gn, rule)
        if pn.op == "get_attr":
            pv, gv = _value(self.pgm, pn.target), _value(self.gm, gn.target)
            if type(pv) is not type(gv):
                return (
                    Why.TARGET,
                    f"{gn.target} is a {type(gv).__name__}, not a {type(pv).__name__}",
                    "",
                )
            return None
        if pn.target != gn.target:
            if pn.op == "call_function" and is_aten(pn.target) != is_aten(gn.target):
                side = "an ATen op (torch.export)" if is_aten(gn.target) else "a torch function"
                return (
                    Why.DIALECT,
                    f"the graph calls {side}: {spelled(gn)} vs the pattern's {spelled(pn)}",
                    "trace the pattern in the graph's dialect",
                )
            hint = "turn on 'equivalent spellings'" if pf is not None and pf == gf else ""
            return Why.TARGET, f"{spelled(gn)} is not {spelled(pn)}", hint
        return self._constraints(pn, gn, rule)

    def _module(self, pn: Node, gn: Node, rule: Rules) -> tuple[Why, str, str] | None:
        pm, gm_ = submodule(self.pgm, pn.target), submodule(self.gm, gn.target)
        if rule.module == "name":
            if pn.target == gn.target:
                return None
            if type(pm) is type(gm_):
                return (
                    Why.MODULE_NAME,
                    f"self.{gn.target} is not self.{pn.target}",
                    f"match the {type(pm).__name__} by type",
                )
            return Why.TARGET, f"self.{gn.target} is not self.{pn.target}", ""
        if type(pm) is not type(gm_):
            return (
                Why.TARGET,
                f"self.{gn.target} is a {type(gm_).__name__}, not a {type(pm).__name__}",
                "",
            )
        if rule.module == "attrs":
            for attr in rule.attrs:
                a, b = getattr(pm, attr, None), getattr(gm_, attr, None)
                if a != b:
                    return (
                        Why.MODULE_ATTRS,
                        f"{gn.target}.{attr} is {b!r}, the pattern's {a!r}",
                        f"stop comparing {attr}",
                    )
        return None

    def _constraints(self, pn: Node, gn: Node, rule: Rules) -> tuple[Why, str, str] | None:
        if rule.same_shape and node_shape(pn) != node_shape(gn):
            return Why.SHAPE, f"shape {node_shape(gn)}, the pattern's {node_shape(pn)}", ""
        if rule.same_dtype and node_dtype(pn) != node_dtype(gn):
            return Why.DTYPE, f"dtype {node_dtype(gn)}, the pattern's {node_dtype(pn)}", ""
        return None

    def _plans(self, pn: Node, gn: Node, st: _State) -> list[list[tuple[Node, Any, Any, str]]]:
        """The ways to pair ``pn``'s arguments with ``gn``'s: one, or two for a commuted op."""
        rule = self.rules[pn]
        if not pn.kwargs and not gn.kwargs and len(pn.args) == len(gn.args):
            n = len(pn.args)
            plans = [list(zip([pn] * n, pn.args, gn.args, _LABELS[:n], strict=True))]
            if n == 2 and self.pfam[pn] in COMMUTATIVE:
                swapped = [
                    (pn, pn.args[0], gn.args[1], "args[1]"),
                    (pn, pn.args[1], gn.args[0], "args[0]"),
                ]
                if rule.commutative:
                    plans.append(swapped)
                elif st.explain:  # would the other order match?  Then that is the reason
                    plans.append([*swapped, (pn, _ORDER, None, "args")])  # type: ignore[list-item]
            return plans
        pargs, pkw = list(pn.args), dict(pn.kwargs)
        gargs, gkw = list(gn.args), dict(gn.kwargs)
        if st.tolerated is not None and st.tolerated.pattern_node == pn.name:
            # explaining past this node's other op: pair its arguments as loosely as can be
            rule = replace(rule, spelling="equivalent", arguments="normalize")
        if rule.spelling == "equivalent" and (pn.op != gn.op or pn.target != gn.target):
            for kw in (pkw, gkw):
                for flag in IN_PLACE_FLAGS:
                    kw.pop(flag, None)
        if rule.arguments == "exact":
            if (len(pargs) != len(gargs) or list(pkw) != list(gkw)) and _schema_call(pn):
                p_all, g_all = (
                    _schema_args(pn.target, pargs, pkw),
                    _schema_args(pn.target, gargs, gkw),
                )
                return [_pairs(pn, p_all, g_all, [f"args[{i}]" for i in range(len(p_all))])]
            if len(pargs) != len(gargs) or list(pkw) != list(gkw):
                self._fail_arguments(pn, gn, pargs, pkw, gargs, gkw, st)
                return []
            labels = [f"args[{i}]" for i in range(len(pargs))] + list(pkw)
            return [_pairs(pn, pargs + list(pkw.values()), gargs + list(gkw.values()), labels)]
        if len(pargs) != len(gargs) or set(pkw) != set(gkw):
            norm = _normalized(pn, self.pgm, pargs, pkw), _normalized(gn, self.gm, gargs, gkw)
            if norm[0] is not None and norm[1] is not None and set(norm[0]) == set(norm[1]):
                keys = list(norm[0])
                return [_pairs(pn, [norm[0][k] for k in keys], [norm[1][k] for k in keys], keys)]
            self._fail_arguments(pn, gn, pargs, pkw, gargs, gkw, st)
            return []
        keys = list(pkw)
        labels = [f"args[{i}]" for i in range(len(pargs))] + keys
        plan = _pairs(pn, pargs + [pkw[k] for k in keys], gargs + [gkw[k] for k in keys], labels)
        plans = [plan]
        if len(pargs) == 2 and not pkw and self.pfam[pn] in COMMUTATIVE:
            swapped = _pairs(pn, pargs, [gargs[1], gargs[0]], ["args[1]", "args[0]"])
            if rule.commutative:
                plans.append(swapped)
            elif st.explain:  # would the other order match?  Then that is the reason
                plans.append([*swapped, (pn, _ORDER, None, "args")])  # type: ignore[list-item]
        return plans

    def _fail_arguments(
        self,
        pn: Node,
        gn: Node,
        pargs: list[Any],
        pkw: dict[str, Any],
        gargs: list[Any],
        gkw: dict[str, Any],
        st: _State,
    ) -> None:
        if not st.explain:
            return
        pn_norm = _normalized(pn, self.pgm, pargs, pkw)
        gn_norm = _normalized(gn, self.gm, gargs, gkw)
        if pn_norm is not None and gn_norm is not None and set(pn_norm) == set(gn_norm):
            moved = sorted(set(pkw) ^ set(gkw)) or ["?"]
            st.fail(
                Why.KEYWORD,
                pn,
                gn,
                moved[0],
                f"{spelled(gn)} passes {', '.join(moved)} "
                f"{'by keyword' if set(gkw) - set(pkw) else 'by position'}, the pattern "
                f"{'by position' if set(gkw) - set(pkw) else 'by keyword'}",
                "treat keyword and positional arguments as one",
            )
            return
        st.fail(
            Why.ARGUMENTS,
            pn,
            gn,
            "",
            f"{spelled(gn)} has {len(gargs)} positional and {len(gkw)} keyword arguments, "
            f"the pattern {len(pargs)} and {len(pkw)}",
        )

    # --- the checks of a whole match -------------------------------------------------------

    def _check(self, st: _State, nodes: list[Node], taken: dict[Node, int]) -> Failure | None:
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

    def _match(self, st: _State, index: int) -> Match:
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


def _names(st: _State) -> dict[str, str]:  # (the pattern's compute nodes, in its order)
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


def _same_literal(a: Any, b: Any) -> bool:
    if isinstance(a, Node) or isinstance(b, Node):
        return a is b
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # tensors, odd objects: equal only when the very same
        return a is b


def _value(gm: Any, target: Any) -> Any:
    obj = gm
    for part in str(target).split("."):
        obj = getattr(obj, part, None)
    return obj


def _pairs(
    owner: Node, pa: list[Any], ga: list[Any], labels: list[str]
) -> list[tuple[Node, Any, Any, str]]:
    return [(owner, a, b, lab) for a, b, lab in zip(pa, ga, labels, strict=True)]


def _schema_call(pn: Node) -> bool:
    return pn.op == "call_function" and isinstance(pn.target, torch._ops.OpOverload)


def _schema_args(target: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    """torch.fx's own filling of an ATen call's arguments from its schema."""
    out = []
    for i, a in enumerate(target._schema.arguments):
        if a.name in kwargs:
            out.append(kwargs[a.name])
        elif not a.kwarg_only and i < len(args):
            out.append(args[i])
        else:
            out.append(a.default_value)
    return out


_SIGNATURES: dict[Any, Any] = {}


def _normalized(
    node: Node, gm: Any, args: list[Any], kwargs: dict[str, Any]
) -> dict[str, Any] | None:
    """Every argument by name, defaults filled in -- ``None`` when no signature is known."""
    import inspect

    fn: Any
    if node.op == "call_function":
        fn = node.target
    elif node.op == "call_method":
        fn = getattr(torch, str(node.target), None)
    elif node.op == "call_module":
        mod = submodule(gm, node.target)
        fn = type(mod).forward if mod is not None else None
        args = [mod, *args]
    else:
        return None
    if fn is None:
        return None
    sig = _SIGNATURES.get(fn)
    if sig is None:
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            override = torch.overrides.get_testing_overrides().get(fn)
            if override is None:
                return None
            sig = inspect.signature(override)
        _SIGNATURES[fn] = sig
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    out = dict(bound.arguments)
    for name, param in sig.parameters.items():  # a default given or left out: the same call
        if name in out and param.default is not inspect.Parameter.empty:
            if _same_literal(out[name], param.default):
                del out[name]
    if node.op == "call_module":
        out.pop(next(iter(sig.parameters)), None)  # self
    for flag in IN_PLACE_FLAGS:
        out.pop(flag, None)
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
