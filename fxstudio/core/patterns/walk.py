"""Walking a pattern and a graph together, backwards along arguments from an anchor: the
fast walk (one way through, no reasons kept -- what finding uses) and the full walk (every
alternative, a commuted order too, each failure kept with its reason -- what explaining
uses, and finding when the fast walk passed over an alternative).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from torch.fx.node import Node

from fxstudio.core.patterns.attempt import ARG_LABELS, ORDER, MatchState, same_literal
from fxstudio.core.patterns.nodematch import NodeComparison
from fxstudio.core.patterns.ops import COMMUTATIVE
from fxstudio.core.patterns.reasons import Failure, Why


class Walk(NodeComparison):
    """The two walks; the matcher sets up the rules and the graph."""

    def _fast(self, pn: Node, gn: Any, st: MatchState) -> bool:
        m = st.map
        if pn in m:
            got = m[pn]
            return got is gn or (not isinstance(gn, Node) and same_literal(got, gn))
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
        if not pn.kwargs and not gn.kwargs and len(pargs) == len(gargs) and not self.by_schema(pn):
            ok = True
            for i, pa in enumerate(pargs):
                if not self._fast_arg(pn, pa, gargs[i], ARG_LABELS[i], st):
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

    def _fast_arg(self, owner: Node, pa: Any, ga: Any, label: str, st: MatchState) -> bool:
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
        return not isinstance(ga, Node) and same_literal(pa, ga)

    # --- search ----------------------------------------------------------------------------

    def _node(self, pn: Node, gn: Any, st: MatchState, label: str) -> Iterator[None]:
        if pn in st.map:
            if st.map[pn] is gn or (not isinstance(gn, Node) and same_literal(st.map[pn], gn)):
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

    def _all(
        self, plan: list[tuple[Node, Any, Any, str]], i: int, st: MatchState
    ) -> Iterator[None]:
        if i == len(plan):
            yield
            return
        owner, pa, ga, label = plan[i]
        for _ in self._arg(owner, pa, ga, label, st):
            yield from self._all(plan, i + 1, st)

    def _arg(self, owner: Node, pa: Any, ga: Any, label: str, st: MatchState) -> Iterator[None]:
        if pa is ORDER:
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
        if same_literal(pa, ga):
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
