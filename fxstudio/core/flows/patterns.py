"""Patterns, as the Patterns dock and ``fxstudio rewrite`` use them: a pattern made from the
nodes a user boxed (:func:`pattern_from_nodes`) or from a function typed or read from a
pattern file (:func:`pattern_from_code`, :func:`read_pattern_file`), its matches found
(:func:`find_matches`) and shown side by side with the graph (:func:`side_by_side`), the
nodes that did not match explained (:func:`explain`), and a replacement -- a function, the
nodes built for it with the editing tools (:func:`graph_replacement`) or one of the
built-ins (:data:`BUILTINS`) -- made one edit by :func:`~fxstudio.core.flows.rewrite_flow`.

The matching rules (:class:`Rules`; :data:`DEFAULT_RULES`, or :data:`FX_RULES` as
``torch.fx.replace_pattern`` matches) are the pattern's, for every node or node by node.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:negrelu")
    >>> pattern = pattern_from_code("def pattern(x):\\n    return torch.relu(x)\\n")
    >>> [m.graph_nodes for m in find_matches(doc.graph_module, pattern).matches]
    [['relu']]
    >>> pattern_from_nodes(doc, ["relu"], "mine").code().splitlines()[0]
    'def mine(y):'
"""

from __future__ import annotations

from fxstudio.core.patterns.builtins import BUILTINS, Builtin
from fxstudio.core.patterns.explain import Explanation, explain, side_by_side
from fxstudio.core.patterns.found import Found, Match
from fxstudio.core.patterns.making import compile_function, from_function
from fxstudio.core.patterns.making import from_nodes as pattern_from_nodes
from fxstudio.core.patterns.matcher import find as find_matches
from fxstudio.core.patterns.pattern import DEFAULT_RULES, FX_RULES, Pattern, Rules
from fxstudio.core.patterns.patternfiles import read_pattern_file, write_pattern_file
from fxstudio.core.patterns.reasons import Failure
from fxstudio.core.patterns.replacements import Replacement, graph_replacement

__all__ = [
    "BUILTINS",
    "DEFAULT_RULES",
    "FX_RULES",
    "Builtin",
    "Explanation",
    "Failure",
    "Found",
    "Match",
    "Pattern",
    "Replacement",
    "Rules",
    "explain",
    "find_matches",
    "graph_replacement",
    "pattern_from_code",
    "pattern_from_nodes",
    "read_pattern_file",
    "side_by_side",
    "write_pattern_file",
]


def pattern_from_code(code: str, dialect: str = "fx", rules: Rules = DEFAULT_RULES) -> Pattern:
    """The pattern of a function typed as text (the last one the text defines), traced as a
    graph of ``dialect`` (``"fx"`` or ``"export"``) is captured; its source kept."""
    fn, source = compile_function(code)
    return from_function(fn, dialect=dialect, rules=rules, source=source)
