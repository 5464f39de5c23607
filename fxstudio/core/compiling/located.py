"""The document's nodes at a place in the user's code: where a graph break falls, what one
of Dynamo's graphs computes, where a kernel of a compiled eager model came from.

Dynamo's graphs are made from the model's own code, not from the document's graph; what ties
the two together is the user's file and line that made each node (``stack_trace``).  A
module the document keeps as one node (a leaf module: the model opened in part) holds the
lines of its ``forward``.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:simple")
    >>> loc = doc.source_location("fc1")
    >>> made_at(doc, (Frame(loc.filename, loc.lineno, "forward", ""),))  # one line, three calls
    ['fc1', 'act', 'fc2']
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from fxstudio.core.compiling.breaks import Explained, Frame, GraphBreak
from fxstudio.core.graph.document import GraphDocument


@dataclass(frozen=True)
class BreakPlace:
    """Where a break falls among the document's nodes: ``nodes`` made at its line (or the
    module kept as one node holding it); when its line made none (a ``print`` of text
    only), ``before``: the nodes of the latest earlier line of its file that made some --
    the break falls right after them."""

    nodes: list[str]
    before: list[str]
    line: int | None  # the break's line of the user's file

    def describe(self) -> str:
        """What the place is, in words, for the dock (empty when nodes were made there)."""
        if self.nodes or self.line is None:
            return ""
        if not self.before:
            return f"Line {self.line} makes no node of the graph; no node comes before it."
        return (
            f"Line {self.line} makes no node of the graph: the break falls right after "
            f"{', '.join(self.before[:3])}{' …' if len(self.before) > 3 else ''} (marked ✂ "
            "below them); nothing is selected."
        )


def break_place(doc: GraphDocument, brk: GraphBreak) -> BreakPlace:
    """Where ``brk`` falls: :func:`nodes_at`, or the nodes right before its line."""
    found = nodes_at(doc, brk)
    where = brk.where
    if found or where is None:
        return BreakPlace(found, [], where.line if where else None)
    lines = _lines(doc)
    earlier = sorted(k for k in lines if k[0] == where.file and k[1] < where.line)
    return BreakPlace([], lines[earlier[-1]] if earlier else [], where.line)


def nodes_at(doc: GraphDocument, brk: GraphBreak) -> list[str]:
    """The nodes a break falls at: those made at its line of the user's file -- or at the
    line of an outer frame of the user's code (a module kept as one node, whose forward
    holds the break); none when its line made no node (a ``print`` of text only:
    :func:`break_place` says which nodes come right before it)."""
    return made_at(doc, brk.stack)


def graph_nodes(doc: GraphDocument, explained: Explained, index: int) -> list[str]:
    """The document's nodes that Dynamo's graph ``index`` computes: those made where its ops
    were (in graph order)."""
    return made_at_any(doc, explained.graph_stacks[index])


def made_at_any(doc: GraphDocument, stacks: Iterable[tuple[Frame, ...]]) -> list[str]:
    """The document's nodes made at any of ``stacks`` (:func:`made_at`), in graph order."""
    names = {name for stack in stacks for name in made_at(doc, stack)}
    return [n.name for n in doc.graph.nodes if n.name in names]


def made_at(doc: GraphDocument, stack: tuple[Frame, ...]) -> list[str]:
    """The nodes made at the innermost frame of ``stack`` that made any, or the modules
    kept as one node whose forward holds its innermost line."""
    lines = _lines(doc)
    for frame in reversed(stack):
        if (frame.file, frame.line) in lines:
            return lines[(frame.file, frame.line)]
    if not stack:
        return []
    return [  # a module kept as one node whose forward holds the line
        node.name
        for node in doc.graph.nodes
        if node.op == "call_module" and _holds(doc.graph_module, str(node.target), stack[-1])
    ]


def _lines(doc: GraphDocument) -> dict[tuple[str, int], list[str]]:
    return doc.memo("compile.lines", lambda: _nodes_by_line(doc))


def _nodes_by_line(doc: GraphDocument) -> dict[tuple[str, int], list[str]]:
    """(file, line) of the user's code -> the nodes made there (once per graph version)."""
    lines: dict[tuple[str, int], list[str]] = {}
    for node in doc.graph.nodes:
        loc = doc.source_location(node.name)
        if loc is not None:
            lines.setdefault((loc.filename, loc.lineno), []).append(node.name)
    return lines


def node_lines(doc: GraphDocument, names: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """The user's lines (file, line) that made the document's nodes ``names``, sorted."""
    found = set()
    for name in names:
        loc = doc.source_location(name) if name in doc else None
        if loc is not None:
            found.add((loc.filename, loc.lineno))
    return tuple(sorted(found))


def _holds(root: Any, path: str, where: Frame) -> bool:
    """Whether the forward of the submodule at ``path`` is where ``where`` is."""
    try:
        code = type(root.get_submodule(path)).forward.__code__
    except (AttributeError, TypeError):
        return False
    lines = [line for _, _, line in code.co_lines() if line is not None]
    return code.co_filename == where.file and bool(lines) and min(lines) <= where.line <= max(lines)
