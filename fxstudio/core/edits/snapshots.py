"""Work on a big graph off the editing thread: read it in one quick pass (:func:`snapshot`),
rebuild and work on the copy anywhere (:func:`rebuild`, :func:`detached`), and take the
result only if the document is still at the version it was read at (:func:`adopt`).

The live graph is never read from two threads at once: :func:`snapshot` holds the nodes'
fields (``args`` are immutable tuples), which is all a copy needs.  Their ``meta`` dicts are
held as they are and copied where the copy is made (:func:`rebuild`): one copy of a plain dict
is atomic under the GIL, and a dict the editing thread changed meanwhile (shapes caught up)
belongs to a later version, whose result is never taken (:func:`adopt`).
A rewrite made on a detached copy becomes one edit of the document -- :class:`AdoptGraph`,
which swaps the rewritten graph in (no copy of it) and makes the submodule changes the
rewrite made -- undone and redone like any other.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core import edits
    >>> doc = open_document("examples:negrelu")
    >>> snap = snapshot(doc)
    >>> work = detached(snap)  # in a worker thread
    >>> done = edits.set_target(work, "relu", "torch.tanh")
    >>> edit = adopt(doc, snap, work, done)  # back on the editing thread
    >>> "tanh" in doc.code(), edit.label
    (True, 'Change relu to torch.tanh')
    >>> edit.undo(); "tanh" in doc.code()
    False
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx
from torch import nn
from torch.fx.node import map_arg

from fxstudio.core.edits.engine import Edit, commit, recheck_shapes
from fxstudio.core.edits.steps import Step
from fxstudio.core.errors import EditError
from fxstudio.core.fxcompat import code_generator, set_code_generator, set_graph, set_node_inputs
from fxstudio.core.fxcompat.modules import child_module, place_attribute
from fxstudio.core.graph.document import ROW_MEMO, VALUES, GraphDocument
from fxstudio.core.graph.graphviews import RowMemo, code_of, line_map, make_rows, module_tree_of
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.process import collector

__all__ = [
    "AdoptGraph",
    "Snapshot",
    "Stale",
    "adopt",
    "detached",
    "propagated",
    "rebuild",
    "snapshot",
    "views",
]


@dataclass(frozen=True)
class Snapshot:
    """The document's graph at one version, read in one pass."""

    version: int
    #: (node, op, name, target, args, kwargs, type, meta) per node, in graph order
    nodes: list[tuple[Any, ...]]
    codegen: Any
    module: fx.GraphModule  # the live one: its submodules and weights
    example_inputs: tuple[Any, ...]
    request: OpenRequest
    source_file: str | None
    shapes: bool  # an edit left the shapes stale
    #: what each get_attr and call_module target was (a submodule, a weight) at that version;
    #: None when not read (``snapshot(modules=False)``)
    attributes: dict[str, Any] | None = field(default_factory=dict)
    training: bool = False
    checkpoint: str | None = None  # the folder its weights come from (hf:FOLDER)
    values: dict[str, Any] = field(default_factory=dict)  # kept from runs of this version
    row_memo: RowMemo = field(default_factory=dict)  # the rows the document last made
    weights: bool | None = None  # whether it holds its weights, when known (not walked here)


def snapshot(doc: GraphDocument, held: bool = False, modules: bool = True) -> Snapshot:
    """Read the graph (about 1 microsecond a node), on the thread that edits it.  ``held``:
    kept while the document goes on (a baseline to compare with), so the ``meta`` dicts are
    copied now, not as later shapes leave them.  ``modules``: read what its targets name too
    (a walk of every submodule, two thirds of the read at 20,000 of them), which a
    :func:`detached` copy needs and the graph's views and shapes do not."""
    gm = doc.graph_module
    nodes = [(n, n.op, n.name, n.target, n.args, n.kwargs, n.type, n.meta) for n in gm.graph.nodes]
    if held:
        nodes = [(*fields, dict(meta)) for *fields, meta in nodes]
    attributes = _attributes(gm, nodes) if modules else None
    return Snapshot(
        doc.version,
        nodes,
        code_generator(gm.graph),  # edits never change how code is generated
        gm,
        doc.example_inputs,
        doc.request,
        doc.source_file,
        doc.shapes_stale,
        attributes,
        gm.training,
        doc.checkpoint,
        doc.kept_values(),
        doc.row_memo,  # (never changed: the document's next rows make a new one)
        doc.weights_known(),
    )


def _attributes(gm: fx.GraphModule, nodes: list[tuple[Any, ...]]) -> dict[str, Any]:
    targets = {n[3] for n in nodes if n[1] in ("get_attr", "call_module")}
    modules = dict(gm.named_modules(remove_duplicate=False))  # one walk, not a getattr per part
    return {t: _attribute(modules, t) for t in targets}


def _attribute(modules: dict[str, Any], target: str) -> Any:
    """A submodule, or a weight (or other attribute) of the submodule that holds it."""
    if target in modules:
        return modules[target]
    owner, _, name = target.rpartition(".")
    if owner in modules:
        return getattr(modules[owner], name)
    value = modules[""]  # held by a plain object, not a submodule: the chain from the root
    for part in target.split("."):
        value = getattr(value, part)
    return value


def rebuild(snap: Snapshot) -> fx.Graph:
    """A new graph with the snapshot's nodes (any thread)."""
    graph = fx.Graph()
    set_code_generator(graph, snap.codegen)
    env: dict[fx.Node, fx.Node] = {}
    get = env.__getitem__
    for node, op, name, target, args, kwargs, type_, meta in snap.nodes:
        # made bare, then given its arguments: create_node walks a new node's arguments with
        # pytree for raw SymInts (a graph's own nodes have none): a third of a 20,000-node copy
        new = graph.create_node(op, target, None, None, name, type_)
        if new.name != name:  # never seen: fx keeps a valid, unique name as it is
            raise RuntimeError(f"the snapshot renamed '{name}' to '{new.name}'")
        # its arguments in one step and its meta filled in, not set: each attribute set goes
        # through the graph's lookup table (20,000 nodes: 0.18 -> 0.12 s, medians of 7)
        if args or kwargs:
            set_node_inputs(new, map_arg(args, get), map_arg(kwargs, get))
        new.meta.update(meta)  # the copy's own dict: a worker may change it
        env[node] = new
    return graph


def detached(snap: Snapshot) -> GraphDocument:
    """A document over a copy of the snapshot's graph and the submodules and weights it had
    then (shared, not copied), for a worker: what it does there never reaches the document
    until :func:`adopt` brings it, and edits made meanwhile never reach it.

    Its forward is not compiled (``doc.compiled`` is False, and edits leave it so): Python's
    ``compile()`` of a 20,000-line forward holds the GIL for a second, freezing the window.
    It is compiled when it is first called (:func:`~fxstudio.core.fxcompat.compile_on_call`),
    or run node by node without (the rewrite check does,
    :func:`fxstudio.core.patterns.check.run_graph`)."""
    if snap.attributes is None:
        raise ValueError("a snapshot read without its modules cannot be detached")
    with collector.sparing(len(snap.nodes)):  # (a node and its meta per node, modules)
        gm = _module_with(snap.attributes)
        set_graph(gm, rebuild(snap), recompile=False)
    gm.training = snap.training  # (not train(): the submodules are shared)
    doc = GraphDocument(gm, snap.request, snap.example_inputs, source_file=snap.source_file)
    doc.defer_heavy = True  # edits do not compile it, nor propagate shapes (see propagated)
    doc.shapes_stale = snap.shapes
    doc.checkpoint = snap.checkpoint
    doc.row_memo = snap.row_memo
    doc.know_weights(snap.weights)  # (the same tensors)
    for key, values in snap.values.items():  # (the same graph, the same weights)
        doc.keep_values(key, values)
    return doc


def _module_with(attributes: dict[str, Any]) -> fx.GraphModule:
    """An empty GraphModule holding ``attributes`` (qualified name -> submodule or tensor),
    with plain modules on the way, as ``fx.GraphModule(dict, graph)`` builds it -- without
    compiling a graph."""
    gm = fx.GraphModule(nn.Module(), fx.Graph())
    # the modules on the way, by path: a walk of getattr per part cost 0.1 s at 13,000 targets
    made: dict[str, nn.Module] = {"": gm}
    fresh: set[int] = {id(gm)}  # those made here: empty but for what is placed in them below
    for target in sorted(attributes, key=lambda t: t.count(".")):
        at, _, name = target.rpartition(".")
        owner = made.get(at)
        if owner is None:
            owner, walked = gm, ""
            for part in at.split("."):
                walked = f"{walked}.{part}" if walked else part
                child = made.get(walked)
                if child is None:
                    # (a module made here holds its children in its dict alone)
                    mine = id(owner) in fresh
                    child = child_module(owner, part) if mine else getattr(owner, part, None)
                    if not isinstance(child, nn.Module):
                        child = nn.Module()
                        place_attribute(owner, part, child)
                        fresh.add(id(child))
                    made[walked] = child
                owner = child
        value = attributes[target]
        if isinstance(value, nn.Module):
            made.setdefault(target, value)
        if id(owner) in fresh:
            place_attribute(owner, name, value)
        elif getattr(owner, name, None) is not value:  # (else inside a submodule placed: shared)
            place_attribute(owner, name, value, checked=True)
    return gm


def propagated(doc: GraphDocument) -> GraphDocument:
    """Shapes propagated through a detached document's graph after its edits (node by node:
    nothing compiled), so that the graph is adopted with its shapes."""
    if doc.example_inputs:
        recheck_shapes(doc)
    doc.shapes_stale = False
    return doc


class Stale(EditError):
    """The document changed while a worker worked on its snapshot: nothing was taken."""


@dataclass
class AdoptGraph(Step):
    """The graph a worker made, in place of the document's, and the submodule changes that
    came with it.  Both graphs are kept (not copied), with the views made of each (code,
    rows, module tree) and their shapes: undo and redo swap them and nothing is made again."""

    graph: fx.Graph
    module_steps: list[Step]
    names: set[str] = field(default_factory=set)
    views: dict[str, Any] = field(default_factory=dict)  # of ``graph``
    problem: tuple[str, str] | None = None  # where ``graph``'s shapes stopped fitting
    old: fx.Graph | None = None
    old_views: dict[str, Any] = field(default_factory=dict)
    old_problem: tuple[str, str] | None = None
    prechecked = True  # the worker's edit checked these nodes already
    shapes_fresh = True  # each graph keeps the shapes it had

    def apply(self, doc: GraphDocument) -> None:
        for step in self.module_steps:
            step.apply(doc)
        self.old, self.old_views = doc.graph, doc.cached_views()
        self.old_problem, doc.shape_problem = doc.shape_problem, self.problem
        set_graph(doc.graph_module, self.graph, recompile=False)  # the engine compiles
        doc.drop_caches()

    def inverse(self) -> Step:
        assert self.old is not None
        undo = [s.inverse() for s in reversed(self.module_steps)]
        return AdoptGraph(self.old, undo, self.names, self.old_views, self.old_problem)

    def touched(self) -> set[str]:
        return set(self.names)

    def known_views(self) -> dict[str, Any]:
        return self.views


def views(doc: GraphDocument) -> dict[str, Any]:
    """The views of a (detached) document's graph, made where it is: its code, line map,
    table rows and module tree -- so that the editing thread need not make them again --
    and the values kept from runs of it (a check's)."""
    graph = doc.graph
    with collector.sparing(len(doc)):  # (thousands of rows and lines)
        code = code_of(graph) if not doc.compiled else doc.code()
        rows, memo = make_rows(graph.nodes, doc.row_memo)
        return {
            "code": code,
            "lines": line_map(code, graph),
            "rows": rows,
            ROW_MEMO: memo,
            "tree": module_tree_of(graph),
            **{VALUES + key: v for key, v in doc.kept_values().items()},
        }


def adopt(
    doc: GraphDocument,
    snap: Snapshot,
    work: GraphDocument,
    edit: Edit,
    known: dict[str, Any] | None = None,
) -> Edit:
    """Make ``edit`` -- done by a worker on ``work``, detached from ``doc`` at ``snap`` -- one
    edit of ``doc``, recorded in its history as the worker's was.  Raises :class:`Stale` when
    ``doc`` changed since the snapshot (it then stays as it is).  ``known``: the new graph's
    :func:`views`, made in the worker."""
    if snap.module is not doc.graph_module or doc.version != snap.version:
        raise Stale(
            "The graph changed while this ran on a copy of it, so its result was not applied: "
            "run it again on the graph as it is now."
        )
    module_steps = [s for s in edit.steps if s.changes_modules]
    views = known or {}
    step = AdoptGraph(work.graph, module_steps, set(edit.names), views, work.shape_problem)
    step.shapes_fresh = not work.shapes_stale
    return commit(doc, edit.label, [step], edit.kind, edit.record)
