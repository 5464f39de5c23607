"""The diff flow: two models (or sessions, or documents already open) aligned node by node,
their values compared on the same inputs, optionally both timed node by node -- the one
flow behind ``fxstudio diff`` and the Compare window (:mod:`fxstudio.core.compare`).

Besides :func:`diff_flow` it exposes what the window compares and shows from elsewhere: the
document's last rewrite (:func:`last_rewrite`) and the document as it was before it
(:func:`before_last_rewrite`: *File ▸ Compare with before the last rewrite*), which of two
documents is "before" (:func:`ordered`: *File ▸ Compare with…* puts an earlier version of the
document on the left), and per-node data read from another viewer's file (:func:`read_overlay`
-> :class:`Overlay`: *View ▸ Load node data…*) or written for one (:func:`write_model_explorer`,
:func:`write_netron`: the commands' ``--model-explorer`` and ``--netron``).

Example:
    >>> req = DiffRequest("examples:resnet", "examples:resnet", rewrites=("fold-conv-bn",))
    >>> result = diff_flow(req)
    >>> result.values is not None and result.values.first_difference is None
    True
    >>> sorted(result.to_json())[:3]
    ['added', 'pairs', 'removed']
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from fxstudio.core.compare.align import Alignment, align
from fxstudio.core.compare.overlay import read_overlay, write_model_explorer, write_netron
from fxstudio.core.compare.sides import before_last_rewrite, last_rewrite, ordered
from fxstudio.core.compare.times import Times, time_both
from fxstudio.core.compare.values import Values, compare_values
from fxstudio.core.errors import UserError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.nodedata import Overlay
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.graph.weights import no_weights_message
from fxstudio.core.memory.fits import require_fits, run_need
from fxstudio.core.patterns.apply import Report, RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.process.files import write_json
from fxstudio.core.results import Json
from fxstudio.core.sessions.documents import open_document

__all__ = [
    "Alignment",
    "DiffRequest",
    "DiffResult",
    "Overlay",
    "Side",
    "Times",
    "Values",
    "before_last_rewrite",
    "diff_flow",
    "last_rewrite",
    "ordered",
    "read_overlay",
    "write_model_explorer",
    "write_netron",
]

#: A side of a comparison: a MODEL spec or session path, a request to open, or a document
#: already open (used as it is: the flow never changes it, unless ``rewrites`` are asked).
Side = str | OpenRequest | GraphDocument


@dataclass(frozen=True)
class DiffRequest:
    """What to compare: ``left`` against ``right`` (each opened unless already a document),
    the built-in ``rewrites`` run on the right first (in order, their value changes allowed),
    their values on the same inputs (``values``) and both timed, interleaved (``times``)."""

    left: Side
    right: Side
    rewrites: tuple[str, ...] = ()
    values: bool = True
    times: bool = False
    device: str = "cpu"
    min_time: float = 1.0
    #: a failure to run both (different inputs, a side that fails) noted in the result, the
    #: alignment kept, instead of raised
    keep_going: bool = False
    titles: tuple[str, str] = ("left", "right")


@dataclass
class DiffResult:
    """Two graphs compared: the alignment, their values (None when not asked, or not
    compared: ``values_problem`` says why), their times (once measured)."""

    left: GraphDocument
    right: GraphDocument
    alignment: Alignment
    values: Values | None = None
    times: Times | None = None
    values_problem: UserError | None = None
    rewrites: list[Report] = field(default_factory=list)  # those run on the right first
    titles: tuple[str, str] = ("left", "right")

    def measure_times(self, device: str = "cpu", min_time: float = 1.0) -> Times:
        """Profile both node by node, interleaved; each pair's time change (kept)."""
        self.times = time_both(self.left, self.right, self.alignment, device, min_time=min_time)
        return self.times

    def coverage(self) -> tuple[float, float]:
        """The shares of each side's call nodes that are paired."""
        return self.alignment.coverage(self.left, self.right)

    def to_json(self) -> Json:
        """Pairs, removed, added, changed; values and times when there are some."""
        data = self.alignment.to_json()
        if self.values is not None:
            data["values"] = self.values.to_json()
        if self.times is not None:
            data["times"] = self.times.to_json()
        return data

    def write(self, path: str | os.PathLike[str]) -> None:
        """:meth:`to_json`, written atomically."""
        write_json(path, self.to_json(), indent=2)

    def describe(self) -> list[str]:
        """In lines for a person (``fxstudio diff`` prints them)."""
        a, (left, right) = self.alignment, (self.left, self.right)
        calls_left, calls_right = self.coverage()
        lines = [
            f"{self.titles[0]} vs {self.titles[1]}: {a.describe()}",
            f"  call nodes paired: {calls_left:.0%} of the left's, "
            f"{calls_right:.0%} of the right's",
        ]
        for label, names, doc in (("removed", a.removed, left), ("added", a.added, right)):
            ops = [n for n in names if doc.node(n).op != "get_attr"]
            weights = len(names) - len(ops)
            if ops:
                lines.append(f"  {label}: {', '.join(ops[:12])}" + (" …" if len(ops) > 12 else ""))
            if weights:
                lines.append(f"  {label}: {weights} parameter reads (get_attr)")
        changed = a.changed()
        lines += [
            f"  changed ({p.why}): {' + '.join(p.left)} → {' + '.join(p.right)}"
            for p in changed[:12]
        ]
        if len(changed) > 12:
            lines.append(f"  … and {len(changed) - 12} more changed")
        if self.values is not None:
            lines.append("  " + self.values.describe())
        if self.times is not None:
            lines.append(f"  times: {self.times.whole.describe()}")
            ranked = sorted(self.times.pairs, key=lambda t: -abs(t.delta_s))
            lines += [
                f"    {' + '.join(t.left)} → {' + '.join(t.right)}: {t.change.describe()}"
                for t in [t for t in ranked if t.change.significant][:8]
            ]
        return lines

    def overlay(self) -> Overlay | None:
        """Each right node's relative value difference (a pair's on each of its right
        nodes), as per-node data for other viewers; None without values."""
        if self.values is None:
            return None
        overlay = Overlay("max_rel_diff")
        for v in self.values.nodes:
            paired = self.alignment.pair_of_right(v.right)
            for name in paired.right if paired is not None else (v.right,):
                if v.max_rel_diff is not None:
                    overlay.values[name] = v.max_rel_diff
        return overlay


def _opened(side: Side) -> GraphDocument:
    return side if isinstance(side, GraphDocument) else open_document(side)


def diff_flow(request: DiffRequest) -> DiffResult:
    """Compare two graphs as the request says (see :class:`DiffRequest`).  Raises
    :class:`~fxstudio.core.errors.UserError` for bad input (a side that cannot be opened;
    values that cannot be compared, unless ``keep_going``)."""
    left = _opened(request.left)
    right = _opened(request.right)
    reports = [
        rewrite_flow(right, RewriteRequest(RewriteSpec(builtin=name), allow_difference=True))
        for name in request.rewrites
    ]
    result = DiffResult(left, right, align(left, right), rewrites=reports, titles=request.titles)
    unweighted = next((d for d in (left, right) if not d.weights), None)
    if unweighted is not None and (request.values or request.times):
        result.values_problem = UserError(  # the structures and shapes are compared all the same
            no_weights_message(
                "Comparing values and times",
                unweighted.request.spec,
                not unweighted.request.weights,
            )
        )
        return result
    if not (request.values or request.times):
        return result
    # each side is run in turn, on this device: the larger run must fit
    needs = [n for n in (run_need(left), run_need(right)) if n is not None]
    need = max(needs, key=lambda n: n.bytes) if needs else None
    if request.values:
        try:
            require_fits("Comparing the two models' values", need, request.device)
            result.values = compare_values(left, right, result.alignment, request.device)
        except UserError as exc:
            if not request.keep_going:
                raise
            result.values_problem = exc
    if request.times:
        require_fits("Timing the two models", need, request.device)
        result.measure_times(request.device, request.min_time)
    return result
