"""The state of one attempt to match a pattern at an anchor, and the small vocabulary the
comparison (:mod:`~fxstudio.core.patterns.nodematch`), the walk
(:mod:`~fxstudio.core.patterns.walk`) and the matcher share.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from torch.fx.node import Node

from fxstudio.core.patterns.reasons import Failure, Why

#: How positional arguments are labelled in explanations ("args[0]", ...).
ARG_LABELS = tuple(f"args[{i}]" for i in range(64))
#: Marks an argument order tried only to explain a miss (a commuted call).
ORDER = object()


def same_literal(a: Any, b: Any) -> bool:
    if isinstance(a, Node) or isinstance(b, Node):
        return a is b
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # tensors, odd objects: equal only when the very same
        return a is b


class MatchState:
    """Where one attempt to match stands: pattern node -> graph node, what is taken, the
    bindings made (in order, to undo), and -- explaining -- the best failure so far."""

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
