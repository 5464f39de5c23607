"""A rewrite as the window and the command line run it: match, replace as one edit, then the
numerical check against the model before it (a rewrite's record is read back by
:mod:`fxstudio.core.sessions.replay`).

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:resnet")
    >>> report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    >>> len(report.result.replaced), report.check.ok
    (15, True)
    >>> any("bn" in str(n.target) for n in doc.graph.nodes)
    False
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, replace
from typing import Any

from fxstudio.core.edits.engine import Edit
from fxstudio.core.edits.snapshots import Snapshot, adopt, detached, propagated, snapshot, views
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.memory.fits import Need, require_fits, run_need
from fxstudio.core.patterns.builtins import builtin_for, run_builtin
from fxstudio.core.patterns.check import CHECK_RUNS, Check, check, reference
from fxstudio.core.patterns.explain import Explanation, explain
from fxstudio.core.patterns.found import Found
from fxstudio.core.patterns.making import compile_function, from_function, load_function
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.pattern import DEFAULT_RULES, Pattern, PatternError, Rules
from fxstudio.core.patterns.replace import Rewritten, rewrite
from fxstudio.core.patterns.replacements import Replacement, function_replacement, signature_problem
from fxstudio.core.process.files import write_json
from fxstudio.core.process.guard import WontFit
from fxstudio.core.results import Json


@dataclass(frozen=True)
class RewriteSpec:
    """What to rewrite: a built-in (``NAME[:ARG]``), or a pattern and a replacement given as
    ``file.py:fn`` / ``pkg.module:fn`` or as code typed in."""

    builtin: str = ""
    pattern: str = ""  # FILE.py:fn
    replacement: str = ""
    pattern_code: str = ""
    replacement_code: str = ""
    rules: Rules = DEFAULT_RULES

    @property
    def title(self) -> str:
        return self.builtin or f"{self.pattern or 'pattern'} -> {self.replacement or 'replacement'}"


@dataclass
class Report:
    """What one rewrite did: its matches and replacements, the numerical check, and -- when
    nothing matched or a node was asked about -- why not.  The JSON ``fxstudio rewrite
    --json`` prints and the Patterns dock saves (:meth:`to_json`, :meth:`write`)."""

    result: Rewritten
    check: Check | None
    pattern: Pattern | None = None
    intended: bool = False  # the rewrite is meant to change the values (the check informs)
    title: str = ""
    explanation: Explanation | None = None  # why not (no match, or a node asked about)
    dry_run: bool = False
    done: str = ""  # a built-in's word for what it does to a place ("fused"); "" for a pattern
    unchecked: str = ""  # why a rewrite that replaced something was not checked numerically

    @property
    def verdict(self) -> str:
        """A built-in that changed nothing (or would change nothing): how many places it
        looked at and why it left each alone -- "2 candidates, none fused: a tanh soft-cap
        on the scores, which scaled_dot_product_attention cannot express (both)"."""
        return self.result.verdict(self.done) if self.done else ""

    @property
    def check_failed(self) -> bool:
        """The check found other values where the rewrite should have kept them."""
        return self.check is not None and not self.check.ok and not self.intended

    def to_json(self) -> Json:
        r = self.result
        data: dict[str, Any] = {
            "rewrite": self.title,
            "matches": [m.to_json() for m in r.found.matches],
            "replaced": 0 if self.dry_run else len(r.replaced),
            "dry_run": self.dry_run,
            "would_replace": [m.to_json() for m in r.replaced] if self.dry_run else [],
            "skipped": [{"match": m.to_json(), "reason": why} for m, why in r.skipped]
            + [s.to_json() for s in r.found.skipped],
            "warnings": list(r.found.warnings),
            "candidates": r.candidates,
            "verdict": self.verdict,
            "check": self.check.to_json() if self.check is not None else None,
            "unchecked": self.unchecked,
            "changes_values": self.intended,
            "seconds": {"match": r.seconds_match, "replace": r.seconds_replace},
        }
        why = self.explanation
        if why is not None:
            data["explanation"] = why.to_json()
            if why.asked is not None and why.at is not None:
                data["here"] = why.at.to_json()
        return data

    def write(self, path: str | os.PathLike[str]) -> None:
        """The report as JSON, written atomically."""
        write_json(path, self.to_json(), indent=2, default=repr)

    def describe(self) -> list[str]:
        """The report as lines for a person (``fxstudio rewrite`` prints them)."""
        r = self.result
        found = r.found
        n, k = len(found.matches), len(r.replaced)
        done = (
            ""
            if self.dry_run and not k
            else f", {k} {'to replace' if self.dry_run else 'replaced'}"
        )
        said = self.verdict or f"{n} match{'es' if n != 1 else ''}{done}"
        lines = [
            f"{self.title}: {said}"
            + f" (match {r.seconds_match:.3f} s, replace {r.seconds_replace:.3f} s)"
        ]
        lines += [f"  warning: {w}" for w in found.warnings]
        if self.dry_run:  # (a built-in's: those it would replace)
            shown = r.replaced or found.matches
            lines += [f"  {m.index + 1}. {', '.join(m.graph_nodes)}" for m in shown]
        lines += [f"  skipped {m.anchor}: {why}" for m, why in r.skipped]
        lines += [f"  skipped: {s.failure.describe()}" for s in found.skipped]
        if self.check is not None:
            lines.append(f"  {self.check.describe(self.intended)}")
        if self.unchecked:
            lines.append(f"  Not checked: {self.unchecked}.")
        if self.explanation is not None:
            lines.append(self.explanation.describe())
        return lines


def pattern_of(doc: GraphDocument, spec: RewriteSpec) -> Pattern:
    """The spec's pattern, traced in the document's dialect."""
    if spec.pattern_code:
        fn, source = compile_function(spec.pattern_code)
    elif spec.pattern:
        fn, source = load_function(spec.pattern)
    else:
        raise PatternError("Give a pattern (FILE.py:fn) or a built-in rewrite.")
    rules = spec.rules
    saved = getattr(inspect.getmodule(fn), "RULES", None)
    if isinstance(saved, dict) and rules == DEFAULT_RULES:  # a pattern file's own rules
        rules = Rules.from_json(saved)
    dialect = doc.request.chosen_frontend or "fx"
    name = getattr(fn, "__name__", "pattern")
    return from_function(fn, name, dialect, rules=rules, source=source)


@dataclass(frozen=True)
class RewriteRequest:
    """One rewrite asked for: what (``spec``), and how.

    ``accepted``: the indices of the matches to replace (None: all); ``dry_run``: what it
    would change, nothing changed; ``allow_difference``: the rewrite is meant to change the
    values (the check informs, it does not fail); ``explain_at``: a node asked about (why it
    is or is not matched).  A caller that already has them passes the ``pattern``, its
    ``found`` matches (when still of this graph) or a ``replacement`` made otherwise (a
    box of nodes)."""

    spec: RewriteSpec
    accepted: frozenset[int] | None = None
    dry_run: bool = False
    allow_difference: bool = False
    explain_at: str | None = None
    pattern: Pattern | None = None
    replacement: Replacement | None = None
    found: Found | None = None


@dataclass
class RewrittenCopy:
    """A rewrite made in a worker on a detached copy of a document (:func:`rewrite_copy`):
    its report, and :meth:`adopt`, which makes it one edit of the document -- what the
    window does once the check allows it."""

    copy: GraphDocument
    report: Report
    known: dict[str, Any]  # the copy's views, made in the worker (snapshots.views)

    def adopt(self, doc: GraphDocument, snap: Snapshot) -> Edit | None:
        """The rewrite as one edit of ``doc``, which ``snap`` was read from (``None``: it
        changed nothing).  Raises :class:`~fxstudio.core.edits.snapshots.Stale` when ``doc``
        changed since; the report's edit is then the document's."""
        done = self.report.result.edit
        if done is None:
            return None
        edit = adopt(doc, snap, self.copy, done, self.known)
        self.report.result.edit = edit
        return edit


def rewrite_copy(copy: GraphDocument, request: RewriteRequest) -> RewrittenCopy:
    """:func:`rewrite_flow` on ``copy`` (a detached document, in a worker), and what the
    document it was read from needs to take it: its shapes propagated and its views made
    where it is."""
    report = rewrite_flow(copy, request)
    if report.result.edit is None:
        return RewrittenCopy(copy, report, {})
    return RewrittenCopy(propagated(copy), report, views(copy))


def rewrite_flow(doc: GraphDocument, request: RewriteRequest) -> Report:
    """A rewrite as both the window and ``fxstudio rewrite`` run it: match, say why not
    (nothing matched, or ``explain_at`` asked about a node -- told on the graph as matched,
    before a replacement takes those nodes away), replace as one edit, then check it
    numerically.  A failed check leaves the rewrite in place for the caller to undo (the
    window offers Undo; the command line exits 2 and writes nothing)."""
    spec, dry_run = request.spec, request.dry_run
    accepted = set(request.accepted) if request.accepted is not None else None
    if spec.builtin:
        builtin = builtin_for(doc, spec.builtin)  # refused before the model runs
        if dry_run:  # what it would change and skip: run on a copy, which is dropped
            result = run_builtin(detached(snapshot(doc)), spec.builtin)
            changes = builtin.changes_values
            return Report(
                replace(result, edit=None),
                None,
                None,
                changes,
                spec.title,
                dry_run=True,
                done=builtin.done,
            )
        weights = doc.weights  # (a walk of every tensor: once)
        unfit = _unfit(doc) if doc.example_inputs and weights else ""
        before = reference(doc) if doc.example_inputs and weights and not unfit else None
        result = run_builtin(doc, spec.builtin)
        exact, intended, verb = builtin.exact, builtin.changes_values, builtin.done
        pattern, why = None, None
    else:
        pattern = request.pattern or pattern_of(doc, spec)
        found = request.found or Matcher(pattern).find(doc.graph_module)  # if current
        why = None
        if request.explain_at is not None or not found.matches:
            why = explain(doc.graph_module, pattern, at=request.explain_at, found=found)
        if dry_run:
            rewritten = Rewritten(None, found, [], [], found.seconds, 0.0)
            return Report(rewritten, None, pattern, False, spec.title, why, dry_run=True)
        replacement = request.replacement or _replacement_of(spec, pattern)
        # the model before, run only when there is something to replace
        weights = doc.weights  # (a walk of every tensor: once)
        runs = bool(doc.example_inputs and weights and found.matches)
        unfit = _unfit(doc) if runs else ""
        before = reference(doc) if runs and not unfit else None
        result = rewrite(doc, pattern, replacement, accepted, found=found)
        exact = False  # a user's replacement: judged as a fold (rounding may differ)
        intended, verb = request.allow_difference, ""
    result_check = check(doc, before, exact) if before is not None and result.edit else None
    unchecked = (NO_VALUES if not weights else unfit) if result.edit else ""
    return Report(
        result, result_check, pattern, intended, spec.title, why, done=verb, unchecked=unchecked
    )


def _unfit(doc: GraphDocument) -> str:
    """Why the numerical check would not fit in memory (it runs the model before and after
    on :data:`~fxstudio.core.patterns.check.CHECK_RUNS` inputs, possibly batched into one
    run), or ``""``."""
    need = run_need(doc)
    try:
        require_fits("The numerical check", need and Need(need.activations * CHECK_RUNS))
    except WontFit as exc:
        return str(exc).split("\n", 1)[0].rstrip(".")
    return ""


#: Why a rewrite of a structure-only document is not checked numerically.
NO_VALUES = "the document holds the model's structure only (no weights), so there is nothing to run"


def _replacement_of(spec: RewriteSpec, pattern: Pattern) -> Replacement:
    """The spec's replacement function, checked against the pattern's signature."""
    if spec.replacement_code:
        fn, source = compile_function(spec.replacement_code)
    elif spec.replacement:
        fn, source = load_function(spec.replacement)
    else:
        raise PatternError("Give the replacement too (--replacement FILE.py:fn).")
    problem = signature_problem(fn, pattern)
    if problem:
        raise PatternError(problem)
    return function_replacement(fn, getattr(fn, "__name__", None), source)
