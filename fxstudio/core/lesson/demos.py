"""What the lesson shows, computed live on the learner's model (never canned text).

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:fxdocs")
    >>> sorted(opcode_counts(doc))
    ['call_function', 'call_method', 'call_module', 'get_attr', 'output', 'placeholder']
    >>> [q.answer for q in quiz(doc)]
    ['call_function', 'leaf']
    >>> placeholder_demo().splitlines()[0]
    'def forward(self, x : torch.Tensor, scale = 2.0):'
"""

from __future__ import annotations

import copy
import operator
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

from fxstudio.core.errors import SourceLocation
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import format_target

DEMO_NODES = 1000  # the stale-code demonstration runs on graphs up to this size

OPCODES = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")

OPCODE_MEANING = {
    "placeholder": "an input of forward",
    "get_attr": "a parameter, buffer or constant read from the module",
    "call_function": "a free function: operator.add, torch.relu, F.linear …",
    "call_method": "a method called on a value: x.view(…), x.clamp(…)",
    "call_module": "a call of a submodule the tracer did not enter (a leaf module)",
    "output": "what forward returns",
}


def opcode_counts(doc: GraphDocument) -> Counter[str]:
    return Counter(n.op for n in doc.graph.nodes)


def trace_order(doc: GraphDocument) -> list[tuple[str, str, SourceLocation | None]]:
    """The nodes in graph order -- the order tracing created them, until the graph is edited
    (see :func:`replay_note`) -- each with its opcode and the line of the user's code that
    made it."""
    return [(n.name, n.op, doc.source_location(n.name)) for n in doc.graph.nodes]


def replay_note(doc: GraphDocument) -> str:
    """What the trace replay must say of an edited graph ('' for one as tracing made it):
    it shows the graph as it is now, not the trace.

    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.edits import rename
    >>> doc = open_document("examples:negrelu")
    >>> replay_note(doc)
    ''
    >>> _ = rename(doc, "neg", "negated")
    >>> replay_note(doc).split(":")[0]
    'This graph was edited since it was traced (1 edit)'
    """
    edits = len(doc.history)
    if not edits:
        return ""
    return (
        f"This graph was edited since it was traced ({edits} edit{'s' if edits > 1 else ''}): "
        "the replay shows it as it is now, not as tracing made it. Open the model again "
        "(File ▸ Open model…) to watch the trace itself."
    )


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    choices: tuple[tuple[str, str], ...]  # (value, label)
    answer: str
    why: str


def _line(doc: GraphDocument, name: str) -> str:
    loc = doc.source_location(name)
    if loc and loc.text:
        return loc.text.strip()
    line = doc.code_line_map().get(name)
    return doc.code().splitlines()[line - 1].strip() if line else name


def quiz(doc: GraphDocument) -> list[Question]:
    """Two questions about the learner's own graph: the opcode of a node, and why a
    submodule is one call_module node (or, without one, what a get_attr reads)."""
    nodes = list(doc.graph.nodes)
    questions = []
    fn = next((n for n in nodes if n.op == "call_function"), None) or next(
        (n for n in nodes if n.op not in ("placeholder", "output")), nodes[0]
    )
    questions.append(
        Question(
            "opcode",
            f"Which opcode is node {fn.name!r} ({format_target(fn)}), "
            f"made by `{_line(doc, fn.name)}`?",
            tuple((op, op) for op in OPCODES),
            fn.op,
            f"{fn.name} is {fn.op}: {OPCODE_MEANING[fn.op]}.",
        )
    )
    mod = next((n for n in nodes if n.op == "call_module"), None)
    if mod is not None:
        questions.append(
            Question(
                "leaf",
                f"Why is self.{mod.target} one call_module node, not the operations inside it?",
                (
                    ("leaf", "The tracer does not enter torch.nn's own modules: they are leaves"),
                    ("params", "Modules with parameters are always kept whole"),
                    ("first", "Only the first call of a module is traced into"),
                ),
                "leaf",
                "Tracer.is_leaf_module() is true for torch.nn's modules (and any you choose): "
                "the tracer records one call_module node instead of tracing into its forward.",
            )
        )
    else:
        questions.append(
            Question(
                "leaf",
                "What does a get_attr node read?",
                (
                    ("leaf", "A parameter, buffer or constant of the module"),
                    ("params", "An attribute of an input tensor"),
                    ("first", "A Python global"),
                ),
                "leaf",
                "get_attr fetches a parameter, buffer or constant tensor by its qualified name.",
            )
        )
    return questions


def placeholder_demo() -> str:
    """The code a graph with a typed and a defaulted input generates: the real API,
    ``Graph.placeholder(name, type_expr, default_value)``."""
    g = fx.Graph()
    x = g.placeholder("x", type_expr=torch.Tensor)
    scale = g.placeholder("scale", default_value=2.0)
    g.output(g.call_function(operator.mul, (x, scale)))
    return fx.GraphModule(torch.nn.Module(), g).code.strip()


@dataclass(frozen=True)
class StaleCode:
    node: str
    old: str  # the target before
    new: str  # after
    stale_same: bool  # without recompile() the module still returns the old result
    recompiled_differs: float  # after recompile() the output differs by this much
    stale_code_line: str  # what gm.code still says


def stale_code_demo(doc: GraphDocument) -> StaleCode | None:
    """The classic bug, run on a copy of the learner's graph: change a node's target without
    ``recompile()`` and the module keeps running the old code; recompile and it changes."""
    swaps = {operator.add: operator.mul, operator.mul: operator.add, torch.relu: torch.sigmoid}
    if len(doc) > DEMO_NODES:  # three forward calls: kept for models a lesson runs quickly
        return None
    gm = fx.GraphModule(doc.graph_module, copy.deepcopy(doc.graph))  # weights shared
    node = next((n for n in gm.graph.nodes if n.op == "call_function" and n.target in swaps), None)
    if node is None or not doc.example_inputs:
        return None
    inputs = doc.example_inputs
    with torch.no_grad():
        before = gm(*inputs)
        old = format_target(node)
        node.target = swaps[node.target]
        stale = gm(*inputs)
        stale_line = next((ln.strip() for ln in gm.code.splitlines() if f"{node.name} =" in ln), "")
        gm.recompile()
        after = gm(*inputs)
    same = torch.equal(_first(stale), _first(before))
    differs = float((_first(after) - _first(before)).abs().max())
    return StaleCode(node.name, old, format_target(node), same, differs, stale_line)


def _first(value: Any) -> torch.Tensor:
    from fxstudio.core.fxcompat import tree_leaves

    return next(t for t in tree_leaves(value) if isinstance(t, torch.Tensor))


@dataclass(frozen=True)
class PatternExercise:
    node: str  # the node the patterns are about
    miss: str  # a pattern that does not match (a literal changed)
    fix: str  # the pattern that matches
    replacement: str  # an equivalent replacement


def pattern_exercise(doc: GraphDocument) -> PatternExercise | None:
    """A deliberate miss on the learner's graph: the pattern of one node with a numeric
    literal, the literal changed (the why-no-match report names it), and the true pattern."""
    from fxstudio.core.patterns.making import compile_function, from_function, from_nodes
    from fxstudio.core.patterns.matcher import Matcher
    from fxstudio.core.patterns.pattern import DEFAULT_RULES

    def matches(code: str) -> int:
        fn, source = compile_function(code)
        dialect = "export" if doc.request.frontend == "export" else "fx"
        p = from_function(fn, dialect=dialect, rules=DEFAULT_RULES, source=source)
        return len(Matcher(p).find(doc.graph_module).matches)

    for n in doc.graph.nodes:
        if n.op not in ("call_function", "call_method"):
            continue
        literals = [v for v in (*n.args, *n.kwargs.values()) if type(v) in (int, float)]
        if not literals:
            continue
        fix = from_nodes(doc, [n.name], "pattern", DEFAULT_RULES).code()
        value = literals[-1]
        wrong = value + 5 if isinstance(value, int) else value + 5.0
        at = fix.rfind(repr(value))
        if at < 0:
            continue
        miss = fix[:at] + repr(wrong) + fix[at + len(repr(value)) :]
        try:
            if matches(miss) or not matches(fix):
                continue
        except Exception:  # noqa: BLE001 - a pattern the engine refuses: try another node
            continue
        replacement = re.sub(r"^def pattern", "def replacement", fix)
        if n.op == "call_method" and n.target == "clamp" and set(n.kwargs) == {"min", "max"}:
            arg = fix.split("(")[1].split(")")[0]
            replacement = (
                f"def replacement({arg}):\n    return torch.nn.functional.hardtanh("
                f"{arg}, {n.kwargs['min']!r}, {n.kwargs['max']!r})"
            )
        return PatternExercise(n.name, miss, fix, replacement)
    return None
