"""The layout flow: a document laid out as the canvas lays it out (graphviz dot, module by
module), with the counts ``fxstudio layout`` prints (:func:`layout_flow`), and the canvas's
own picture: the layout and what to draw of it, edges routed (:func:`canvas_layout`).

Called by ``fxstudio layout`` and the canvas (``fxstudio.qt.canvas``: its controller, scene
and items; the Step dock reads the tree as drawn).

Exposes, besides the flow: :func:`canvas_layout` and :func:`group_title` (a group box's
title: a fold's span or the module's path and type); and, re-exported, what the canvas draws
with: the engine (:class:`LayoutEngine`, :class:`Layout`, :class:`Box`,
:class:`LayoutCancelled`, :func:`node_size`, :data:`GROUP_PAD`, :data:`GROUP_TITLE`), the
drawing (:class:`Drawing`, :func:`drawing`), the groups (:func:`top_level_groups`,
:func:`drawn_tree`, :func:`group_label`, :func:`node_label`), a fold's label
(:func:`fold_label`), an edge's curve (:func:`edge_path`) and the text's measure
(:class:`TextMetrics`, :data:`TEXT_MARGIN`).

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> result = layout_flow(LayoutRequest(open_document("examples:resnet")))
    >>> result.summary()["nodes"] > result.summary()["visible_nodes"]  # modules collapsed
    True
    >>> doc = open_document("examples:negrelu")
    >>> layout, plan = canvas_layout(LayoutEngine(), doc)
    >>> sorted(layout.nodes) == sorted(n.name for n in doc.graph.nodes)
    True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import ModuleGroup
from fxstudio.core.layout.boxes import GROUP_PAD, GROUP_TITLE, Box
from fxstudio.core.layout.drawing import Drawing, drawing
from fxstudio.core.layout.groups import drawn_tree, group_label, node_label, top_level_groups
from fxstudio.core.layout.labels import TEXT_MARGIN, TextMetrics
from fxstudio.core.layout.placing import (
    Layout,
    LayoutCancelled,
    LayoutEngine,
    node_size,
)
from fxstudio.core.layout.repeats import fold_label
from fxstudio.core.layout.routes import edge_path
from fxstudio.core.process.files import write_json
from fxstudio.core.results import Json

__all__ = [
    "GROUP_PAD",
    "GROUP_TITLE",
    "TEXT_MARGIN",
    "Box",
    "Drawing",
    "Layout",
    "LayoutCancelled",
    "LayoutEngine",
    "LayoutRequest",
    "LayoutResult",
    "TextMetrics",
    "canvas_layout",
    "drawing",
    "drawn_tree",
    "edge_path",
    "fold_label",
    "group_label",
    "group_title",
    "layout_flow",
    "node_label",
    "node_size",
    "top_level_groups",
]


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

    def to_json(self) -> Json:
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


def canvas_layout(
    engine: LayoutEngine,
    doc: GraphDocument,
    collapsed: Iterable[str] = (),
    *,
    cancelled: Callable[[], bool] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Layout, Drawing]:
    """The canvas's picture of ``doc``: laid out by ``engine`` (its cache kept between
    layouts) with the groups in ``collapsed`` as single boxes, and what to draw of it
    (:func:`drawing`: edges, detours, frames).  ``cancelled`` stops it
    (:class:`LayoutCancelled`); ``progress`` hears of each dot run done."""
    options: dict[str, Any] = {}
    if cancelled is not None:
        options["cancelled"] = cancelled
    if progress is not None:
        options["progress"] = progress
    lay = engine.layout(doc, collapsed, **options)
    return lay, drawing(doc, lay)


def group_title(layout: Layout, group: ModuleGroup | None, path: str) -> str:
    """The title of ``layout``'s group box at ``path`` (``group``: its module, None where the
    tree has none): the path and the module's type (:func:`group_label`), or -- a fold of
    identical siblings -- their span (:func:`fold_label`)."""
    if path in layout.folds:
        return fold_label(layout.folds[path], group.type_name if group else "")
    return group_label(group) if group else path
