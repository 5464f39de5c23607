"""A document laid out for a picture, as the canvas lays it out: which groups are drawn as
one box (:func:`collapsed_groups`: the canvas's first picture, a session's view, those the
user names), the layout and what to draw of it, the user's moves applied and the frames
around them refitted (:func:`picture`) -- what :mod:`~fxstudio.core.share.svg` writes.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:resnet")
    >>> pic = picture(doc, collapsed_groups(doc, collapse=["layer1"]))
    >>> "layer1" in pic.layout.collapsed, len(pic.layout.nodes) < len(doc)
    (True, True)
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, replace

from fxstudio.core.errors import UserError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import module_path
from fxstudio.core.graph.notation import group_key
from fxstudio.core.layout.boxes import GROUP_PAD, GROUP_TITLE, Box
from fxstudio.core.layout.drawing import Drawing, drawing
from fxstudio.core.layout.groups import COLLAPSE_ABOVE, all_groups, top_level_groups
from fxstudio.core.layout.placing import Layout, LayoutEngine
from fxstudio.core.share.palette import METRICS

__all__ = ["MARGIN", "Picture", "collapsed_groups", "picture"]

MARGIN = 20.0  # around the picture, as the window's picture export


@dataclass
class Picture:
    """A document laid out for drawing: the layout, what to draw of it and where each box
    is (the user's moves applied, frames refitted to them) -- what :func:`drawing_svg`
    writes; the render flow reads its counts."""

    document: GraphDocument
    layout: Layout
    plan: Drawing
    nodes: dict[str, Box]  # node name -> its box as drawn
    groups: dict[str, Box]  # group path -> its frame (or, collapsed, its box) as drawn
    left: float
    top: float
    width: float
    height: float

    def item(self, key: str) -> Box | None:
        """The box of what an edge's end names: a node, else a collapsed group (as the
        canvas looks them up)."""
        return self.nodes.get(key) or self.groups.get(key)


def collapsed_groups(
    doc: GraphDocument,
    *,
    expanded: bool = False,
    collapse: Iterable[str] = (),
    as_shown: bool = False,
) -> set[str]:
    """The groups drawn as one box: those of ``collapse``, and -- unless ``expanded`` -- the
    document's collapsed groups (a session's view), or, where it has none and the graph is
    big (over 300 nodes), the top-level modules (the canvas's first picture); ``as_shown``:
    the document's collapsed groups exactly (what the window's canvas shows now).  A name in
    ``collapse`` that is not a drawn group is a :class:`UserError` saying which are."""
    groups = doc.memo("share.groups", lambda: all_groups(doc))
    if as_shown:
        return {g for g in doc.collapsed if g in groups}
    wanted = list(collapse)
    for path in wanted:
        if path not in groups:
            raise UserError(_not_a_group(doc, path, groups))
    if expanded:
        base: set[str] = set()
    elif doc.collapsed:
        base = {g for g in doc.collapsed if g in groups}
    else:
        base = top_level_groups(doc) if len(doc) > COLLAPSE_ABOVE else set()
    return base | set(wanted)


def _not_a_group(doc: GraphDocument, path: str, groups: set[str]) -> str:
    if any(module_path(n) == path for n in doc.graph.nodes):
        return (
            f"Module '{path}' is one node on the canvas, not a group: there is nothing to "
            "collapse. Name a module that holds several nodes."
        )
    close = difflib.get_close_matches(path, sorted(groups), n=3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    some = ", ".join(sorted(groups, key=lambda p: (p.count("."), p))[:8]) or "none"
    return (
        f"No module '{path}' is drawn as a group in this graph.{hint} Its groups include: {some}."
    )


def picture(
    doc: GraphDocument,
    collapsed: Iterable[str] = (),
    engine: LayoutEngine | None = None,
) -> Picture:
    """Lay ``doc`` out as the canvas does, with the groups in ``collapsed`` as one box."""
    lay = (engine or LayoutEngine(metrics=METRICS)).layout(doc, collapsed)
    plan = drawing(doc, lay)
    nodes, groups = dict(lay.nodes), dict(lay.groups)
    moved = _apply_positions(doc, lay, plan, nodes, groups)
    if moved:  # the plain curve from a moved box, as the canvas draws it
        plan.edges = [
            replace(e, detour=()) if e.source in moved or e.target in moved else e
            for e in plan.edges
        ]
    boxes = [*nodes.values(), *groups.values()]
    left = min([b.x for b in boxes] + [0.0]) - MARGIN
    top = min([b.y for b in boxes] + [0.0]) - MARGIN
    right = max([b.x + b.w for b in boxes] + [lay.width]) + MARGIN
    bottom = max([b.y + b.h for b in boxes] + [lay.height]) + MARGIN
    return Picture(doc, lay, plan, nodes, groups, left, top, right - left, bottom - top)


def _apply_positions(
    doc: GraphDocument, lay: Layout, plan: Drawing, nodes: dict, groups: dict
) -> set[str]:
    """The user's moves (the document's positions) applied to the boxes, and each frame
    around a moved box fitted to what it holds, innermost first (as the canvas does)."""
    moved: set[str] = set()
    dirty: set[str] = set()
    for key, (x, y) in doc.positions.items():
        name = key.removeprefix("group:")
        boxes = groups if key.startswith("group:") else nodes
        if boxes is groups and name not in lay.collapsed:
            continue
        box = boxes.get(name)
        if box is None or (box.x, box.y) == (x, y):
            continue
        boxes[name] = Box(x, y, box.w, box.h)
        moved.add(name)
        if key in plan.parent_of:
            dirty.add(plan.parent_of[key])
    while dirty:
        path = max(dirty, key=lambda p: p.count("."))
        dirty.discard(path)
        group = plan.tree.get(path)
        if group is None or path not in groups or path in lay.collapsed:
            continue
        inside = [nodes[n] for n in group.nodes if n in nodes]
        inside += [groups[c] for c in group.children if c in groups]
        if not inside:
            continue
        x0 = min(b.x for b in inside) - GROUP_PAD
        y0 = min(b.y for b in inside) - GROUP_PAD - GROUP_TITLE
        x1 = max(b.x + b.w for b in inside) + GROUP_PAD
        y1 = max(b.y + b.h for b in inside) + GROUP_PAD
        groups[path] = Box(x0, y0, x1 - x0, y1 - y0)
        parent = plan.parent_of.get(group_key(path))
        if parent:
            dirty.add(parent)
    return moved
