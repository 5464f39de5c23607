"""The report as one self-contained HTML file: the graph as inline SVG
(:func:`fxstudio.core.share.svg.drawing_svg`) that pans, zooms, collapses and tells a node's
details, and the sections of what a session holds (:mod:`.sections`), with all of it as JSON
in the page (``<script type="application/json" id="fx-data">``) for a program to read back.

No server, no network: the page's style and script are inlined from the package's
``report.css`` and ``report.js`` (shipped in the wheel, read with :mod:`importlib.resources`),
and its Content-Security-Policy (``default-src 'none'``) forbids the browser any request --
the file works from an e-mail attachment, a CI artifact or a pull request, offline.

Why small plain JavaScript written for it rather than a library inlined: what the page does is
narrow -- pan/zoom by a CSS transform of the SVG (painted, not laid out again), collapse a
``<g class="group">`` by a class the CSS hides its members with into the box the canvas would
draw (the size the SVG's ``data-box`` gives), the drawing below it moved up to it, details
from the ``data-*`` attributes the SVG already carries, the compare's colours and partners
from the page's JSON, a large drawing unpacked in memory -- about 480 lines with nothing to
keep updated, no licence to ship, no build step; svg-pan-zoom (≈30 KB) would give only the
pan/zoom, and a graph library (d3, cytoscape: 250 KB and more) would lay the graph out again
in the browser, differently from the canvas, where the SVG's layout is the canvas's own.

Example:
    >>> page = report_html({"title": "demo", "history": []})
    >>> page.startswith("<!doctype html>"), "default-src 'none'" in page
    (True, True)
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import re
from html import escape
from importlib import resources
from typing import Any

from fxstudio.core.share.sections import (
    compare_html,
    compile_html,
    history_html,
    memory_html,
    profile_html,
)

__all__ = ["page_data", "report_html"]

#: The page may load nothing: no script, style, image, font or connection from anywhere.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

#: Above this many bytes a drawing (or the page's JSON) goes in gzip-compressed, as base64,
#: and the page's script inflates it with the browser's DecompressionStream: a 10,000-node
#: graph's 15.6 MB of SVG is 2.3 MB so.  Smaller reports keep it plain (greppable; the
#: drawing shows without script).
COMPRESS_ABOVE = 2_000_000

_PROLOGUE = re.compile(r"^\s*(<\?xml[^>]*\?>\s*)?(<!DOCTYPE[^>]*>\s*)?", re.IGNORECASE)


def _resource(name: str) -> str:
    return resources.files("fxstudio.core.share").joinpath(name).read_text(encoding="utf-8")


def _finite(value: Any) -> Any:
    """``value`` with NaN and infinities as None (the browser's JSON.parse refuses them)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def page_data(data: dict[str, Any]) -> str:
    """``data`` as JSON safe inside a ``<script>`` element."""
    text = json.dumps(_finite(data), default=str, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c")  # (only inside strings: still the same JSON)


def _packed(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode("utf-8"), 6)).decode("ascii")


def _inline(svg: str, compress_above: int) -> str:
    """An SVG document as an element of the page (its XML prologue dropped), or -- larger
    than ``compress_above`` bytes -- packed in a script element the page's script unpacks."""
    svg = _PROLOGUE.sub("", svg, count=1)
    if len(svg) <= compress_above:
        return svg
    return (
        '<script type="application/octet-stream" class="fx-svg" data-encoding="gzip-base64">'
        f"{_packed(svg)}</script>"
    )


def pane(
    name: str,
    svg: str,
    label: str,
    heat: tuple[str, ...] = (),
    compress_above: int = COMPRESS_ABOVE,
) -> str:
    """One graph view: its toolbar, the SVG and the details beside it."""
    choices = "".join(f'<option value="{h}">{h}</option>' for h in heat)
    heat_box = (
        f'<label>Heat <select class="fx-heat"><option value="">none</option>{choices}</select>'
        "</label>"
        if heat
        else ""
    )
    return (
        f'<div class="fx-pane" data-pane="{name}"><div class="fx-toolbar"><b>{escape(label)}</b>'
        '<button type="button" data-fx="fit">Fit</button>'
        '<button type="button" data-fx="collapse">Collapse modules</button>'
        '<button type="button" data-fx="expand">Expand all</button>'
        f"{heat_box}"
        '<span class="fx-hint">drag to pan, wheel to zoom, click a module\'s frame to '
        "collapse or expand it, a node for its details</span></div>"
        f'<div class="fx-view">{_inline(svg, compress_above)}</div>'
        '<aside class="fx-details">Click a node to see its op, target, shapes, dtype, module '
        "and source line.</aside></div>"
    )


def report_html(
    data: dict[str, Any],
    graph_svg: str | None = None,
    compare_svgs: tuple[str, str] | None = None,
    compress_above: int = COMPRESS_ABOVE,
) -> str:
    """The page: ``data`` (what :func:`fxstudio.core.share.gather` gathered: ``title``,
    ``subtitle``, ``history``, ``profile``, ``compare``, ``compile``, ``memory``, ``notes``;
    each section shown when present), ``graph_svg`` (the document's drawing) and
    ``compare_svgs`` (both sides' drawings, for the compare); each drawing, and the JSON,
    packed when larger than ``compress_above`` bytes."""
    big = compress_above
    title = str(data.get("title", "fxstudio report"))
    body, links = [], []
    if graph_svg is not None:
        heat = tuple(k for k in ("profile", "memory") if (data.get(k) or {}).get("nodes"))
        main = pane("main", graph_svg, title, heat, big)
        body.append(f'<section id="graph"><h2>Graph</h2>{main}</section>')
        links.append(("graph", "Graph"))
    if data.get("history") is not None:
        body.append(history_html(data["history"]))
        links.append(("history", "Rewrite history"))
    if data.get("profile"):
        body.append(profile_html(data["profile"]))
        links.append(("profile", "Profile"))
    if data.get("compare"):
        panes = ""
        if compare_svgs is not None:
            left, right = data["compare"].get("titles", ["left", "right"])
            panes = (
                '<div class="fx-panes">'
                + pane("left", compare_svgs[0], f"{left} (before)", (), big)
                + pane("right", compare_svgs[1], f"{right} (after)", (), big)
                + "</div>"
            )
        body.append(compare_html(data["compare"], panes))
        links.append(("compare", "Compare"))
    if data.get("compile"):
        body.append(compile_html(data["compile"]))
        links.append(("compile", "Compiled kernels"))
    if data.get("memory"):
        body.append(memory_html(data["memory"]))
        links.append(("memory", "Memory"))
    notes = "".join(f'<p class="fx-note">{escape(str(n))}</p>' for n in data.get("notes", []))
    subtitle = "".join(f"<p>{escape(str(s))}</p>" for s in data.get("subtitle", []))
    nav = "".join(f'<a href="#{i}">{escape(t)}</a>' for i, t in links)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="fxstudio">'
        f"<title>{escape(title)} — fxstudio report</title><style>{_resource('report.css')}</style>"
        f"</head><body><header><h1>{escape(title)}</h1>{subtitle}<nav>{nav}</nav>{notes}</header>"
        f"<main>{''.join(body)}</main>"
        f"{_data_element(page_data(data), compress_above)}"
        f"<script>{_resource('report.js')}</script></body></html>\n"
    )


def _data_element(text: str, compress_above: int) -> str:
    if len(text) <= compress_above:
        return f'<script type="application/json" id="fx-data">{text}</script>'
    return (
        '<script type="application/octet-stream" id="fx-data" data-encoding="gzip-base64">'
        f"{_packed(text)}</script>"
    )
