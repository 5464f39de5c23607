"""What a match becomes: the replacement graph of one match, and the ways to make one -- a
function or a module traced once (:func:`function_replacement`), nodes boxed on the canvas
(:func:`graph_replacement`), or a per-match callback (the folds, ``fuse-attention``).

A replacement module's own submodules, parameters and buffers go into the model under free
names as the rewrite places it (:mod:`~fxstudio.core.patterns.replace`), one step each, so
undo takes them out again.  One that the pattern names too (``self.weight`` in both) stands
for what that pattern attribute matched: the model's own tensor or submodule.

Example (a module class is built as a pattern class is, its weights seeded, so the session
that records its code makes the same weights again):
    >>> import torch
    >>> class Scaled(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = torch.nn.Parameter(torch.rand(3))
    ...     def forward(self, x):
    ...         return torch.relu(x) * self.scale
    >>> a, b = replacement_module(Scaled), replacement_module(Scaled)
    >>> bool((a.scale == b.scale).all())
    True
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch import nn
from torch.fx.node import Node

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.patterns.found import Found, Match
from fxstudio.core.patterns.pattern import Pattern, PatternError
from fxstudio.core.patterns.reasons import Reason
from fxstudio.core.process import modelcode

#: the seed a replacement module class is built with (its weights, made again on replay)
SEED = 0


def replacement_module(fn: Any) -> Any:
    """``fn`` itself, or -- a module class -- an instance built without arguments, its
    weights drawn from :data:`SEED` (the rest of the program's random numbers untouched)."""
    if not (inspect.isclass(fn) and issubclass(fn, nn.Module)):
        return fn
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(SEED)
            return fn()
    except TypeError as exc:
        raise PatternError(
            f"The replacement class {fn.__name__} must be built without arguments ({exc}); "
            "or give an instance of it."
        ) from exc


@dataclass
class ReplacementGraph:
    """What one match becomes: placeholders = the pattern's inputs (then bound literals),
    output = the values for the pattern's outputs; ``modules`` are set on the model at the
    paths the graph's ``call_module`` nodes name (new, or replacing the module there)."""

    graph: fx.Graph
    modules: dict[str, nn.Module] = field(default_factory=dict)
    root: Any = None  # where the graph's call_module / get_attr targets live, if not the model


@dataclass
class MatchContext:
    """What a per-match callback may read: the document, the pattern and the match."""

    doc: GraphDocument
    pattern: Pattern
    match: Match

    def node(self, pattern_node: str) -> fx.Node:
        return self.doc.node(self.match.nodes[pattern_node])

    def module(self, pattern_node: str) -> nn.Module:
        return self.doc.graph_module.get_submodule(str(self.node(pattern_node).target))


class Skip(Exception):
    """Raised by a callback: this match is left as it is, for ``reason`` (``cause``: the few
    words a summary counts it by, when the reason names this match's nodes)."""

    def __init__(self, reason: str, cause: str = "") -> None:
        super().__init__(reason)
        self.reason: str = Reason(reason, cause) if cause else reason


@dataclass
class Replacement:
    name: str
    build: Callable[[MatchContext], ReplacementGraph]
    exact: bool = True  # the rewrite computes the same values (else: a fold, rounding differs)
    spec: dict[str, Any] = field(default_factory=dict)  # how to make it again (sessions)


@dataclass
class Job:
    """One pattern, its replacement and the matches to replace (``accepted``: by index)."""

    pattern: Pattern
    replacement: Replacement
    found: Found | None = None
    accepted: set[int] | None = None


def function_replacement(
    fn: Callable[..., Any] | nn.Module, name: str | None = None, source: str = ""
) -> Replacement:
    """A replacement written as a function of the pattern's inputs, traced once."""
    label = str(name or getattr(fn, "__name__", type(fn).__name__))
    try:
        with modelcode.one_turn():  # the tracer patches nn.Module.__call__ (core.process.modelcode)
            gm = fx.symbolic_trace(replacement_module(fn))
    except Exception as exc:
        raise PatternError(
            f"The replacement {label} cannot be traced ({type(exc).__name__}: {exc})."
        ) from exc
    params = [n for n in gm.graph.nodes if n.op == "placeholder"]
    returned = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    if returned is None or (
        isinstance(returned, (tuple, list)) and any(v is None for v in returned)
    ):
        raise PatternError(
            f"The replacement {label} returns None: it must return what the pattern returns "
            "(a value computed from its inputs, or a tuple of them for a pattern with several "
            "outputs)."
        )

    def build(ctx: MatchContext) -> ReplacementGraph:
        outputs = len(ctx.pattern.outputs)
        count = len(returned) if isinstance(returned, (tuple, list)) else 1
        if count != outputs:
            raise PatternError(
                f"The replacement {label} returns {count} value{'s' if count != 1 else ''}, "
                f"the pattern {outputs}: return one value for each of the pattern's outputs, "
                "in order."
            )
        expected = len(ctx.pattern.inputs) + len(ctx.match.bound)
        if len(params) != expected:
            bound = f" and {len(ctx.match.bound)} bound literals" if ctx.match.bound else ""
            raise PatternError(
                f"The replacement {label} takes {len(params)} argument"
                f"{'s' if len(params) != 1 else ''} ({', '.join(p.name for p in params)}), "
                f"the pattern has {len(ctx.pattern.inputs)} inputs"
                f" ({', '.join(ctx.pattern.input_names)}){bound}: give it the same, in order."
            )
        return ReplacementGraph(gm.graph, root=gm)

    return Replacement(label, build, spec={"code": source, "name": label} if source else {})


def signature_problem(fn: Any, pattern: Pattern) -> str | None:
    """Before tracing: a replacement must take as many arguments as the pattern has inputs."""
    if inspect.isclass(fn) and issubclass(fn, nn.Module):
        fn = fn.forward  # (self, inputs...): self is not an input
        skip = 1
    else:
        fn, skip = (fn.forward if isinstance(fn, nn.Module) else fn), 0
    try:
        n = len(inspect.signature(fn).parameters) - skip
    except (TypeError, ValueError):
        return None
    if n != len(pattern.inputs):
        return (
            f"The replacement takes {n} arguments, the pattern has {len(pattern.inputs)} inputs "
            f"({', '.join(pattern.input_names)}): give it the same, in order."
        )
    return None


def _reordered(graph: fx.Graph, names: list[str]) -> fx.Graph:
    """``graph`` with its placeholders in the order ``names`` gives."""
    out = fx.Graph()
    inputs = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    env: dict[Node, Node] = {inputs[name]: out.placeholder(name) for name in names}
    result = out.graph_copy(graph, env)
    out.output(result)
    return out


def graph_replacement(replacement: Pattern) -> Replacement:
    """A replacement built with the editing tools: the boxed nodes (made a pattern with
    :func:`~fxstudio.core.patterns.making.from_nodes`), their inputs taken in order of first
    use as the pattern's inputs, their outputs as its outputs."""
    gm = replacement.graph_module
    n_inputs = len(replacement.inputs)

    def build(ctx: MatchContext) -> ReplacementGraph:
        wanted = ctx.pattern.input_names
        if sorted(wanted) == sorted(replacement.input_names) and wanted != replacement.input_names:
            # the box uses the very values the pattern takes: pair them by name
            return ReplacementGraph(_reordered(gm.graph, wanted), root=gm)
        expected = len(ctx.pattern.inputs) + len(ctx.match.bound)
        if n_inputs != expected:
            raise PatternError(
                f"The replacement box takes {n_inputs} values from outside "
                f"({', '.join(replacement.input_names)}), the pattern has {expected} inputs: "
                "box nodes that use as many values as the pattern has inputs."
            )
        return ReplacementGraph(gm.graph, root=gm)

    return Replacement(
        f"box {replacement.name}",
        build,
        spec={"code": replacement.code(), "name": replacement.name},
    )
