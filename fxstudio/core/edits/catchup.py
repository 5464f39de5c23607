"""Bring a big graph's code, table rows and shapes up to date after edits, off the GUI thread.

On a big graph an edit changes the graph and is drawn at once; generating the ``forward``
code (about 0.1 s at 10,000 nodes) and propagating shapes (0.2 s) come after.  They run on a
*snapshot* (:mod:`fxstudio.core.edits.snapshots`): the nodes' fields are read in one quick pass, a
copy of the graph is built from them and worked on anywhere (``compute``), and the results
are taken only if the document has not changed since (``apply``, on the editing thread
again).  The live graph is never read from two threads at once.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core import edits
    >>> doc = open_document("examples:negrelu")
    >>> doc.defer_heavy = True
    >>> _ = edits.set_target(doc, "relu", "torch.tanh")
    >>> doc.code_ready(), doc.shapes_stale
    (False, True)
    >>> from fxstudio.core.edits.snapshots import snapshot
    >>> result = compute(snapshot(doc, modules=False))  # in a worker thread, while the user goes on
    >>> apply(doc, result), doc.code_ready(), doc.shapes_stale
    (True, True, False)
    >>> "tanh" in doc.code()
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxstudio.core.edits.snapshots import Snapshot, rebuild, snapshot
from fxstudio.core.fxcompat import dismantle
from fxstudio.core.graph.document import ROW_MEMO, ChangeKind, GraphDocument
from fxstudio.core.graph.edited import touched_since
from fxstudio.core.graph.graphviews import (
    ModuleGroup,
    NodeRow,
    RowMemo,
    code_of,
    line_map,
    make_rows,
    module_tree_of,
)
from fxstudio.core.graph.propagation import repropagate
from fxstudio.core.process import collector

_NO_VALUE = object()


@dataclass
class CatchUp:
    """The views of the graph at ``version``: code, line map, rows, module tree, shapes."""

    version: int
    code: str
    lines: dict[str, int]
    rows: list[NodeRow]
    tree: ModuleGroup
    shapes: bool
    vals: dict[str, Any] = field(default_factory=dict)  # node name -> meta["val"]
    problem: tuple[str, str] | None = None
    changed: set[str] = field(default_factory=set)  # nodes whose shape or dtype text changed
    row_memo: RowMemo = field(default_factory=dict)  # (graphviews.make_rows)


def needed(doc: GraphDocument) -> bool:
    """Whether edits left work for :func:`compute`."""
    return not doc.code_ready() or doc.shapes_stale


def compute(snap: Snapshot) -> CatchUp:
    """Code, rows and (when stale) shapes of the snapshot's graph; safe in any thread."""
    with collector.sparing(len(snap.nodes)):  # (thousands of rows and lines)
        graph = rebuild(snap)
        try:
            return _compute(snap, graph)
        finally:  # 100,000 objects at 20,000 nodes, freed now rather than in an idle collection
            dismantle(graph)


def _compute(snap: Snapshot, graph: fx.Graph) -> CatchUp:
    code = code_of(graph)
    lines, tree = line_map(code, graph), module_tree_of(graph)
    if not snap.shapes:
        rows, memo = make_rows(graph.nodes, snap.row_memo)
        return CatchUp(snap.version, code, lines, rows, tree, False, row_memo=memo)
    # from the nodes the edits since the shapes were last right touched, when known
    since = touched_since(snap.module, snap.version)
    names, paths = since if since is not None else (None, ())
    problem, changed = repropagate(
        snap.module, graph, snap.example_inputs, snap.source_file, names, paths
    )
    vals = {n.name: n.meta["val"] for n in graph.nodes if "val" in n.meta}
    rows, memo = make_rows(graph.nodes, snap.row_memo)  # (the copy shares the values kept)
    return CatchUp(snap.version, code, lines, rows, tree, True, vals, problem, changed, memo)


def apply(doc: GraphDocument, result: CatchUp) -> bool:
    """Take ``result`` if the document is still at its version (then one ``SHAPES_CHANGED``
    event tells the views); False, changing nothing, if it has moved on."""
    if result.version != doc.version:
        return False
    names: set[str] = set()
    if result.shapes:
        for name, node in doc.node_index().items():
            val = result.vals.get(name, _NO_VALUE)
            if val is _NO_VALUE:
                node.meta.pop("val", None)
            else:
                node.meta["val"] = val
        names = {p[0] for p in (doc.shape_problem, result.problem) if p}
        doc.shape_problem = result.problem
        doc.shapes_stale = False
    known = {
        "code": result.code,
        "lines": result.lines,
        "rows": result.rows,
        "tree": result.tree,
        ROW_MEMO: result.row_memo,
    }
    doc.emit(ChangeKind.SHAPES_CHANGED, names, known=known, reshaped=result.changed)
    return True


def catch_up(doc: GraphDocument) -> bool:
    """All of it at once, on this thread.  False when there was nothing to do."""
    if not needed(doc):
        return False
    return apply(doc, compute(snapshot(doc, modules=False)))
