"""Applying steps as one edit, all or nothing: :func:`commit`, the checks every edit passes,
and undo / redo."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from fxstudio.core import collector
from fxstudio.core.capture import repropagate
from fxstudio.core.document import ChangeKind, GraphDocument
from fxstudio.core.edits.steps import EditError, Step, submodule_at
from fxstudio.core.errors import UserError
from fxstudio.core.graphviews import format_target

# --- edits ---------------------------------------------------------------------------------------


@dataclass(repr=False)
class Edit:
    """Applied steps that can be undone and redone; ``record`` says how to replay them."""

    def __repr__(self) -> str:
        return f"<Edit {self.label!r}>"

    doc: GraphDocument
    label: str
    steps: list[Step]
    kind: ChangeKind
    names: set[str]
    record: dict[str, Any] = field(default_factory=dict)

    def undo(self) -> None:
        """Undo this edit, which must be the last one made (undo is a stack)."""
        if not self.doc.history or self.doc.history[-1] is not self.record:
            raise EditError(f"Undo the edits made after '{self.label}' first.")
        inverses = [s.inverse() for s in reversed(self.steps)]
        _run(self.doc, inverses, self.label)
        self.doc.history.pop()
        _finish(self.doc, _undo_kind(self.kind), self.names, *_carried(inverses))

    def redo(self) -> None:
        _run(self.doc, self.steps, self.label)  # each step notes the state it replaces again
        self.doc.history.append(self.record)
        _finish(self.doc, self.kind, self.names, *_carried(self.steps))


def _carried(steps: list[Step]) -> tuple[dict[str, Any] | None, bool]:
    """The views and shapes a lone step brings with it (a graph a worker made)."""
    if len(steps) != 1:
        return None, False
    return steps[0].known_views(), steps[0].shapes_fresh


def _undo_kind(kind: ChangeKind) -> ChangeKind:
    return {
        ChangeKind.NODES_ADDED: ChangeKind.NODES_REMOVED,
        ChangeKind.NODES_REMOVED: ChangeKind.NODES_ADDED,
    }.get(kind, kind)


def commit(
    doc: GraphDocument,
    label: str,
    steps: Iterable[Step],
    kind: ChangeKind,
    record: dict[str, Any] | None = None,
    known: dict[str, Any] | None = None,
    shapes_fresh: bool = False,
) -> Edit:
    """Apply ``steps`` as one edit, or none of them (raising :class:`EditError`).

    ``steps`` may be a generator: each step is made after the ones before it are applied, so
    it can read the graph as they left it (a rewrite places each replacement that way).
    ``known``: views of the new graph made elsewhere (a worker's, see
    :mod:`fxstudio.core.snapshots`); ``shapes_fresh``: its nodes' shapes are already right."""
    steps = _run(doc, steps, label)
    names = set().union(*(s.touched() for s in steps)) if steps else set()
    edit = Edit(doc, label, steps, kind, names, record or {})
    doc.history.append(edit.record)
    carried, fresh = _carried(steps)
    _finish(doc, kind, names, known or carried, shapes_fresh or fresh)
    return edit


def _run(doc: GraphDocument, steps: Iterable[Step], label: str) -> list[Step]:
    """Thousands of steps on a big graph allocate enough to set off many full collections,
    each walking every node (0.8 s of a 4 s rewrite at 20k): paused meanwhile."""
    with collector.sparing(len(doc)):
        return _run_steps(doc, steps, label)


def _run_steps(doc: GraphDocument, steps: Iterable[Step], label: str) -> list[Step]:
    done: list[Step] = []
    try:
        for step in steps:
            step.apply(doc)
            done.append(step)
        unchecked = [s.touched() for s in done if not s.prechecked]
        if unchecked or not done:
            validate(doc, set().union(*unchecked) if unchecked else set())
        else:  # a graph an edit made elsewhere, already checked (lint included): adopted
            _recompile(doc)
    except Exception as exc:
        for step in reversed(done):
            step.inverse().apply(doc)
        doc.drop_caches()
        _recompile(doc)
        if isinstance(exc, UserError):  # already says what happened (EditError, PatternError)
            raise
        raise EditError(f"{label} was refused: {type(exc).__name__}: {exc}") from exc
    return done


def validate(doc: GraphDocument, touched: set[str]) -> None:
    """The checks every edit passes before it is kept."""
    graph = doc.graph
    try:
        graph.lint()
    except RuntimeError as exc:
        text = str(exc)
        m = re.search(r"Argument '(\w+)' of Node '(\w+)' was used before it has been defined", text)
        if m:
            raise EditError(
                f"'{m.group(2)}' would use '{m.group(1)}', which comes after it in the graph "
                "(a value must be computed before it is used, and no cycle is possible)."
            ) from None
        raise EditError(f"The graph would not be valid: {text}") from None
    names = doc.node_index()
    for name in touched:
        node = names.get(name)
        if node is not None:
            check_call(doc, node)
    _recompile(doc)


def _recompile(doc: GraphDocument) -> None:
    if doc.defer_heavy:
        doc.compiled = False  # the code comes from fxstudio.core.catchup; run: ensure_compiled
    else:
        doc.graph_module.recompile()
        doc.compiled = True


def check_call(doc: GraphDocument, node: fx.Node) -> None:
    """Refuse a non-callable target or arguments its signature cannot take."""
    if node.op == "call_function":
        if not callable(node.target):
            raise EditError(f"'{node.target}' is not a function: '{node.name}' cannot call it.")
        fn = node.target
    elif node.op == "call_method":
        if not isinstance(node.target, str) or not hasattr(torch.Tensor, node.target):
            raise EditError(f"Tensors have no method '{node.target}'.")
        if not node.args:
            raise EditError(
                f"'{node.name}' calls .{node.target}() on nothing: select the node whose value "
                "it is called on (or give it as the first argument)."
            )
        return
    elif node.op == "call_module":
        module = submodule_at(doc.graph_module, str(node.target))
        if module is None:
            raise EditError(f"The model has no submodule '{node.target}'.")
        fn = module.forward
    else:
        return
    sig = signature(fn)
    if sig is None:
        # A builtin (torch.sigmoid): torch lists one signature for each, but not its
        # overloads (torch.max(x) and torch.max(x, 1)), so only a call without any argument
        # is checked against it; shapes tell about the rest.
        sig = builtin_signature(fn)
        if sig is None or node.args or node.kwargs:
            return
    try:
        sig.bind(*node.args, **node.kwargs)
    except TypeError as exc:
        if not node.args and not node.kwargs:
            raise EditError(
                f"'{node.name}' calls {format_target(node)} without arguments ({exc}): select "
                "the node it should take, or give its arguments."
            ) from None
        raise EditError(
            f"'{node.name}' cannot call {format_target(node)} that way: {exc}."
        ) from None


_SIGNATURES: dict[Any, inspect.Signature | None] = {}


def signature(fn: Any) -> inspect.Signature | None:
    """``inspect.signature``, once per function (a rewrite checks thousands of calls); a
    bound method (a submodule's forward) is read each time."""
    if inspect.ismethod(fn):
        try:
            return inspect.signature(fn)
        except (TypeError, ValueError):
            return None
    try:
        if fn in _SIGNATURES:
            return _SIGNATURES[fn]
    except TypeError:  # unhashable
        pass
    try:
        sig: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    try:
        _SIGNATURES[fn] = sig
    except TypeError:
        pass
    return sig


@functools.cache
def _testing_overrides() -> dict[Any, Any]:
    """torch's list of its builtins' signatures (building it costs a millisecond: once)."""
    return torch.overrides.get_testing_overrides()


def builtin_signature(fn: Any) -> inspect.Signature | None:
    """The one signature torch lists for a builtin without one (``torch.sigmoid``), if any;
    its overloads (``torch.max(x)``, ``torch.max(x, 1)``) are not in it."""
    try:
        override = _testing_overrides().get(fn)
    except TypeError:  # unhashable
        return None
    return signature(override) if override is not None else None


def _finish(
    doc: GraphDocument,
    kind: ChangeKind,
    names: set[str],
    known: dict[str, Any] | None = None,
    shapes_fresh: bool = False,
) -> None:
    reshaped: set[str] = set()
    if shapes_fresh:
        doc.shapes_stale = False
    elif doc.defer_heavy:
        doc.shapes_stale = True  # see fxstudio.core.catchup
    else:
        old = doc.shape_problem
        reshaped = recheck_shapes(doc)
        names = names | {p[0] for p in (old, doc.shape_problem) if p}
    doc.emit(kind, names, known=known, reshaped=reshaped)


def recheck_shapes(doc: GraphDocument) -> set[str]:
    """Propagate shapes again; a node that no longer fits is recorded, not refused.  Returns
    the nodes whose shape or dtype changed (their labels must be drawn again)."""
    doc.shape_problem, changed = repropagate(
        doc.graph_module, doc.graph, doc.example_inputs, doc.source.source_file
    )
    return changed
