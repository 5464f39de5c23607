"""The step flow: a graph run node by node with ``torch.fx.Interpreter`` from its start to a
node (or its end), each node's value summarised and, where a module boundary allows,
compared with the eager model's -- what ``fxstudio step`` prints.  The Step dock moves the
same :class:`~fxstudio.core.stepping.stepper.Stepper` one node at a time (:func:`step_through`,
each move by :func:`step_move`: in the model code's turn).

Called by ``fxstudio step`` and the Step dock (``fxstudio.qt.panels.step.panel``, ``step_form``),
which also reads a value's summary (:class:`ValueSummary`) and picture (:func:`picture`,
:class:`Picture`) from here.

Example:
    >>> result = step_flow(StepRequest("examples:simple", until="fc1"))
    >>> [s.name for s in result.steps], result.first_difference
    (['x', 'fc1'], None)
    >>> result.to_json()["nodes"][1]["value"]["shape"]
    [2, 32]
    >>> result.describe()[-1]
    'The graph matches the eager model at all 1 module boundaries compared.'
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.nodedata import Overlay
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.memory.fits import require_fits, run_need
from fxstudio.core.process import modelcode
from fxstudio.core.process.files import write_json
from fxstudio.core.results import Json
from fxstudio.core.sessions.documents import open_document
from fxstudio.core.stepping.eager import Agreement
from fxstudio.core.stepping.stepper import DEFAULT_WINDOW, Step, StepError, Stepper, for_document
from fxstudio.core.stepping.summaries import Picture, ValueSummary, picture
from fxstudio.core.wording import text_table

__all__ = [
    "Picture",
    "StepRequest",
    "StepResult",
    "UnknownNode",
    "ValueSummary",
    "picture",
    "step_flow",
    "step_move",
    "step_through",
]


def step_through(
    doc: GraphDocument, *, window: int = DEFAULT_WINDOW, eager: bool = True
) -> Stepper:
    """A stepper over the document's graph and inputs, compared with the eager model where
    ``eager`` (:func:`~fxstudio.core.stepping.stepper.for_document`) -- refused first, with
    the numbers, when the run would not fit in memory: the graph's values at their peak
    and, to compare, the eager model built again (a copy of the weights) and run."""
    if doc.weights and doc.example_inputs:  # (said otherwise by the stepper itself)
        need = run_need(doc, copies=int(eager))
        require_fits("Stepping through the model", need.twice() if need and eager else need)
    return for_document(doc, window=window, eager=eager)


class UnknownNode(StepError):
    """``until`` names no node of the graph; :attr:`names` are the graph's nodes, in order."""

    def __init__(self, node: str, names: list[str]) -> None:
        super().__init__(f"There is no node {node!r} in this graph.")
        self.node = node
        self.names = names


@dataclass(frozen=True)
class StepRequest:
    """What to step through: ``model`` (a MODEL spec or session path, a request to open, or a
    document already open -- never changed), run from the start until the node ``until``
    has run (None: to the end), compared with the eager model built again from its source
    where ``eager``; ``window``: how many values the stepper keeps."""

    model: str | OpenRequest | GraphDocument
    until: str | None = None
    eager: bool = True
    window: int = DEFAULT_WINDOW


@dataclass
class StepResult:
    """The nodes run, in order (:attr:`steps`), with the stepper that ran them."""

    document: GraphDocument
    stepper: Stepper
    steps: list[Step]

    @property
    def compared(self) -> bool:
        """Whether the values were compared with the eager model."""
        return self.stepper.eager is not None

    @property
    def first_difference(self) -> str | None:
        """The first node run whose value differs from the eager model's."""
        return self.stepper.first_difference()

    def op(self, step: Step) -> str:
        return self.stepper.order[step.index].op

    def to_json(self) -> Json:
        """Each node run (index, name, op, value, eager agreement), the first difference and
        whether the eager model was compared (what ``fxstudio step --format json`` prints)."""
        return {
            "nodes": [
                {
                    "index": s.index,
                    "name": s.name,
                    "op": self.op(s),
                    "value": s.summary.to_json(),
                    "eager": s.agreement.to_json() if s.agreement else None,
                }
                for s in self.steps
            ],
            "first_difference": self.first_difference,
            "eager": self.compared,
        }

    def write(self, path: str | os.PathLike[str]) -> None:
        """:meth:`to_json`, written atomically."""
        write_json(path, self.to_json(), indent=1)

    def rows(self) -> list[tuple[str, ...]]:
        """The table's cells, a row a node (see :data:`HEADER`)."""
        rows: list[tuple[str, ...]] = []
        for s in self.steps:
            v = s.summary
            rows.append(
                (
                    str(s.index),
                    s.name,
                    self.op(s),
                    v.text if len(v.text) <= 40 else v.text[:39] + "…",
                    _number(v.min),
                    _number(v.max),
                    _number(v.mean),
                    _number(v.std),
                    f"{v.nans}/{v.infs}" if v.kind == "tensor" else "",
                    agreement_word(s.agreement),
                )
            )
        return rows

    def verdict(self) -> str:
        """Whether the graph matches the eager model, in one sentence."""
        first = self.first_difference
        if not self.compared:
            return "(not compared with the eager model)"
        if first is None:
            n = sum(1 for s in self.steps if s.agreement is not None and s.agreement.compared)
            return f"The graph matches the eager model at all {n} module boundaries compared."
        a = self.stepper.agreements[first]
        return f"First node that differs from the eager model: {first} — {a.describe()}"

    def describe(self) -> list[str]:
        """In lines for a person: the table, a blank line, the verdict (``fxstudio step``)."""
        table = text_table(HEADER, self.rows(), width=None, rule=False)
        return [*table, "", self.verdict()]

    def overlay(self) -> Overlay:
        """Each tensor node's largest |value|, as per-node data for other viewers."""
        overlay = Overlay("max_abs_value")
        for s in self.steps:
            v = s.summary
            if v.kind == "tensor" and v.min is not None and v.max is not None:
                overlay.values[s.name] = max(abs(v.min), abs(v.max))
        return overlay


HEADER = ("#", "node", "op", "value", "min", "max", "mean", "std", "nan/inf", "eager")


def _number(x: float | None) -> str:
    return "" if x is None else f"{x:.4g}"


def agreement_word(a: Agreement | None) -> str:
    """A node's eager agreement in a word: differs, same, not compared ("" for none)."""
    if a is None:
        return ""
    return "differs" if a.differs else ("same" if a.same else "not compared")


def step_flow(request: StepRequest) -> StepResult:
    """Open the model (unless it is a document), run it node by node to ``until`` (or the
    end) and compare with the eager model where asked.  Raises :class:`UnknownNode` when
    ``until`` is not a node of the graph (the eager model already built, nothing run)."""
    m = request.model
    doc = m if isinstance(m, GraphDocument) else open_document(m)
    stepper = step_through(doc, window=request.window, eager=request.eager)
    if request.until and request.until not in stepper.index:
        raise UnknownNode(request.until, list(stepper.index))
    with modelcode.one_turn():  # the model's code, one thread at a time, held to memory
        steps = stepper.run_to(request.until) if request.until else stepper.run_to_end()
    return StepResult(doc, stepper, steps)


def step_move(
    stepper: Stepper | None,
    document: Callable[[], GraphDocument],
    move: Callable[[Stepper], Any],
    *,
    breakpoints: Iterable[str] = (),
    say: Callable[[str], None] = lambda _text: None,
) -> Stepper:
    """One move of a stepper (``move(stepper)``), the stepper made first when there is none
    (on ``document()``, with those of ``breakpoints`` that are nodes; ``say`` tells that the
    eager model is being built) -- all in the model code's turn, one thread at a time (a
    trace elsewhere would catch its module calls: :mod:`fxstudio.core.process.modelcode`).
    Returns the stepper moved."""
    with modelcode.one_turn():
        if stepper is None:
            say("building the eager model to compare with…")
            stepper = step_through(document())
            stepper.set_breakpoints(set(breakpoints) & set(stepper.index))
        move(stepper)
    return stepper
