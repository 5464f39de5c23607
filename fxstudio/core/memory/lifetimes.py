"""How long each storage of a traced training step lives: the forward's or the backward's
graph (AOTAutograd's, each node's value a fake tensor) read node by node -- a node whose value
shares a storage made before (a view, an alias) makes nothing, a storage is freed after the
last user of every node holding it, the graph's outputs live to its end -- and, for eager
autograd's backward, each formula's temporaries to the formula's end.

Part of :mod:`fxstudio.core.memory.training`, which puts a step together from two walks.

Example:
    >>> import torch
    >>> from torch.fx.experimental.proxy_tensor import make_fx
    >>> gm = make_fx(lambda x: (x + 1).t().relu() * 2, tracing_mode="fake")(torch.empty(4, 8))
    >>> w = walk(gm.graph, held={}, kinds={}, counted=True)
    >>> w.made, w.alias  # float32 4x8: 128 bytes; the transpose is a view
    ({'x_1': 128, 'add': 128, 'relu': 128, 'mul': 128}, {'t': 'add'})
    >>> w.live(during=True), w.live(during=False)  # x freed after add, add after relu
    ([128, 256, 128, 256, 256, 128], [128, 128, 128, 128, 128, 128])
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

from fxstudio.core.fxcompat import tree_leaves
from fxstudio.core.fxcompat.autograd import sequence_number
from fxstudio.core.graph.graphviews import format_target
from fxstudio.core.memory.estimate import NodeBytes

__all__ = ["Block", "Walk", "formula_ends", "storage_bytes", "storages", "unique", "walk"]


def storages(value: Any) -> list[Any]:
    return [t.untyped_storage() for t in tree_leaves(value) if isinstance(t, torch.Tensor)]


@dataclass
class Block:
    """One storage a graph makes: its bytes, the node that made it, the nodes it is live
    from and to (freed after ``end``), and what it is (``activation``, ``saved``,
    ``gradient``)."""

    nbytes: int
    owner: str
    start: int
    end: int
    kind: str = "activation"


@dataclass
class Walk:
    """A graph's storages over its nodes (execution order)."""

    nodes: list[fx.Node]
    blocks: list[Block]
    made: dict[str, int]
    alias: dict[str, str]

    def live(self, during: bool) -> list[int]:
        """Bytes live at each node: while it runs (its inputs not yet freed, its output
        made) or after it (the values it read last freed)."""
        n = len(self.nodes)
        delta = [0] * (n + 2)
        for b in self.blocks:
            delta[b.start] += b.nbytes
            delta[min(b.end + (1 if during else 0), n + 1)] -= b.nbytes
        out, total = [], 0
        for i in range(n):
            total += delta[i]
            out.append(total)
        return out

    def at(self, i: int) -> list[Block]:
        return [b for b in self.blocks if b.start <= i <= b.end]

    def rows(self, module: Any) -> tuple[NodeBytes, ...]:
        """Each node's :class:`NodeBytes` (``live_bytes``: after it), ``module(node)`` its
        module's path."""
        freed = {b.owner: self.nodes[b.end].name for b in self.blocks if b.end < len(self.nodes)}
        after = self.live(during=False)
        return tuple(
            NodeBytes(
                node.name,
                node.op,
                format_target(node),
                module(node),
                self.made.get(node.name, 0),
                after[i],
                self.alias.get(node.name),
                freed.get(node.name),
            )
            for i, node in enumerate(self.nodes)
            if node.op != "output"
        )


def walk(
    graph: fx.Graph,
    held: dict[int, str],
    kinds: dict[str, str],
    counted: bool,
    formulas: bool = False,
) -> Walk:
    """The storages ``graph`` makes, from its nodes' fake values: a node whose value shares a
    storage made before (a view, an alias) makes nothing; a storage lives until the last
    user of every node holding it -- to the end for the graph's outputs, whose storages are
    of the kind ``kinds`` names (``saved``, ``gradient``).  Storages in ``held`` (by id ->
    the name of what holds them: parameters, inputs) are not counted; placeholders are
    (the backward's saved values and the loss's gradient) when ``counted``; with
    ``formulas``, values live to the end of their backward formula
    (:func:`formula_ends`)."""
    nodes = list(graph.nodes)
    index = {n: i for i, n in enumerate(nodes)}
    end_of_graph = len(nodes)
    (output,) = graph.find_nodes(op="output")
    outputs = {a for a in tree_leaves(output.args) if isinstance(a, fx.Node)}
    by_storage: dict[int, Block] = {}
    keep: list[Any] = []  # the storages, alive while their ids key the table
    made: dict[str, int] = {}
    alias: dict[str, str] = {}
    for node in nodes:
        if node.op == "output" or (node.op == "placeholder" and not counted):
            continue
        last = max((index[u] for u in node.users), default=index[node])
        if node in outputs:
            last = end_of_graph
        for storage in storages(node.meta.get("val")):
            key = id(storage)
            if key in held:
                if held[key] != node.name:
                    alias.setdefault(node.name, held[key])
                continue
            block = by_storage.get(key)
            if block is None:
                keep.append(storage)
                block = by_storage[key] = Block(storage.nbytes(), node.name, index[node], last)
                made[node.name] = made.get(node.name, 0) + block.nbytes
            else:
                block.end = max(block.end, last)
                if block.owner != node.name:
                    alias.setdefault(node.name, block.owner)
            if node.name in kinds:
                block.kind = kinds[node.name]
    blocks = list(by_storage.values())
    if formulas:
        formula_ends(nodes, blocks)
    return Walk(nodes, blocks, made, alias)


def formula_ends(nodes: list[fx.Node], blocks: list[Block]) -> None:
    """Eager autograd runs each autograd node's backward formula as one call: its C++
    temporaries live to the end of their expression (``grad * (2 * x.pow(1))`` holds all
    three), and the values it reads -- the gradient coming in, the tensors saved for it --
    are let go only after the call.  So a value last used inside one formula -- the run of
    backward nodes of one autograd node (sequence number) -- is freed at the formula's end."""
    end = list(range(len(nodes)))
    for i in range(len(nodes) - 2, -1, -1):
        seq = sequence_number(nodes[i])
        if seq is not None and seq == sequence_number(nodes[i + 1]):
            end[i] = end[i + 1]
    for b in blocks:
        if b.end < len(nodes):
            b.end = end[b.end]


def unique(tensors: Iterable[torch.Tensor]) -> list[torch.Tensor]:
    """``tensors`` each once (a tied weight is one tensor), in order."""
    seen: set[int] = set()
    out = []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def storage_bytes(value: Any) -> int:
    """The bytes of the storages ``value``'s tensors hold, each once."""
    seen: dict[int, int] = {}
    keep = []
    for t in tree_leaves(value):
        if isinstance(t, torch.Tensor):
            storage = t.untyped_storage()
            keep.append(storage)
            seen[id(storage)] = storage.nbytes()
    return sum(seen.values())
