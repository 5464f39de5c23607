"""What a search for a pattern found: each match by names (pattern node -> graph node), the
places a check refused and why, warnings -- what the matcher
(:mod:`fxstudio.core.patterns.matcher`) returns and the rewrites read.

Example:
    >>> m = Match(0, {"add": "add_3", "relu": "relu_2"}, ("x", 2.0), (True, False), ("relu_2",))
    >>> m.anchor, m.graph_nodes, Found([m]).matches == [m]
    ('relu_2', ['add_3', 'relu_2'], True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fxstudio.core.patterns.reasons import Failure
from fxstudio.core.results import Json


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

    def to_json(self) -> Json:
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

    def to_json(self) -> Json:
        return {"nodes": dict(self.nodes), **self.failure.to_json()}


@dataclass
class Found:
    """The matches; the places refused, each with its reason (a structural match a check
    refused, or a built-in's candidate it cannot rewrite); warnings; and -- a built-in that
    found no candidate at all -- what it looked for (``absent``)."""

    matches: list[Match]
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    absent: str = ""
