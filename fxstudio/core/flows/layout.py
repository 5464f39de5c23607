"""The layout flow: a document laid out as the canvas lays it out (graphviz dot, module by
module), with the counts ``fxstudio layout`` prints.

Example:
    >>> from fxstudio.core.saving.sessions import open_document
    >>> result = layout_flow(LayoutRequest(open_document("examples:resnet")))
    >>> result.summary()["nodes"] > result.summary()["visible_nodes"]  # modules collapsed
    True
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.layout.engine import Layout, LayoutEngine
from fxstudio.core.layout.groups import top_level_groups
from fxstudio.core.saving.files import write_json


@dataclass(frozen=True)
class LayoutRequest:
    """What to lay out: the document, every module expanded or the top-level ones collapsed
    (the first picture of a big graph), or the groups in ``collapsed`` when given."""

    document: GraphDocument
    expanded: bool = False
    collapsed: frozenset[str] | None = None
    engine: LayoutEngine | None = None  # one kept between layouts (its cache); else a new one


@dataclass
class LayoutResult:
    """The layout of one document: where everything goes (:attr:`layout`) and its counts."""

    document: GraphDocument
    layout: Layout

    @property
    def notes(self) -> list[str]:
        return self.layout.notes

    def summary(self) -> dict[str, Any]:
        """Nodes and groups in the graph and on the canvas, the engine and its time."""
        doc, lay = self.document, self.layout
        return {
            "nodes": len(doc),
            "groups": sum(1 for g in doc.module_tree().walk() if g.path),
            "visible_nodes": len(lay.nodes),
            "visible_groups": len(lay.groups),
            "collapsed": len(lay.collapsed),
            "engine": lay.engine,
            "dot_runs": lay.dot_runs,
            "seconds": round(lay.seconds, 3),
        }

    def to_json(self) -> dict[str, Any]:
        """Node positions and group boxes (what ``fxstudio layout --json`` writes)."""
        return self.layout.to_json()

    def describe(self) -> str:
        s = self.summary()
        return (
            f"{s['nodes']} nodes, {s['groups']} groups "
            f"({s['collapsed']} collapsed, {s['visible_nodes']} nodes shown), "
            f"{s['seconds']:.3f} s with {s['engine']} ({s['dot_runs']} dot runs)"
        )

    def write(self, path: str | os.PathLike[str]) -> None:
        """:meth:`to_json`, written atomically."""
        write_json(path, self.to_json(), indent=1)


def layout_flow(request: LayoutRequest) -> LayoutResult:
    """Lay the request's document out (see :class:`LayoutRequest`)."""
    doc = request.document
    if request.collapsed is not None:
        collapsed = set(request.collapsed)
    else:
        collapsed = set() if request.expanded else top_level_groups(doc)
    engine = request.engine if request.engine is not None else LayoutEngine()
    return LayoutResult(doc, engine.layout(doc, collapsed))
