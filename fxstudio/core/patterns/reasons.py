"""Why a graph node is not (part of) a match: typed reasons with the culprit named.

Example:
    >>> f = Failure(Why.TARGET, "relu", "relu_1", "", "F.relu is not torch.relu",
    ...             "turn on 'equivalent spellings'", 1, {"relu": "relu_1"})
    >>> print(f.describe())  # doctest: +NORMALIZE_WHITESPACE
    relu_1 (pattern relu): target differs -- F.relu is not torch.relu.
    Turn on 'equivalent spellings'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from fxstudio.core.results import Json


class Why(str, Enum):
    OP = "op differs"  # call_module vs call_function ...
    TARGET = "target differs"  # torch.relu vs F.relu, or another function
    DIALECT = "dialect mismatch"  # torch-level pattern on an ATen graph, or the other way
    MODULE_NAME = "module name differs"  # same type, another attribute name (match by name)
    MODULE_ATTRS = "module attributes differ"  # e.g. kernel_size
    LITERAL = "literal differs"  # 1.0 vs 2.0, or a literal where a value is computed
    ORDER = "argument order"  # a commutable op with its arguments the other way round
    KEYWORD = "keyword vs positional"
    ARGUMENTS = "arguments differ"  # another number or structure of arguments
    INPUT = "input bound twice"  # one pattern input would be two graph values, or two one
    SHAPE = "shape differs"
    DTYPE = "dtype differs"
    OUTSIDE_USER = "outside user"  # an inner node's value is used outside the match
    CYCLE = "would create a cycle"
    OVERLAP = "overlaps a match"
    REFUSED = "left alone"  # a built-in's candidate it cannot rewrite (a soft-capped attention)


@dataclass(frozen=True)
class Failure:
    """The first failing check of one attempt: the reason, the pattern node and the graph node
    where it failed (``culprit``), the argument, the words, and the option that would make it
    match (``hint``, when there is one)."""

    why: Why
    pattern_node: str
    culprit: str
    argument: str
    text: str
    hint: str = ""
    depth: int = 0  # pattern nodes matched before the failure
    partial: dict[str, str] = field(default_factory=dict)  # pattern node -> graph node so far
    other: str = ""  # the outside user, the overlapped match...
    cause: str = ""  # short words every place refused for one reason shares (a summary counts)
    said: str = ""  # the whole sentence, put from the user's side ("why not here?")

    def describe(self) -> str:
        if self.said:
            return self.said
        where = (
            f"{self.culprit} (pattern {self.pattern_node})" if self.pattern_node else self.culprit
        )
        arg = f", argument {self.argument}" if self.argument else ""
        hint = f" {self.hint[0].upper()}{self.hint[1:]}." if self.hint else ""
        what = self.cause if self.why is Why.REFUSED and self.cause else self.why.value
        return f"{where}{arg}: {what} -- {self.text}.{hint}"

    @property
    def short(self) -> str:
        """What a summary counts it as: its cause, else its kind of failure."""
        return self.cause or self.why.value

    def to_json(self) -> Json:
        return {
            "reason": self.why.name.lower(),
            "why": self.why.value,
            "pattern_node": self.pattern_node,
            "culprit": self.culprit,
            "argument": self.argument,
            "text": self.text,
            "hint": self.hint,
            "matched": self.depth,
            "partial": dict(self.partial),
            "other": self.other,
            "cause": self.short,
            "message": self.describe(),
        }


def refusal(place: str, cause: str, text: str, hint: str = "", nodes: Any = ()) -> Failure:
    """A built-in's candidate left alone: ``place`` (the node it is about: the softmax, the
    BatchNorm), the ``cause`` in a few words, the particulars (``text``), what would do it."""
    partial = {str(n): str(n) for n in nodes}
    return Failure(Why.REFUSED, "", place, "", text, hint, 0, partial, cause=cause)


class Reason(str):
    """A reason in words that knows its cause (the words a summary counts it by): what a
    replacement's :class:`~fxstudio.core.patterns.replacements.Skip` says, still a ``str``
    for everything that shows it.

    >>> r = Reason("tanh_1 caps the scores at 50", "a tanh soft-cap")
    >>> r, r.cause
    ('tanh_1 caps the scores at 50', 'a tanh soft-cap')
    """

    cause: str

    def __new__(cls, text: str, cause: str = "") -> Reason:
        made = super().__new__(cls, text)
        made.cause = cause or text
        return made


def cause_of(reason: str) -> str:
    return reason.cause if isinstance(reason, Reason) else reason


def verdict(candidates: int, causes: list[str], done: str, absent: str = "") -> str:
    """Why a rewrite changed nothing, in one line: how many places it looked at and, counted
    by cause, why it left each alone (``done``: what it does to one, "fused", "folded").

    >>> verdict(2, ["a tanh soft-cap", "a tanh soft-cap"], "fused")
    '2 candidates, none fused: a tanh soft-cap (both)'
    >>> verdict(3, ["a", "b", "a"], "folded")
    '3 candidates, none folded: a (2); b (1)'
    >>> verdict(4, ["a tanh soft-cap"] * 4, "fused")
    '4 candidates, none fused: a tanh soft-cap (all 4)'
    >>> verdict(0, [], "fused", "no softmax over the last dimension")
    'no candidates: no softmax over the last dimension'
    """
    if not candidates:
        return f"no candidates: {absent or 'nothing in the graph it rewrites'}"
    counts: dict[str, int] = {}
    for c in causes:
        counts[c] = counts.get(c, 0) + 1
    head = f"{candidates} candidate{'s' if candidates != 1 else ''}, none {done}"
    if len(counts) == 1:
        ((cause, n),) = counts.items()
        every = "" if n == 1 else " (both)" if n == 2 else f" (all {n})"
        return f"{head}: {cause}{every}"
    return f"{head}: " + "; ".join(f"{c} ({n})" for c, n in counts.items())
