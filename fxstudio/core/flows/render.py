"""The render flow: the document's picture as the canvas draws it, written as SVG -- vector,
text as text -- with, on request, a heat overlay from a profile, the memory estimate or a
compare against a baseline.  The one flow behind ``fxstudio render`` (which turns the SVG into
PDF or PNG through Qt, ``fxstudio.qt.share``) and the window's *File ▸ Export picture*.

:func:`render_flow` (:class:`RenderRequest`) -> :class:`RenderResult`: the SVG
(:func:`~fxstudio.core.share.svg.drawing_svg`'s), its counts and times, the heat's summary.
:func:`check_output` says, before any work, whether a picture can be written where asked.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:resnet")
    >>> result = render_flow(RenderRequest(doc, collapse=("layer1",)))
    >>> result.summary()["drawn_nodes"] < result.summary()["nodes"]  # layer1: one box
    True
    >>> result.svg.count('class="node"') == result.summary()["drawn_nodes"]
    True
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fxstudio.core.errors import UserError
from fxstudio.core.flows.diff import DiffRequest, diff_flow
from fxstudio.core.flows.memory import MemoryRequest, memory_flow
from fxstudio.core.flows.run import profile
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.process.files import WriteError, atomic_write, check_writable
from fxstudio.core.results import Json
from fxstudio.core.runtime.profiling import ProfileOptions
from fxstudio.core.share.heats import diff_heat, memory_heat, profile_heat
from fxstudio.core.share.picturelayout import collapsed_groups, picture
from fxstudio.core.share.svg import picture_svg

__all__ = ["FORMATS", "HEATS", "RenderRequest", "RenderResult", "check_output", "render_flow"]

#: What a picture is written as: the SVG itself, or Qt's PDF and PNG of it.
FORMATS = (".svg", ".pdf", ".png")
#: The heat overlays: a per-node profile's shares, the memory estimate's bytes, a compare's
#: differences against a baseline.
HEATS = ("profile", "memory", "diff")


@dataclass(frozen=True)
class RenderRequest:
    """What to draw: ``document``, every module expanded (``expanded``) or as the canvas
    opens it, the modules in ``collapse`` as one box; a ``heat`` (one of :data:`HEATS`:
    ``diff`` compares against ``against``), measured on ``device``."""

    document: GraphDocument
    expanded: bool = False
    collapse: tuple[str, ...] = ()
    heat: str | None = None
    against: GraphDocument | None = None
    device: str = "cpu"
    min_time: float = 0.5  # seconds of timing for the profile heat
    #: what the window's canvas shows now: the document's collapsed groups exactly (the
    #: window's *File ▸ Export picture*), instead of ``expanded``/``collapse``
    as_shown: bool = False


@dataclass
class RenderResult:
    """The picture as SVG (:attr:`svg`), what it holds and what it took."""

    document: GraphDocument
    svg: str
    counts: dict[str, int]
    seconds: dict[str, float]
    heat: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {**self.counts, "seconds": self.seconds}

    def to_json(self) -> Json:
        """The counts, the seconds, the heat's summary (its hottest nodes) and the notes."""
        data: dict[str, Any] = {
            "model": self.document.request.spec,
            **self.counts,
            "svg_bytes": len(self.svg.encode()),
            "seconds": self.seconds,
        }
        if self.heat is not None:
            data["heat"] = self.heat
        if self.notes:
            data["notes"] = list(self.notes)
        return data

    def describe(self) -> str:
        c = self.counts
        text = (
            f"drew {c['drawn_nodes']} of {c['nodes']} nodes, {c['groups']} groups "
            f"({c['collapsed']} collapsed), {c['edges']} edges; laid out in "
            f"{self.seconds['layout']:.2f} s, written in {self.seconds['svg']:.2f} s"
        )
        if self.heat is not None:
            top = ", ".join(f"{n['name']} {n['label']}" for n in self.heat["top"][:5])
            text += f"\nheat by {self.heat['kind']}: {self.heat['nodes']} nodes" + (
                f"; hottest: {top}" if top else ""
            )
        return text

    def write(self, path: str | os.PathLike[str]) -> Path:
        """The SVG, written atomically (PDF and PNG are Qt's: ``fxstudio.qt.share``)."""
        out = Path(path)
        if out.suffix.lower() != ".svg":
            raise WriteError(f"The render flow writes .svg; {out.name} is for the window's Qt.")
        atomic_write(out, self.svg)
        return out


def check_output(path: str | os.PathLike[str], force: bool = False) -> Path:
    """Whether a picture can be written at ``path``: a known format (:data:`FORMATS`), not
    an existing file (unless ``force``), in a folder that exists and can be written in --
    said before any work is done, so that bad input writes nothing."""
    out = Path(path)
    if out.suffix.lower() not in FORMATS:
        raise WriteError(
            f"Cannot write a picture as '{out.suffix or out.name}': name the output "
            f"{' or '.join(FORMATS)} (e.g. graph.svg)."
        )
    check_writable(out, force)
    if not out.parent.is_dir():
        raise WriteError(f"{out.parent} is not a folder; give a path inside a folder.")
    if not os.access(out.parent, os.W_OK | os.X_OK):
        raise WriteError(
            f"Cannot write in {out.parent} (permission denied); choose a folder you can write in."
        )
    return out


def render_flow(request: RenderRequest) -> RenderResult:
    """Draw the request's document (see :class:`RenderRequest`).  Bad input -- a module in
    ``collapse`` that is not drawn as a group, an unknown heat, a diff heat without a
    baseline -- raises :class:`~fxstudio.core.errors.UserError` before any work."""
    doc = request.document
    if request.heat is not None and request.heat not in HEATS:
        raise UserError(f"Unknown heat '{request.heat}': choose one of {', '.join(HEATS)}.")
    if request.heat == "diff" and request.against is None:
        raise UserError("A diff heat compares against a baseline: name it (--against BASE).")
    shown = collapsed_groups(
        doc, expanded=request.expanded, collapse=request.collapse, as_shown=request.as_shown
    )
    notes: list[str] = []
    heat, heat_summary, heat_s = None, None, 0.0
    if request.heat is not None:
        t0 = time.perf_counter()
        heat, more = _heat(request)
        heat_s = time.perf_counter() - t0
        notes.extend(more)
        hottest = sorted(heat.items(), key=lambda kv: -kv[1][0])
        nodes = [(n, v, label) for n, (v, label) in hottest if not n.startswith("group:")]
        modules = [(n[6:], v, label) for n, (v, label) in hottest if n.startswith("group:")]
        heat_summary = {
            "kind": request.heat,
            "nodes": len(nodes),
            "top": [{"name": n, "value": v, "label": label} for n, v, label in nodes[:10]],
            "modules": [{"path": p, "value": v, "label": label} for p, v, label in modules[:10]],
        }
    t0 = time.perf_counter()
    pic = picture(doc, shown)
    t1 = time.perf_counter()
    svg = picture_svg(pic, heat)
    t2 = time.perf_counter()
    lay = pic.layout
    notes.extend(lay.notes)
    counts = {
        "nodes": len(doc),
        "drawn_nodes": len(lay.nodes),
        "groups": len(lay.groups),
        "collapsed": len(lay.collapsed),
        "edges": len(pic.plan.edges),
        "width": round(pic.width),
        "height": round(pic.height),
    }
    seconds = {"layout": round(t1 - t0, 4), "svg": round(t2 - t1, 4)}
    if request.heat is not None:
        seconds["heat"] = round(heat_s, 4)
    return RenderResult(doc, svg, counts, seconds, heat_summary, notes)


def _heat(request: RenderRequest) -> tuple[dict[str, tuple[float, str]], list[str]]:
    doc = request.document
    if request.heat == "profile":
        options = ProfileOptions(device=request.device, per_node=True, min_time=request.min_time)
        nodes = profile(doc, options).after.nodes
        if nodes is None:  # (per_node asked: the profiler's run is there)
            raise UserError("The profile has no per-node times to draw; run it again.")
        return profile_heat(nodes), []
    if request.heat == "memory":
        return memory_heat(memory_flow(doc, MemoryRequest()).estimate), []
    assert request.against is not None
    result = diff_flow(DiffRequest(request.against, doc, device=request.device, keep_going=True))
    notes = []
    if result.alignment.removed:
        notes.append(
            f"{len(result.alignment.removed)} nodes of the baseline are not in this graph "
            "(removed): they are not drawn."
        )
    if result.values_problem is not None:
        notes.append(f"values not compared: {result.values_problem}")
    return diff_heat(result), notes
