"""Run a graph one node at a time with ``torch.fx.Interpreter``, forward and back.

``position`` counts the nodes run (0 = none, ``len(stepper)`` = all); the node last run is
:attr:`Stepper.current`.  Every node run leaves a :class:`ValueSummary` (kept for all nodes:
a few hundred bytes each) and, with an :class:`EagerReference`, its :class:`Agreement` with
the eager model.  The values themselves are kept only while a later node needs them or for
the last ``window`` nodes run, so memory stays bounded on a big graph; stepping back within
the window is instant, further back the graph is run again from the start
(:attr:`Stepper.recomputed` says how many nodes that took).  The CPU random generator is
restored before a rerun, so a graph that draws random numbers gives the same values again.

Example:
    >>> import torch
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:simple")
    >>> s = Stepper(doc.graph_module, doc.example_inputs)
    >>> s.step().name, s.step().name, s.position
    ('x', 'fc1', 2)
    >>> s.summary("fc1").shape
    (2, 32)
    >>> s.back(); s.current
    'x'
    >>> len(s.run_to_end()), s.current, s.finished
    (4, 'output', True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

from fxstudio.core.errors import UserError
from fxstudio.core.fxcompat import set_interpreter_inputs
from fxstudio.core.graph.graphviews import module_tree_of
from fxstudio.core.stepping.eager import Agreement, EagerReference
from fxstudio.core.stepping.summaries import ValueSummary, summarize

DEFAULT_WINDOW = 64


class StepError(UserError):
    """A node raised while it ran (the message names the node and what it said)."""


@dataclass(frozen=True)
class Step:
    """One node run: its name, index in graph order and value summary."""

    name: str
    index: int
    summary: ValueSummary
    agreement: Agreement | None


class Stepper:
    def __init__(
        self,
        gm: fx.GraphModule,
        inputs: tuple[Any, ...],
        *,
        window: int = DEFAULT_WINDOW,
        eager: EagerReference | None = None,
    ) -> None:
        self.gm = gm
        self.inputs = tuple(inputs)
        self.window = max(1, window)
        self.eager = eager
        self.order: list[fx.Node] = list(gm.graph.nodes)
        self.index = {n.name: i for i, n in enumerate(self.order)}
        self._last_use = [i for i in range(len(self.order))]
        for i, n in enumerate(self.order):
            for a in n.all_input_nodes:
                j = self.index[a.name]
                self._last_use[j] = max(self._last_use[j], i)
        # A value can go once the window has passed both its node and its last user: the
        # nodes listed by that position, so a step drops them without scanning what is held.
        self._expires: dict[int, list[fx.Node]] = {}
        for j, n in enumerate(self.order):
            self._expires.setdefault(max(j, self._last_use[j]), []).append(n)
        self._placeholder: dict[str, int] = {}
        for n in self.order:
            if n.op == "placeholder":
                self._placeholder[n.name] = len(self._placeholder)
        self._groups = module_tree_of(gm.graph)
        self.interpreter = fx.Interpreter(gm, garbage_collect_values=False)
        self.summaries: dict[str, ValueSummary] = {}
        self.agreements: dict[str, Agreement] = {}
        self.breakpoints: set[str] = set()
        self.position = 0
        self.recomputed = 0  # nodes run again by the last move back past the window
        self._floor = 0  # the earliest position reachable without running again
        self._rng = torch.get_rng_state()  # the CPU generator's state as the graph runs
        self._rng_start = self._rng
        self._rng_at: dict[int, torch.Tensor] = {}  # position -> the state before that node

    # -- where we are -----------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.order)

    @property
    def current(self) -> str | None:
        return self.order[self.position - 1].name if self.position else None

    @property
    def next_node(self) -> str | None:
        return self.order[self.position].name if self.position < len(self.order) else None

    @property
    def finished(self) -> bool:
        return self.position == len(self.order)

    def kept(self, name: str) -> bool:
        """Whether the node's value is held now (run, and inside the window)."""
        return self.order[self.index[name]] in self.interpreter.env

    def value(self, name: str) -> Any:
        """The node's value, if it is held (see :meth:`kept`); None otherwise."""
        return self.interpreter.env.get(self.order[self.index[name]])

    def summary(self, name: str) -> ValueSummary | None:
        """The node's value summary, once it has run (None for a node not run yet)."""
        return self.summaries.get(name) if self.index[name] < self.position else None

    def first_difference(self) -> str | None:
        """The first node, in graph order, whose value differs from the eager model's."""
        bad = [
            self.index[name]
            for name, a in self.agreements.items()
            if a.differs and self.index[name] < self.position
        ]
        return self.order[min(bad)].name if bad else None

    def output(self) -> Any:
        """The graph's output, once the output node has run."""
        return self.value(self.order[-1].name) if self.finished else None

    # -- moving forward ----------------------------------------------------------------

    def step(self) -> Step:
        """Run the next node.  Raises :class:`StepError` when it fails (nothing moves)."""
        if self.finished:
            raise StepError("The graph has run to its end: step back or restart.")
        n = self.order[self.position]
        interp = self.interpreter
        if n.op == "placeholder":
            set_interpreter_inputs(interp, self.inputs[self._placeholder[n.name] :])
        self._rng_at[self.position] = self._rng
        saved = torch.get_rng_state()
        torch.set_rng_state(self._rng)
        try:
            with torch.no_grad():
                value = interp.run_node(n)
        except Exception as exc:
            raise StepError(
                f"Node {n.name} ({n.op} {n.target}) failed: {type(exc).__name__}: {exc}"
            ) from exc
        finally:
            self._rng = torch.get_rng_state()
            torch.set_rng_state(saved)
        interp.env[n] = value
        self.position += 1
        summary = summarize(value)
        self.summaries[n.name] = summary
        agreement = self.eager.compare(n.name, value) if self.eager is not None else None
        if agreement is not None:
            self.agreements[n.name] = agreement
        self._forget()
        return Step(n.name, self.position - 1, summary, agreement)

    def _forget(self) -> None:
        """Drop the values no later node needs and older than the window."""
        edge = self.position - self.window
        self._floor = max(self._floor, edge)
        if edge <= 0:
            return
        self._rng_at.pop(edge - 1, None)  # (the edge moves one position a step)
        env = self.interpreter.env
        for node in self._expires.get(edge - 1, ()):
            env.pop(node, None)

    def run(
        self, until: Callable[[Step], bool] | None = None, *, limit: int | None = None
    ) -> list[Step]:
        """Run nodes until ``until(step)`` is true after one, a breakpoint is next, or the end.

        The first node runs even when it has a breakpoint (as a debugger continues past the
        one it stopped at).  ``limit``: at most this many nodes.
        """
        steps: list[Step] = []
        while not self.finished and (limit is None or len(steps) < limit):
            if steps and self.next_node in self.breakpoints:
                break
            steps.append(self.step())
            if until is not None and until(steps[-1]):
                break
        return steps

    def run_to_end(self) -> list[Step]:
        """Run on to the next breakpoint or the end."""
        return self.run()

    def run_to(self, name: str) -> list[Step]:
        """Run, or step back, until ``name`` is the node last run."""
        self._check(name)
        return self.goto(self.index[name] + 1)

    def step_over(self, group: str) -> list[Step]:
        """Run until every node of module ``group`` has run (stopping at a breakpoint)."""
        last = max((self.index[m] for m in self._members(group)), default=-1)
        if last < self.position:
            return [self.step()] if not self.finished else []
        return self.run(lambda s: s.index >= last)

    def step_out(self) -> list[Step]:
        """Run until the innermost module of the node last run has finished."""
        group = self.group_of(self.current) if self.current else ""
        if not group:
            return self.run_to_end()
        return self.step_over(group)

    def group_of(self, name: str | None) -> str:
        """The innermost module group holding the node ("" for the top level)."""
        if name is None:
            return ""
        found = ""
        for g in self._groups.walk():
            if g.path and name in g.nodes:
                found = g.path
        return found

    def _members(self, group: str) -> list[str]:
        for g in self._groups.walk():
            if g.path == group:
                return g.all_nodes()
        raise StepError(f"There is no module {group!r} in this graph.")

    # -- moving back -------------------------------------------------------------------

    def back(self) -> None:
        """Undo the last step (its value is forgotten; earlier ones are as they were)."""
        if self.position:
            self.goto(self.position - 1)

    def restart(self) -> None:
        self.interpreter.env.clear()
        self.position = 0
        self._floor = 0
        self._rng = self._rng_start
        self._rng_at.clear()

    def goto(self, position: int) -> list[Step]:
        """Move to ``position`` (nodes run): back within the window at once, further back by
        running again from the start (``recomputed`` says how many nodes), forward by running."""
        position = max(0, min(position, len(self.order)))
        self.recomputed = 0
        if position >= self.position:
            steps: list[Step] = []
            while self.position < position:
                steps.append(self.step())
            return steps
        if position < self._floor:
            self.restart()
            while self.position < position:
                self.step()
                self.recomputed += 1
            return []
        env = self.interpreter.env
        for n in self.order[position : self.position]:
            env.pop(n, None)
        self.position = position
        self._rng = self._rng_at.get(position, self._rng_start)
        return []

    def _check(self, name: str) -> None:
        if name not in self.index:
            raise StepError(f"There is no node {name!r} in this graph.")

    def toggle_breakpoint(self, name: str) -> bool:
        """Set or clear a breakpoint on a node; returns whether it is set now."""
        self._check(name)
        if name in self.breakpoints:
            self.breakpoints.discard(name)
            return False
        self.breakpoints.add(name)
        return True

    def set_breakpoints(self, names: Iterable[str]) -> None:
        for name in names:
            self._check(name)
        self.breakpoints = set(names)


def eager_reference(doc: Any) -> EagerReference | None:
    """The eager model of a document, built again from its source (the same spec, inputs and
    seed give the same weights), run once on the document's inputs; None when the document
    has no source to build it from."""
    from fxstudio.core.model.loading import load_model

    src = doc.request
    if not src.spec or not doc.example_inputs:
        return None
    module = load_model(src.spec, src.inputs, src.seed).module
    module.train(src.train)
    return EagerReference(module, tuple(doc.example_inputs), doc.graph)


def for_document(doc: Any, *, window: int = DEFAULT_WINDOW, eager: bool = True) -> Stepper:
    """A stepper over the document's graph and example inputs, compared with the eager
    model where ``eager`` (see :func:`eager_reference`)."""
    doc.require_weights("Stepping through the graph")
    if not doc.example_inputs:
        raise StepError(
            "This model has no example inputs to step through: open it with --input SHAPE "
            "(or give the model file an example_inputs function)."
        )
    doc.ensure_compiled()
    ref = eager_reference(doc) if eager else None
    return Stepper(doc.graph_module, tuple(doc.example_inputs), window=window, eager=ref)
