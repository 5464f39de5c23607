"""The document's drawing as SVG: the picture the canvas draws -- the same layout (graphviz,
module by module, ``×N`` folds), node boxes with their name, target and shape, module frames
and collapsed boxes, edges along their routes, stubs for shared values, the canvas's light
colours -- written as plain SVG with text as ``<text>`` (searchable, sharp at any zoom).

Its structure is for scripts and the report to read (stable):

- each drawn node: ``<g class="node" id="node-NAME" data-name data-op data-target
  data-shape data-dtype data-module data-source data-parent>`` (``data-parent``: the drawn
  frame around it, ``""`` at the top);
- each module group: ``<g class="group" data-module="PATH" data-type data-nodes
  data-parent>`` holding its frame, its title and its members (nodes and groups); a
  collapsed one is ``class="group collapsed"`` and holds its box only (``data-fold="N"``
  and ``data-members``, their paths joined by commas, where it stands for ``N`` identical
  modules); an expanded one's ``data-box``: the width and height of its box were it
  collapsed (``▸ PATH : TYPE``, as the canvas sizes it); the ``<svg>`` element's
  ``data-collapsed``: the collapsed boxes' paths, joined by commas (a path may hold a
  space: ``(off the main path)``);
- each edge: ``<g class="edge" data-from="ITEM" data-to="ITEM" data-args>`` (items: node
  names, or collapsed groups' paths; ``data-stub`` for a shared value drawn as a stub),
  drawn above the groups, in runs (``<g class="edge-run">``) of :data:`EDGE_RUN` in the
  order of their targets' height;
- a heat overlay: ``<rect class="heat" data-value>`` in the node or collapsed box, and its
  tag ``<g class="heat-tag" data-name>`` in the top layer (``data-name``: the node's name,
  or ``group:PATH`` for a collapsed box).

Example:
    >>> from xml.etree import ElementTree
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:negrelu")
    >>> root = ElementTree.fromstring(drawing_svg(doc))
    >>> ns = {"s": "http://www.w3.org/2000/svg"}
    >>> sorted(g.get("data-name") for g in root.iterfind(".//s:g[@class='node']", ns))[:3]
    ['add', 'mul', 'neg']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import ModuleGroup, module_path
from fxstudio.core.graph.notation import group_key
from fxstudio.core.graph.shapes import node_dtype
from fxstudio.core.layout.boxes import Box
from fxstudio.core.layout.drawing import Edge
from fxstudio.core.layout.groups import drawn_tree, group_label
from fxstudio.core.layout.labels import TEXT_MARGIN
from fxstudio.core.layout.placing import collapsed_size
from fxstudio.core.layout.repeats import fold_label
from fxstudio.core.layout.routes import edge_path
from fxstudio.core.share.palette import (
    DETAIL_PX,
    FONT_FAMILY,
    LIGHT,
    METRICS,
    NAME_PX,
    STUB_PX,
    darker,
    elide,
    heat_colour,
    hex_rgb,
    ink_on,
)
from fxstudio.core.share.picturelayout import MARGIN, Picture, collapsed_groups, picture

__all__ = ["Heat", "drawing_svg", "esc", "picture_svg"]

#: A heat overlay: node name (or ``group:PATH``, a module) -> (its fraction, 0..1, and the
#: text of its tag).
Heat = Mapping[str, tuple[float, str]]

STUB_LENGTH = 20.0
CELL = 64.0  # the grid the heat's tags are kept in, to find one in the way
#: Edges per ``<g class="edge-run">``: the report's script moves a run whose edges all move
#: alike as one (closing a 10,000-node drawing up under a collapsed module writes a few
#: hundred transforms, not ten thousand).
EDGE_RUN = 64
_ASCENT = 0.346  # DejaVu Sans: the baseline below a line's middle, in ems (Qt's AlignVCenter)


def drawing_svg(
    document: GraphDocument,
    *,
    expanded: bool = False,
    collapse: Iterable[str] = (),
    heat: Heat | None = None,
) -> str:
    """The drawing of ``document`` as an SVG document (a string): every module expanded
    (``expanded``) or as the canvas opens it (see :func:`collapsed_groups`), the groups in
    ``collapse`` as one box; ``heat`` (node name -> its fraction, 0..1, and the text of its
    tag; ``group:PATH`` -> a module's, for its box when collapsed -- else the sum of its
    nodes') tints the boxes from pale yellow to red, relative to the hottest, as the canvas."""
    shown = collapsed_groups(document, expanded=expanded, collapse=collapse)
    return picture_svg(picture(document, shown), heat)


def picture_svg(pic: Picture, heat: Heat | None = None) -> str:
    """:func:`drawing_svg` of a :class:`Picture` already laid out."""
    return _Writer(pic, heat).svg()


# --- writing ------------------------------------------------------------------------------

_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def esc(text: object) -> str:
    """``text`` safe inside an SVG element or a double-quoted attribute (characters XML
    cannot hold dropped)."""
    s = _BAD_XML.sub("", str(text))
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _n(v: float) -> str:
    """A coordinate, short: at most two decimals, no trailing zeros."""
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


class _Writer:
    """One SVG document of one :class:`Picture`."""

    def __init__(self, pic: Picture, heat: Heat | None) -> None:
        self.pic = pic
        self.doc = pic.document
        self.lay = pic.layout
        self.plan = pic.plan
        self.out: list[str] = []
        self.heat = self._heat(heat or {})
        self.top_heat = max([v for v, _ in self.heat.values()] + [1e-12])
        self.tags: list[tuple[float, str, Box, str]] = []  # value, item, box, text

    def _heat(self, heat: Heat) -> dict[str, tuple[float, str]]:
        """Heat per drawn item (a node by its name, a collapsed box by ``group:PATH``): a
        node's own; a collapsed box's given (``group:PATH`` in ``heat``; a fold: its
        members' summed, as the canvas), else its nodes' summed (written as a share)."""
        lay = self.lay
        out = {n: (float(v), label) for n, (v, label) in heat.items() if n in lay.nodes}
        sums: dict[str, float] = {}
        for name, (value, _) in heat.items():
            box = lay.owner.get(name)
            if box is not None:
                sums[box] = sums.get(box, 0.0) + float(value)
        for path in lay.collapsed:
            members = lay.folds.get(path, [path])
            given = [heat[group_key(m)] for m in members if group_key(m) in heat]
            if given:
                value = sum(float(v) for v, _ in given)
                label = given[0][1] if len(members) == 1 else f"{len(members)}× {given[0][1]}"
            elif path in sums:
                value, label = sums[path], f"{sums[path]:.1%}"
            else:
                continue
            out[group_key(path)] = (value, label)
        return out

    def svg(self) -> str:
        pic, out = self.pic, self.out
        root = self.plan.tree.get("") or drawn_tree(self.doc)
        out.append('<g class="graph">')
        self._members(root, "")
        out.append("</g>")
        out.append('<g class="edges">')
        for i, edge in enumerate(self._edges_by_height()):
            if i % EDGE_RUN == 0:
                out.append('<g class="edge-run">' if i == 0 else '</g><g class="edge-run">')
            self._edge(edge)
        out.append("</g></g>" if self.plan.edges else "</g>")
        left, top = pic.left, pic.top
        right, bottom = pic.left + pic.width, pic.top + pic.height
        if self.tags:  # (the tags beside the boxes on the right stay in the picture)
            for x, y, w, h in self._tags():
                right, bottom = max(right, x + w + MARGIN / 2), max(bottom, y + h + MARGIN / 2)
        width, height = right - left, bottom - top
        title = self.doc.request.spec or "graph"
        head = [
            '<?xml version="1.0" encoding="UTF-8"?>',
            '<svg xmlns="http://www.w3.org/2000/svg" version="1.1" class="fxstudio-graph" '
            f'width="{_n(width)}" height="{_n(height)}" '
            f'viewBox="{_n(left)} {_n(top)} {_n(width)} {_n(height)}" '
            f'font-family="{FONT_FAMILY}" data-nodes="{len(self.doc)}" '
            f'data-drawn-nodes="{len(self.lay.nodes)}" '
            f'data-collapsed="{esc(",".join(sorted(self.lay.collapsed)))}">',
            f"<title>{esc(f'fxstudio: {title}')}</title>",
            f'<rect class="background" x="{_n(left)}" y="{_n(top)}" '
            f'width="{_n(width)}" height="{_n(height)}" fill="{LIGHT["canvas"]}"/>',
        ]
        return "\n".join([*head, *out, "</svg>"]) + "\n"

    # -- groups and nodes ---------------------------------------------------------------

    def _members(self, group: ModuleGroup, parent: str) -> None:
        for path, child in group.children.items():
            if path in self.lay.groups:
                self._group(path, child, parent)
        for name in group.nodes:
            if name in self.lay.nodes:
                self._node(name, parent)

    def _group(self, path: str, group: ModuleGroup, parent: str) -> None:
        lay, c, box = self.lay, LIGHT, self.pic.groups[path]
        collapsed = path in lay.collapsed
        members = self.plan.members.get(path, 0)
        fold = lay.folds.get(path)
        label = fold_label(fold, group.type_name) if fold else group_label(group)
        attrs = (
            f'class="group{" collapsed" if collapsed else ""}" data-module="{esc(path)}" '
            f'data-type="{esc(group.type_name)}" data-nodes="{members}" '
            f'data-parent="{esc(parent)}"'
        )
        if fold:
            attrs += f' data-fold="{len(fold)}" data-members="{esc(",".join(fold))}"'
        if not collapsed:  # (its box, were it collapsed: the report's script draws it so)
            bw, bh = collapsed_size(group_label(group), METRICS)
            attrs += f' data-box="{_n(bw)} {_n(bh)}"'
        self.out.append(f"<g {attrs}>")
        x, y, w, h = _n(box.x), _n(box.y), _n(box.w), _n(box.h)
        if collapsed:
            tip = f"{label}\n{members} nodes"
            self.out.append(f"<title>{esc(tip)}</title>")
            self.out.append(
                f'<rect class="box" x="{x}" y="{y}" width="{w}" height="{h}" rx="8" '
                f'fill="{c["group_fill"]}" stroke="{c["group_border"]}" stroke-width="1.5"/>'
            )
            text = elide(f"▸ {label}", box.w - 6, bold=True)
            self._text(box.x + box.w / 2, box.y + box.h / 2, text, NAME_PX, c["group_text"], True)
            self._heat_mark(group_key(path), box)
        else:
            r, g, b, a = c["frame_fill"]
            self.out.append(
                f'<rect class="frame" x="{x}" y="{y}" width="{w}" height="{h}" rx="8" '
                f'fill="{hex_rgb((r, g, b))}" fill-opacity="{a / 255:.3f}" stroke="{c["frame"]}" '
                'stroke-width="1" stroke-dasharray="4 2"/>'
            )
            text = elide(f"▾ {label}", box.w - 16, middle=False)
            self.out.append(
                f'<text class="title" x="{_n(box.x + 8)}" y="{_n(box.y + 3 + DETAIL_PX * 0.93)}" '
                f'font-size="{DETAIL_PX}" fill="{c["frame_text"]}">{esc(text)}</text>'
            )
            self._members(group, path)
        self.out.append("</g>")

    def _node(self, name: str, parent: str) -> None:
        doc, c, box = self.doc, LIGHT, self.pic.nodes[name]
        node = doc.node(name)
        op, target, shape = self.plan.labels[name]
        loc = doc.source_location(name)
        problem = doc.shape_problem[1] if doc.shape_problem and doc.shape_problem[0] == name else ""
        self.out.append(
            f'<g class="node" id="node-{esc(name)}" data-name="{esc(name)}" data-op="{op}" '
            f'data-target="{esc(target)}" data-shape="{esc(shape)}" '
            f'data-dtype="{esc(node_dtype(node) or "")}" data-module="{esc(module_path(node))}" '
            f'data-source="{esc(loc.short() if loc else "")}" data-parent="{esc(parent)}">'
        )
        tip = f"{name}\n{op}: {target}\n{shape}" + (f"\n{loc.short()}" if loc else "")
        if problem:
            tip += f"\n\nShapes do not fit here: {problem}"
        self.out.append(f"<title>{esc(tip)}</title>")
        border = c["problem"] if problem else c["borders"].get(op, c["border"])
        self.out.append(
            f'<rect class="box" x="{_n(box.x)}" y="{_n(box.y)}" width="{_n(box.w)}" '
            f'height="{_n(box.h)}" rx="6" fill="{c["fills"].get(op, c["fill"])}" '
            f'stroke="{border}" stroke-width="{3 if problem else 1.2}"/>'
        )
        width = box.w - 2 * TEXT_MARGIN
        third = (box.h - 4) / 3
        lines = (
            (name, NAME_PX, c["text"], True, "name"),
            (target if target != name else "", DETAIL_PX, c["subtext"], False, "target"),
            (shape, DETAIL_PX, c["faint"], False, "shape"),
        )
        cx = box.x + box.w / 2
        for i, (text, size, colour, bold, role) in enumerate(lines):
            if text:
                shown = elide(text, width, bold)
                self._text(cx, box.y + 2 + third * (i + 0.5), shown, size, colour, bold, role)
        if op != "output":
            self.out.append(
                f'<circle class="port" cx="{_n(cx)}" cy="{_n(box.y + box.h)}" r="3.5" '
                f'fill="{c["port"]}" stroke="{border}" stroke-width="1.2"/>'
            )
        if problem:
            self.out.append(
                f'<text class="problem" x="{_n(box.x + box.w + 8)}" '
                f'y="{_n(box.y + box.h / 2 + _ASCENT * 10)}" font-size="10" font-weight="bold" '
                f'fill="{c["problem"]}">{esc("⚠ " + problem)}</text>'
            )
        self._heat_mark(name, box)
        self.out.append("</g>")

    def _text(
        self,
        x: float,
        middle: float,
        text: str,
        size: float,
        colour: str,
        bold: bool = False,
        role: str = "label",
    ) -> None:
        weight = ' font-weight="bold"' if bold else ""
        self.out.append(
            f'<text class="{role}" x="{_n(x)}" y="{_n(middle + _ASCENT * size)}" '
            f'font-size="{size}"{weight} fill="{colour}" text-anchor="middle">{esc(text)}</text>'
        )

    def _heat_mark(self, item: str, box: Box) -> None:
        got = self.heat.get(item)
        if got is None:
            return
        value, label = got
        rgb = heat_colour(value / self.top_heat)
        self.out.append(
            f'<rect class="heat" data-value="{value:.6g}" x="{_n(box.x - 4)}" '
            f'y="{_n(box.y - 4)}" width="{_n(box.w + 8)}" height="{_n(box.h + 8)}" '
            f'fill="{hex_rgb(rgb)}" fill-opacity="0.47" stroke="{hex_rgb(darker(rgb, 1.15))}" '
            f'stroke-width="3"/>'
        )
        self.tags.append((value, item, box, label or f"{value:.1%}"))

    def _tags(self) -> list[tuple[float, float, float, float]]:
        """The heat's tags at each box's top right, hottest first, none over another (the
        ones written kept in a grid of cells, to find one in the way); their rectangles."""
        placed: list[tuple[float, float, float, float]] = []
        cells: dict[tuple[int, int], list[tuple[float, float, float, float]]] = {}
        self.out.append('<g class="heat-tags">')
        for value, item, box, text in sorted(self.tags, key=lambda t: -t[0]):
            w, h = METRICS.width(text, bold=True) + 8, NAME_PX + 4
            x, y = box.x + box.w + 4, box.y
            near = [
                (i, j)
                for i in range(int(x // CELL), int((x + w) // CELL) + 1)
                for j in range(int(y // CELL), int((y + h) // CELL) + 1)
            ]
            if any(
                x < a + cw and a < x + w and y < b + ch and b < y + h
                for key in near
                for a, b, cw, ch in cells.get(key, ())
            ):
                continue
            for key in near:
                cells.setdefault(key, []).append((x, y, w, h))
            placed.append((x, y, w, h))
            rgb = heat_colour(value / self.top_heat)
            self.out.append(
                f'<g class="heat-tag" data-name="{esc(item)}">'
                f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(h)}" rx="3" '
                f'fill="{hex_rgb(rgb)}" stroke="{hex_rgb(darker(rgb, 1.4))}" stroke-width="1"/>'
            )
            self._text(x + w / 2, y + h / 2, text, NAME_PX, ink_on(rgb), True, "tag")
            self.out.append("</g>")
        self.out.append("</g>")
        return placed

    # -- edges ----------------------------------------------------------------------------

    def _edges_by_height(self) -> list[Edge]:
        """The edges in the order of their targets' height (a run of them ends near)."""
        at = self.pic.item
        return sorted(self.plan.edges, key=lambda e: b.y if (b := at(e.target)) else 0.0)

    def _edge(self, e) -> None:
        c = LIGHT
        source, target = self.pic.item(e.source), self.pic.item(e.target)
        if source is None or target is None:
            return
        ex = target.x + target.w / 2
        if e.slots > 1:
            width = target.w * 0.7
            ex += -width / 2 + width * e.slot / (e.slots - 1)
        ey = target.y
        attrs = (
            f'class="edge" data-from="{esc(e.source)}" data-to="{esc(e.target)}" '
            f'data-args="{esc(", ".join(e.texts))}"'
        )
        if e.stub:
            attrs += f' data-stub="{esc(e.stub)}"'
        self.out.append(f"<g {attrs}>")
        arrow = (
            f'<polygon points="{_n(ex)},{_n(ey)} {_n(ex - 3.5)},{_n(ey - 7)} '
            f'{_n(ex + 3.5)},{_n(ey - 7)}" fill="{c["edge"]}"/>'
        )
        if e.stub:
            sy = ey - STUB_LENGTH
            self.out.append(
                f'<path d="M{_n(ex)},{_n(sy)}L{_n(ex)},{_n(ey)}" fill="none" '
                f'stroke="{c["edge"]}" stroke-width="1.2" stroke-dasharray="3.6 2.4"/>'
            )
            self.out.append(arrow)
            lw = 6.0 * len(e.stub) + 8
            self.out.append(
                f'<rect class="stub" x="{_n(ex + 3)}" y="{_n(sy)}" width="{_n(lw)}" height="13" '
                f'rx="4" fill="{c["stub_fill"]}" stroke="{c["stub_border"]}" '
                'stroke-width="0.8"/>'
            )
            self.out.append(
                f'<text class="stub" x="{_n(ex + 3 + lw / 2)}" '
                f'y="{_n(sy + 6.5 + _ASCENT * STUB_PX)}" '
                f'font-size="{STUB_PX}" font-style="italic" fill="{c["stub_text"]}" '
                f'text-anchor="middle">{esc(e.stub)}</text>'
            )
        else:
            sx, sy = source.x + source.w / 2, source.y + source.h
            route = e.detour[1:-1] if e.detour else ()
            d = [f"M{_n(sx)},{_n(sy)}"]
            for _, c1, c2, end in edge_path((sx, sy, ex, ey), route):
                d.append(
                    f"C{_n(c1[0])},{_n(c1[1])} {_n(c2[0])},{_n(c2[1])} {_n(end[0])},{_n(end[1])}"
                )
            self.out.append(
                f'<path d="{"".join(d)}" fill="none" stroke="{c["edge"]}" stroke-width="1.2"/>'
            )
            self.out.append(arrow)
        self.out.append("</g>")
