"""The static memory estimate of a graph: where the bytes go, without running the model.

Each node's output either allocates a new storage or holds one that exists (a view, an
in-place op, an alias: 0 bytes -- :mod:`fxstudio.core.memory.storages` says which, on fake
tensors, at any size).  A storage is freed after the last node that reads any value holding
it, as the generated code's ``x = None`` lines free it; the graph's inputs (held by the
caller) and its outputs live to the end.  Parameters and buffers are counted apart
(``params_bytes``, each shared tensor once), never in the activations.

While a node runs, what was live before it and its new output are live together: the
*peak* is the largest of these, and the node where it happens the *peak node*.  After it
runs, the values it read for the last time are freed: ``live_bytes``, the timeline a plot
draws.  (What a kernel allocates inside itself and frees before it returns -- a leaf
module's own temporaries, a library's workspace -- is not in the graph and not counted.)

Example:
    >>> import torch
    >>> gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU()))
    >>> est = estimate(gm, (torch.empty(2, 4),))
    >>> est.params_bytes, est.peak_bytes, est.peak_node
    (160, 160, '_1')
    >>> [(n.name, n.bytes, n.live_bytes) for n in est.nodes]
    [('input_1', 32, 32), ('_0', 64, 96), ('_1', 64, 96)]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch.fx as fx
from torch import nn

from fxstudio.core.graph.graphviews import format_target, module_path
from fxstudio.core.memory.storages import Held, held
from fxstudio.core.process import collector
from fxstudio.core.results import Json


@dataclass(frozen=True)
class NodeBytes:
    """One node: the bytes its output allocates (0 for a view, an in-place op, an alias --
    then ``alias_of`` names the node that allocated what it holds), the activation bytes live
    after it runs, and the node after which what it allocated is freed (None: kept to the
    end, an input or an output, or nothing allocated)."""

    name: str
    op: str
    target: str
    module: str
    bytes: int
    live_bytes: int
    alias_of: str | None = None
    freed_after: str | None = None


@dataclass(frozen=True)
class ModuleBytes:
    """One module (by path): the bytes its nodes allocate, its parameters' and buffers'
    bytes (its submodules' included, shared ones once), and the most activation bytes live
    while one of its nodes runs."""

    path: str
    bytes: int
    params_bytes: int
    peak_live_bytes: int


@dataclass(frozen=True)
class MemoryEstimate:
    """The whole graph: parameters and buffers (``params_bytes`` includes ``buffers_bytes``),
    the peak of live activation bytes (inputs and every value the graph makes) and where it
    is, what is live there, each node and each module.  ``how``: which way each node's
    storages were worked out (:func:`~fxstudio.core.memory.storages.held`)."""

    params_bytes: int
    buffers_bytes: int
    peak_bytes: int
    peak_node: str
    live_at_peak: tuple[str, ...]
    nodes: tuple[NodeBytes, ...]
    modules: tuple[ModuleBytes, ...]
    how: str = ""

    def node(self, name: str) -> NodeBytes | None:
        for n in self.nodes:
            if n.name == name:
                return n
        return None

    def module(self, path: str) -> ModuleBytes | None:
        for m in self.modules:
            if m.path == path:
                return m
        return None

    def to_json(self) -> Json:
        return {
            "params_bytes": self.params_bytes,
            "buffers_bytes": self.buffers_bytes,
            "peak_bytes": self.peak_bytes,
            "peak_node": self.peak_node,
            "live_at_peak": list(self.live_at_peak),
            "how": self.how,
            "nodes": [asdict(n) for n in self.nodes],
            "modules": [asdict(m) for m in self.modules],
        }


def estimate(
    gm: fx.GraphModule,
    inputs: tuple[Any, ...],
    graph: fx.Graph | None = None,
    recorded: bool = True,
) -> MemoryEstimate:
    """The memory estimate of ``graph`` (default ``gm.graph``) on ``inputs`` (real, fake or
    meta tensors: only shapes and dtypes are read).  ``recorded``: the nodes' recorded values
    (``meta["val"]``) are for these inputs and may be read instead of running anything.
    A graph that does not run on ``inputs`` raises :class:`~fxstudio.core.errors.CaptureError`
    naming the node."""
    graph = gm.graph if graph is None else graph
    with collector.sparing(len(graph.nodes)):  # (a big graph: no collector sweep midway)
        facts = held(gm, graph, inputs, recorded)
        params, buffers, owned = _state_bytes(gm)
        return _liveness(graph, facts, params, buffers, owned)


def _liveness(
    graph: fx.Graph, facts: Held, params: int, buffers: int, owned: dict[str, int]
) -> MemoryEstimate:
    order = [n for n in graph.nodes if n.op != "output"]
    index = {n: i for i, n in enumerate(order)}
    end_of_graph = len(order)
    first: dict[int, int] = {}  # storage -> the node that allocated it
    end: dict[int, int] = {}  # storage -> the last node after which it is still read
    for i, node in enumerate(order):
        if node.op == "placeholder":
            last = end_of_graph  # the caller holds the inputs
        else:
            uses = [index.get(u, end_of_graph) for u in node.users]
            last = max(uses) if uses else i
        for token in facts.tokens.get(node, ()):
            if token in facts.state:
                continue
            first.setdefault(token, i)
            end[token] = max(end.get(token, -1), last)
    freed: dict[int, list[int]] = {}
    for token, e in end.items():
        freed.setdefault(e, []).append(token)

    live = peak = 0
    peak_at = -1
    rows: list[tuple[int, int, int]] = []  # (bytes, live after, live while it runs)
    for i, node in enumerate(order):
        new = sum(facts.nbytes[t] for t in facts.tokens.get(node, ()) if first.get(t) == i)
        running = live + new
        if running > peak or peak_at < 0:
            peak, peak_at = running, i
        live = running - sum(facts.nbytes[t] for t in freed.get(i, ()))
        rows.append((new, live, running))

    nodes = []
    for i, node in enumerate(order):
        mine = [t for t in facts.tokens.get(node, ()) if first.get(t) == i]
        others = [t for t in facts.tokens.get(node, ()) if t not in mine]
        alias = None
        if not mine and others:
            alias = order[first[others[0]]].name if others[0] in first else _state_owner(node)
        last = max((end[t] for t in mine), default=end_of_graph)
        nodes.append(
            NodeBytes(
                node.name,
                node.op,
                format_target(node),
                module_path(node),
                rows[i][0],
                rows[i][1],
                alias,
                order[last].name if last < end_of_graph else None,
            )
        )
    live_at_peak = tuple(
        order[first[t]].name
        for t in sorted(first, key=lambda t: first[t])
        if peak_at >= 0 and first[t] <= peak_at <= end[t]
    )
    return MemoryEstimate(
        params,
        buffers,
        peak,
        order[peak_at].name if peak_at >= 0 else "",
        tuple(dict.fromkeys(live_at_peak)),
        tuple(nodes),
        _modules(nodes, rows, owned),
        facts.how,
    )


def _state_owner(node: fx.Node) -> str | None:
    """The attribute a node reading a parameter holds (a get_attr node: itself, no alias)."""
    for arg in node.all_input_nodes:
        if arg.op == "get_attr":
            return arg.name
    return None


def _ancestors(path: str) -> list[str]:
    parts = path.split(".") if path else []
    return [".".join(parts[: k + 1]) for k in range(len(parts))]


def _modules(
    nodes: list[NodeBytes], rows: list[tuple[int, int, int]], owned: dict[str, int]
) -> tuple[ModuleBytes, ...]:
    allocated: dict[str, int] = {}
    peaks: dict[str, int] = {}
    for node, (new, _, running) in zip(nodes, rows, strict=True):
        for path in _ancestors(node.module):
            allocated[path] = allocated.get(path, 0) + new
            peaks[path] = max(peaks.get(path, 0), running)
    return tuple(
        ModuleBytes(path, allocated[path], owned.get(path, 0), peaks[path]) for path in allocated
    )


def _state_bytes(gm: nn.Module) -> tuple[int, int, dict[str, int]]:
    """Bytes of the parameters and buffers (each storage once: tied weights count once), of
    the buffers alone, and under each module path (its submodules' included)."""
    seen: set[int] = set()
    keep = []
    params = buffers = 0
    owned: dict[str, int] = {}
    for kind, named in (
        ("param", gm.named_parameters(remove_duplicate=False)),
        ("buffer", gm.named_buffers(remove_duplicate=False)),
    ):
        for name, t in named:
            storage = t.untyped_storage()
            if id(storage) in seen:
                continue
            seen.add(id(storage))
            keep.append(storage)
            size = int(storage.nbytes())
            params += size
            if kind == "buffer":
                buffers += size
            for path in _ancestors(name.rpartition(".")[0]):
                owned[path] = owned.get(path, 0) + size
    return params, buffers, owned
