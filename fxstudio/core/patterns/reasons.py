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

    def describe(self) -> str:
        where = (
            f"{self.culprit} (pattern {self.pattern_node})" if self.pattern_node else self.culprit
        )
        arg = f", argument {self.argument}" if self.argument else ""
        hint = f" {self.hint[0].upper()}{self.hint[1:]}." if self.hint else ""
        return f"{where}{arg}: {self.why.value} -- {self.text}.{hint}"

    def to_json(self) -> dict[str, Any]:
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
            "message": self.describe(),
        }
