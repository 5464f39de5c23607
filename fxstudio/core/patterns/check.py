"""The numerical check after a rewrite: the rewritten model against the model before it.

Both run in this process, on the same inputs (the document's example inputs and a few
seeded random ones like them), in eval mode without gradients and on the same number of
threads -- one when the model's ops are small (a check is bookkeeping: threads waiting on
each other at every tiny op while another process keeps the cores busy cost a 20,000-node
check seconds) -- so the comparison does not depend on the machine.  Tolerances come from
the dtype: an exact rewrite (the same ops, or fewer) must agree to 1e-5 absolute in
float32, a fold (new weights, another rounding) to 1e-4 relative to the output's largest
magnitude; both scale with the dtype's epsilon.

The rewritten model's outputs stay with the document, for that version of its graph (up to
:data:`KEEP_BYTES`): a rewrite after a checked one runs only the model after it.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:simple")
    >>> before = reference(doc)
    >>> result = check(doc, before, exact=True)
    >>> result.ok, result.max_abs_diff
    (True, 0.0)
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr
from dataclasses import dataclass
from typing import Any

import torch

from fxstudio.core.fxcompat import tree_leaves
from fxstudio.core.fxcompat.modules import inplace_count
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.execution import Plan, bookkeeping_count, run_nodes, threads
from fxstudio.core.process import collector, modelcode
from fxstudio.core.results import Json
from fxstudio.core.saving.verify import largest_difference

EXACT_ATOL = 1e-5  # float32; scaled by the dtype's epsilon
FOLD_RTOL = 1e-4


#: The inputs a check runs on: the example inputs and random ones like them.
CHECK_RUNS = 3

#: The most bytes of outputs a document keeps from a check, as the next check's model before.
KEEP_BYTES = 32 * 2**20

# vmap runs an op it has no batching rule for once per input, and says so: said for the
# batched check (:func:`_batched`) alone, where that is what is wanted
warnings.filterwarnings("ignore", message="There is a performance drop because we have not yet")


@dataclass(frozen=True)
class Reference:
    inputs: list[tuple[Any, ...]]
    outputs: list[list[torch.Tensor]]
    threads: int = 0  # torch threads it ran on (0: as many as the check finds)
    weights: int = -1  # the weights' in-place changes when it ran (fxcompat.modules.inplace_count)

    def holds_for(self, doc: GraphDocument) -> bool:
        """Whether these are still the outputs of ``doc``'s graph as it is (kept for this
        version of it): its example inputs the same tensors, its weights not changed in
        place since (a training run, a console's ``fill_``)."""
        base = tuple(doc.example_inputs)
        return (
            bool(self.inputs)
            and len(self.inputs[0]) == len(base)
            and all(a is b for a, b in zip(self.inputs[0], base, strict=True))
            and self.weights == inplace_count(doc.graph_module)
        )


@dataclass(frozen=True)
class Check:
    max_abs_diff: float
    max_rel_diff: float
    tolerance: float  # absolute (exact rewrites) or relative (folds)
    exact: bool
    ok: bool
    runs: int
    problem: str = ""  # outputs of another number, shape or dtype; an error running

    def describe(self, intended: bool = False) -> str:
        """The verdict in words; ``intended``: the rewrite means to change the values, so a
        difference is reported as such, not as a failure."""
        if self.problem:
            return f"Check FAILED: {self.problem}"
        kind = "absolute" if self.exact else "relative"
        verdict = (
            "passed" if self.ok else "found other values (as intended)" if intended else "FAILED"
        )
        return (
            f"Check {verdict} on {self.runs} inputs: max abs diff {self.max_abs_diff:.3g}, "
            f"max rel diff {self.max_rel_diff:.3g} (tolerance {self.tolerance:.1g} {kind})."
        )

    def to_json(self) -> Json:
        return {
            "max_abs_diff": self.max_abs_diff,
            "max_rel_diff": self.max_rel_diff,
            "tolerance": self.tolerance,
            "exact": self.exact,
            "ok": self.ok,
            "runs": self.runs,
            "problem": self.problem,
        }


def check_inputs(
    doc: GraphDocument, random: int = CHECK_RUNS - 1, seed: int = 0
) -> list[tuple[Any, ...]]:
    """The example inputs and ``random`` seeded ones of the same shapes (floats are drawn
    anew; integer inputs such as token ids are kept, their valid range is unknown)."""
    base = tuple(doc.example_inputs)
    if not base:
        return []
    gen = torch.Generator().manual_seed(seed)
    out = [base]
    for _ in range(random):
        out.append(
            tuple(
                torch.randn(x.shape, generator=gen, dtype=x.dtype).to(x.device)
                if isinstance(x, torch.Tensor) and x.is_floating_point()
                else x
                for x in base
            )
        )
    return out


def run_graph(doc: GraphDocument, inputs: tuple[Any, ...]) -> Any:
    """The document's graph run on ``inputs`` node by node (:func:`run_nodes`): the ops its
    compiled forward calls, as fast, and -- for a graph not compiled (a big graph's copy in a
    worker) -- without a ``compile()`` that holds the GIL for a second."""
    with _running(doc, None) as (_, plan):
        return _call(doc, inputs, plan)


@contextmanager
def _running(doc: GraphDocument, n_threads: int | None) -> Iterator[tuple[int, Plan]]:
    """Around runs of the document's model: its turn (a trace in another thread would catch
    this run's module calls; modelcode), no gradients, eval mode once for all the runs, its
    generated code kept off stderr (a GraphModule that raises prints it; the check's message
    says what failed instead) and ``n_threads`` torch threads (None: the bookkeeping count,
    :func:`~fxstudio.core.graph.execution.bookkeeping_threads`).  Yields the count and the
    plan of the runs (made once for all of them)."""
    with collector.sparing(len(doc)):  # (a value per node, a run per input)
        plan = Plan(doc.graph_module, doc.graph)
        if n_threads is None:
            n_threads = bookkeeping_count(plan, tuple(doc.example_inputs))
        with modelcode.one_turn(), torch.no_grad(), plan.eval_mode():
            with redirect_stderr(io.StringIO()), threads(n_threads) as n:
                yield n, plan


def _call(doc: GraphDocument, inputs: tuple[Any, ...], plan: Plan) -> Any:
    return run_nodes(doc.graph_module, doc.graph, inputs, plan=plan)


def _outputs(
    doc: GraphDocument, inputs: list[tuple[Any, ...]], plan: Plan
) -> list[list[torch.Tensor]]:
    """Each input's output tensors.  A graph of small ops (what a run of it costs is the
    Python around each op) runs once for all the inputs, batched by ``torch.func.vmap`` --
    the same values as one run each, at about half the cost for three; a graph that vmap
    cannot batch (a random op, a value read with ``.item()``) runs once per input."""
    if len(inputs) > 1 and plan.small_ops(inputs[0]):
        try:
            batched = _batched(doc, inputs, plan)
        except Exception:  # (vmap's own refusal, or the model's: said by the runs below)
            batched = None
        if batched is not None:
            return batched
    return [_leaves(_call(doc, x, plan)) for x in inputs]


def _batched(
    doc: GraphDocument, inputs: list[tuple[Any, ...]], plan: Plan
) -> list[list[torch.Tensor]] | None:
    """:func:`_outputs` in one vmapped run: the tensors that differ from input to input
    stacked, the rest (token ids, flags) passed as they are; None when none differs."""
    first = inputs[0]
    varying = [
        isinstance(v, torch.Tensor) and any(x[i] is not v for x in inputs[1:])
        for i, v in enumerate(first)
    ]
    if not any(varying):
        return None
    args = tuple(
        torch.stack([x[i] for x in inputs]) if vary else v
        for i, (v, vary) in enumerate(zip(first, varying, strict=True))
    )

    def one(*values: Any) -> list[torch.Tensor]:
        leaves = tree_leaves(_call(doc, values, plan))
        return [t for t in leaves if isinstance(t, torch.Tensor)]

    in_dims = tuple(0 if vary else None for vary in varying)
    out = torch.func.vmap(one, in_dims=in_dims, randomness="error")(*args)
    return [[t[k].clone() for t in out] for k in range(len(inputs))]


def _leaves(result: Any) -> list[torch.Tensor]:
    return [t.detach().clone() for t in tree_leaves(result) if isinstance(t, torch.Tensor)]


def reference(doc: GraphDocument, random: int = CHECK_RUNS - 1) -> Reference:
    """Run the model as it is now (before a rewrite) and keep its outputs, and the number of
    threads it ran on (the check runs on as many: the same order of sums) -- or, when the
    last check ran this very graph on these inputs (one rewrite after another), its outputs:
    the model is not run again."""
    kept = doc.kept_values(_key(random + 1))
    if isinstance(kept, Reference) and kept.holds_for(doc):
        return kept
    inputs = check_inputs(doc, random)
    with _running(doc, None) as (n, plan):
        outputs = _outputs(doc, inputs, plan)
    return _kept(doc, Reference(inputs, outputs, n, inplace_count(doc.graph_module)))


def _key(runs: int) -> str:
    return f"check/{runs}"


def _kept(doc: GraphDocument, ref: Reference) -> Reference:
    """``ref`` kept by the document for this version of its graph, if small enough."""
    size = sum(t.numel() * t.element_size() for out in ref.outputs for t in out)
    if size <= KEEP_BYTES:
        doc.keep_values(_key(len(ref.inputs)), ref)
    return ref


def _eps_ratio(dtype: torch.dtype) -> float:
    if not dtype.is_floating_point:
        return 0.0
    return float(torch.finfo(dtype).eps / torch.finfo(torch.float32).eps)


def check(doc: GraphDocument, before: Reference, exact: bool) -> Check:
    """Run the rewritten model on ``before``'s inputs and compare."""
    if not before.inputs:
        return Check(0.0, 0.0, 0.0, exact, False, 0, "the model has no example inputs to run")
    worst_abs = worst_rel = 0.0
    tolerance = EXACT_ATOL if exact else FOLD_RTOL

    def failed(problem: str, diff: float = 0.0) -> Check:
        return Check(diff, diff, tolerance, exact, False, 0, problem)

    try:
        with _running(doc, before.threads or None) as (_, plan):
            results = _outputs(doc, before.inputs, plan)
    except Exception as exc:
        return failed(f"the rewritten model raised {type(exc).__name__}: {exc}")
    # the rewritten model's outputs: the next rewrite's model before
    _kept(doc, Reference(before.inputs, results, before.threads, inplace_count(doc.graph_module)))
    for got, expected in zip(results, before.outputs, strict=True):
        if len(got) != len(expected):
            return failed(f"it returns {len(got)} tensors, the model before {len(expected)}")
        for a, b in zip(got, expected, strict=True):
            if a.shape != b.shape or a.dtype != b.dtype:
                was = f"{tuple(b.shape)} {b.dtype}"
                return failed(f"an output is {tuple(a.shape)} {a.dtype}, before {was}")
            if not b.is_floating_point():
                diff = float((a != b).sum()) if a.numel() else 0.0
                worst_abs = max(worst_abs, diff)
                worst_rel = max(worst_rel, diff)
                continue
            same_nan = torch.isnan(a) == torch.isnan(b)
            if not bool(same_nan.all()):
                nan = float("nan")
                return failed("NaN where the model before has a number (or the other way)", nan)
            diff, relative = largest_difference(a, b)
            worst_abs = max(worst_abs, diff)
            worst_rel = max(worst_rel, relative)
            tolerance = (EXACT_ATOL if exact else FOLD_RTOL) * max(1.0, _eps_ratio(b.dtype))
    ok = (worst_abs <= tolerance) if exact else (worst_rel <= tolerance)
    return Check(worst_abs, worst_rel, tolerance, exact, ok, len(before.inputs))
