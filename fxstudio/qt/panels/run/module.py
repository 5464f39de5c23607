"""The Run dock's *Module*: run one module of the model alone -- the part of a large model that
fits, and the part of a structure-only one that can run -- as ``fxstudio profile --module``
does.  The module is taken out of a copy of the graph in the worker
(:func:`fxstudio.core.flows.run.part_of`: for a 70B layer that takes seconds), at its real width,
with its weights (random at their real shapes when the document has none, or read from its
checkpoint folder) and inputs of the shapes the graph records; then the dock's profile runs on
it with the dock's options.  The result says what was run (:meth:`Part.describe`) and, of many
modules alike, what all of them would take -- an extrapolation, said as one.

The module is chosen in the dock's options (*Module*: the whole model first), or on the canvas:
right-click a module (or a ``call_module`` node) ▸ *Run this module*.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from html import escape

from PySide6.QtWidgets import QComboBox

from fxstudio.core.edits.snapshots import Snapshot, detached
from fxstudio.core.flows import Profile, ProfileOptions, profile
from fxstudio.core.flows.run import NodeProfile, Part, part_of
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.canvas.menu import Target
from fxstudio.qt.copies import Copy

WHOLE = "the whole model"
#: What a structure-only document can run, said where running the whole model is refused.
ONE_MODULE = (
    "Run one module of it alone instead, at its real width with random weights at their "
    "shapes: choose it in the Run dock's Options (Module), or right-click a module on the canvas "
    "and choose Run this module."
)


def weights_from(doc: GraphDocument) -> str:
    """Where a module of structure-only ``doc`` takes its weights from, in words."""
    if doc.checkpoint is None:
        return "random weights at their shapes"
    if doc.checkpoint.endswith(".pt2"):
        return "its weights read from the program's .pt2 file"
    return "its weights read from the checkpoint folder"


def one_module(doc: GraphDocument) -> str:
    """:data:`ONE_MODULE`, as it is for ``doc`` (its weights from its checkpoint, if any)."""
    return ONE_MODULE.replace("random weights at their shapes", weights_from(doc))


def no_weights_tip(doc: GraphDocument) -> str:
    """Why the whole model does not run, and what does."""
    return (
        "This document holds the model's structure only (no weights): running and timing the "
        f"whole model need them. {one_module(doc)} Or open it again without Structure only, "
        "or a smaller configuration of it."
    )


BARE_STATUS = "Structure only: no weights to run the whole model. Choose a Module to run alone."


@dataclass(frozen=True)
class Ran:
    """A module's run: the part taken out and its profile."""

    part: Part
    profile: Profile


def fill(combo: QComboBox, doc: GraphDocument | None) -> None:
    """The modules to run: the whole model, then each module of ``doc``'s tree in order."""
    combo.blockSignals(True)
    combo.clear()
    combo.addItem(WHOLE, None)
    if doc is not None:
        for g in doc.module_tree().walk():
            if g.path:
                combo.addItem(f"{g.path} ({g.type_name})", g.path)
    combo.setCurrentIndex(0)
    combo.blockSignals(False)


def chosen(combo: QComboBox) -> str | None:
    """The module chosen (None: the whole model)."""
    data = combo.currentData()
    return str(data) if data else None


def choose(combo: QComboBox, path: str | None) -> None:
    """Choose ``path`` (None: the whole model); one the list lacks is added."""
    at = combo.findData(path) if path else 0
    if path and at < 0:
        combo.addItem(path, path)
        at = combo.count() - 1
    combo.setCurrentIndex(at)


def work(
    path: str, options: ProfileOptions, baseline: Snapshot | None = None
) -> Callable[[Copy], Ran]:
    """What the worker does: take ``path`` out of the copy (and of ``baseline``'s) and
    profile it."""

    def run(copy: Copy) -> Ran:
        copy.say(f"taking {path} out of the graph…")
        part = part_of(copy.detached(), path)
        before = part_of(detached(baseline), path).document if baseline is not None else None
        return Ran(part, profile(part.document, options, before, stage=copy.say))

    return run


def inside(ran: Ran) -> NodeProfile | None:
    """The module's per-node profile, its module times only those of the module and the
    modules in it (the modules its inputs came from were not run: no heat, no bars for them)."""
    nodes = ran.profile.after.nodes
    if nodes is None:
        return None
    path = ran.part.path
    mine = [m for m in nodes.modules if m.path == path or m.path.startswith(path + ".")]
    return replace(nodes, modules=mine)


def menu_label(target: Target) -> str | None:
    """The canvas menu's entry for ``target`` (None: no module there)."""
    if target.module is None:
        return None
    return (
        f"Run this module ({target.module})" if target.own else f"Run its module ({target.module})"
    )


def enclosing(doc: GraphDocument, path: str) -> list[str]:
    """The modules around the module at ``path`` that run alone (groups of the module tree
    with nodes of their own to run: not a ModuleList), innermost first."""
    groups = {g.path: g for g in doc.module_tree().walk() if g.path}
    parts = path.split(".")
    out = []
    for end in range(len(parts) - 1, 0, -1):
        around = ".".join(parts[:end])
        if around in groups and groups[around].type_name not in ("ModuleList", "ModuleDict"):
            out.append(around)
    return out


def lines(ran: Ran) -> list[str]:
    """What was run, and (of many alike) the extrapolation on its own line."""
    said = [f"Ran {ran.part.describe()}"]
    estimate = ran.part.estimate(ran.profile.after.timing.median_s)
    return [*said, estimate] if estimate else said


def html(ran: Ran) -> str:
    """:func:`lines` as the summary's first paragraphs."""
    first, *rest = lines(ran)
    return f"<p><b>{escape(first)}</b></p>" + "".join(f"<p><i>{escape(r)}</i></p>" for r in rest)


def verdict(path: str, whole: str) -> str:
    """The status line of a module's run."""
    return f"{path} alone: {whole}"


def tip(doc: GraphDocument | None, path: str | None) -> str:
    """The Run button's tooltip for ``path`` chosen on ``doc``."""
    if doc is None:
        return ""
    if path is not None:
        weights = "its weights" if doc.weights else "random weights at their real shapes"
        if not doc.weights and doc.checkpoint is not None:
            weights = weights_from(doc)
        return f"Run the module {path} alone, with {weights} and inputs of the recorded shapes"
    return no_weights_tip(doc) if not doc.weights else ""
