"""Applying steps as one edit, all or nothing: :func:`commit`, the checks every edit passes,
and undo / redo."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx
from torch import nn

from fxstudio.core.edits.calls import check_call, check_shapes
from fxstudio.core.edits.steps import (
    CreateNode,
    EraseNode,
    MoveNode,
    RenameNode,
    SetInputs,
    SetTarget,
    Step,
)
from fxstudio.core.errors import EditError, UserError
from fxstudio.core.fxcompat import compile_on_call, release_name
from fxstudio.core.graph.document import ChangeKind, GraphDocument
from fxstudio.core.graph.edited import note_touched, touched_since
from fxstudio.core.graph.propagation import repropagate
from fxstudio.core.process import collector
from fxstudio.core.results import Json

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
    record: Json = field(default_factory=dict)

    def undo(self) -> None:
        """Undo this edit, which must be the last one made (undo is a stack)."""
        if not self.doc.history or self.doc.history[-1] is not self.record:
            raise EditError(f"Undo the edits made after '{self.label}' first.")
        inverses = [s.inverse() for s in reversed(self.steps)]
        _run(self.doc, inverses, self.label)
        self.doc.history.pop()
        _finish(self.doc, _undo_kind(self.kind), self.names, *_carried(inverses), _paths(inverses))

    def redo(self) -> None:
        _run(self.doc, self.steps, self.label)  # each step notes the state it replaces again
        self.doc.history.append(self.record)
        _finish(self.doc, self.kind, self.names, *_carried(self.steps), _paths(self.steps))


def _carried(steps: list[Step]) -> tuple[dict[str, Any] | None, bool]:
    """The views and shapes a lone step brings with it (a graph a worker made)."""
    if len(steps) != 1:
        return None, False
    return steps[0].known_views(), steps[0].shapes_fresh


def _paths(steps: list[Step]) -> set[str]:
    """The submodules and attributes the steps add, replace or remove (by dotted path)."""
    return {str(getattr(s, "path", "")) for s in steps if s.changes_modules}


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
    record: Json | None = None,
    known: dict[str, Any] | None = None,
    shapes_fresh: bool = False,
) -> Edit:
    """Apply ``steps`` as one edit, or none of them (raising :class:`EditError`).

    ``steps`` may be a generator: each step is made after the ones before it are applied, so
    it can read the graph as they left it (a rewrite places each replacement that way).
    ``known``: views of the new graph made elsewhere (a worker's, see
    :mod:`fxstudio.core.edits.snapshots`); ``shapes_fresh``: its nodes' shapes are already right."""
    steps = _run(doc, steps, label)
    names = set().union(*(s.touched() for s in steps)) if steps else set()
    edit = Edit(doc, label, steps, kind, names, record or {})
    doc.history.append(edit.record)
    carried, fresh = _carried(steps)
    _finish(doc, kind, names, known or carried, shapes_fresh or fresh, _paths(steps))
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
        unchecked = [s for s in done if not s.prechecked]
        if unchecked or not done:
            touched = set().union(*(s.touched() for s in unchecked))
            calls = {n for s in unchecked if isinstance(s, _CALLS) for n in s.touched()}
            local = bool(unchecked) and all(isinstance(s, _NODE_STEPS) for s in unchecked)
            validate(doc, touched, calls, local)
        else:  # a graph an edit made elsewhere, already checked (lint included): adopted
            _recompile(doc)
    except Exception as exc:
        for step in reversed(done):
            step.inverse().apply(doc)
        for step in done:  # a refused edit leaves no trace, not even a name fx handed out
            if isinstance(step, CreateNode):
                release_name(doc.graph, step.spec.name)
        doc.drop_caches()
        _recompile(doc)
        if isinstance(exc, UserError):  # already says what happened (EditError, PatternError)
            raise
        raise EditError(f"{label} was refused: {type(exc).__name__}: {exc}") from exc
    return done


#: The steps that change what a node calls or with what: their calls are run on fake tensors.
_CALLS = (CreateNode, SetInputs, SetTarget)
#: The steps that change nodes alone, each saying which (``touched``): an edit of only these
#: leaves every other node as valid as it was.
_NODE_STEPS = (CreateNode, EraseNode, SetInputs, SetTarget, RenameNode, MoveNode)


def validate(
    doc: GraphDocument, touched: set[str], calls: Iterable[str] = (), local: bool = False
) -> None:
    """The checks every edit passes before it is kept: the graph's own (``lint``), each
    touched node's target and arguments, and the changed ``calls`` run on fake tensors
    shaped like their inputs (:mod:`fxstudio.core.edits.calls`).  ``local``: only the
    ``touched`` nodes changed (a graph valid before stays valid elsewhere), so ``lint``'s
    checks are made on them alone (:func:`lint_nodes`): an edit of one node on a 20,000-node
    graph costs that node, not a walk of every submodule path."""
    graph = doc.graph
    try:
        if local:
            lint_nodes(graph, touched, doc.node_index())
        else:
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
    check_shapes(doc, calls)
    _recompile(doc)


def lint_nodes(graph: fx.Graph, names: Iterable[str], index: dict[str, fx.Node]) -> None:
    """``Graph.lint()``'s checks of the nodes ``names`` (those present), raising as it does:
    each is of this graph, its inputs are of this graph and come before it, its users after
    it, and its target is a callable, or a path to a submodule or attribute of the graph's
    module that exists."""
    nodes = [index[n] for n in names if n in index]
    if not nodes:
        return
    order = {n: i for i, n in enumerate(graph.nodes)}
    root = graph.owning_module
    for node in nodes:
        if node.graph is not graph or node not in order:
            raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
        at = order[node]
        for arg in node.all_input_nodes:
            if arg.graph is not graph or order.get(arg, at) >= at:
                raise RuntimeError(
                    f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                    "Please check that Nodes in the graph are topologically ordered"
                )
        for user in node.users:
            if order.get(user, at + 1) <= at:
                raise RuntimeError(
                    f"Argument '{node}' of Node '{user}' was used before it has been defined! "
                    "Please check that Nodes in the graph are topologically ordered"
                )
        if root is not None:
            _lint_target(root, node)


def _lint_target(root: nn.Module, node: fx.Node) -> None:
    if node.op == "call_function":
        if not callable(node.target):
            raise ValueError(f"Node {node} target {node.target} is not callable")
        return
    if not isinstance(node.target, str):
        raise ValueError(f"Node {node} target {node.target} is not a str")
    if node.op not in ("get_attr", "call_module"):
        return
    owner: Any = root
    for i, atom in enumerate(node.target.split(".")):
        owner = getattr(owner, atom, None)
        seen = ".".join(node.target.split(".")[:i])
        if owner is None:
            raise RuntimeError(
                f"Node {node} target {node.target} references nonexistent attribute {atom} "
                f"of {seen}"
            )
        if node.op == "call_module" and not isinstance(owner, nn.Module):
            raise RuntimeError(
                f"Node {node} target {node.target} {atom} of {seen} does not reference an nn.Module"
            )


def _recompile(doc: GraphDocument) -> None:
    """The forward generated and compiled when the module is first called (the code view
    generates the code alone: doc.code(), or fxstudio.core.edits.catchup's worker)."""
    compile_on_call(doc.graph_module)


def _finish(
    doc: GraphDocument,
    kind: ChangeKind,
    names: set[str],
    known: dict[str, Any] | None = None,
    shapes_fresh: bool = False,
    paths: set[str] | None = None,
) -> None:
    reshaped: set[str] = set()
    deferred = not shapes_fresh and doc.defer_heavy
    fresh, version = not doc.shapes_stale and doc.shape_problem is None, doc.version
    if shapes_fresh:
        doc.shapes_stale = False
    elif doc.defer_heavy:
        doc.shapes_stale = True  # see fxstudio.core.edits.catchup
    else:
        old = doc.shape_problem
        reshaped = recheck_shapes(doc, names, paths or set())
        names = names | {p[0] for p in (old, doc.shape_problem) if p}
    doc.emit(kind, names, known=known, reshaped=reshaped)
    if deferred:  # the catch-up starts from the nodes touched, not the whole graph
        note_touched(doc.graph_module, (version, doc.version), names, paths or (), fresh)


def recheck_shapes(
    doc: GraphDocument, names: set[str] | None = None, paths: set[str] | None = None
) -> set[str]:
    """Propagate shapes again -- from the nodes an edit touched (``names``, and those using
    the submodules at ``paths``) when it says which, else from those the edits made since the
    shapes were last right touched when that is known (a deferred document's,
    :func:`~fxstudio.core.graph.edited.touched_since`), else through the whole graph; a
    node that no longer fits is recorded, not refused.  Returns the nodes whose shape or dtype
    changed (their labels must be drawn again)."""
    if names is None and doc.shape_problem is None:
        since = touched_since(doc.graph_module, doc.version)
        if since is not None:
            names, paths = since
    if doc.shape_problem is not None:  # the shapes after it were cleared: all of them again
        names = None
    doc.shape_problem, changed = repropagate(
        doc.graph_module, doc.graph, doc.example_inputs, doc.source_file, names, paths or ()
    )
    return changed
