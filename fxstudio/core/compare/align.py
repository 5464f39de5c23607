"""Which node of one graph is which node of another, without a mapping from the user.

Evidence is taken strongest first; each step pairs only nodes the steps before it left:

1. ``input`` / ``output``: the placeholders in order, the outputs;
2. ``provenance``: a node a rewrite made (``meta["fxstudio_rewrite"]``) and the nodes it was
   made from -- the one of the same target (a folded conv and its conv), else all of them
   (a fused op and the nodes it replaced: one-to-many);
3. ``from_node``: torch.export's record of the node a decomposed op came from;
4. ``name``: the same name, op kind and module (a graph before and after an edit);
5. ``source``: the same line of the user's code in the same module (the fx capture's
   ``torch.relu`` and the export capture's ``aten.relu``), one-to-many where one side
   decomposed the call;
6. ``module``: the same module and op kind, in order;
7. ``structure``: the same op kind fed by nodes already paired (two different models).

What is left is *removed* (left only) or *added* (right only).  A pair is *changed* when a
rewrite made it, its op kind or shape differs, or its inputs are not each other's partners.

Example (a conv + BatchNorm fold: the BatchNorms go, the convs are paired, changed):
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
    >>> before, after = open_document("examples:resnet"), open_document("examples:resnet")
    >>> _ = rewrite_flow(after, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    >>> a = align(before, after)
    >>> a.pair_of_left("layer1_0_conv1").how, a.pair_of_left("layer1_0_conv1").status
    ('provenance', 'changed')
    >>> "layer1_0_bn1" in a.removed, a.added
    (True, [])
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxstudio.core.fxcompat import is_op_overload
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import module_path
from fxstudio.core.graph.shapes import node_shape
from fxstudio.core.results import Json

CALLS = ("call_module", "call_function", "call_method")

#: Op kinds that are one kind under another name (after :func:`op_kind`'s normalising).
KIND_ALIASES = {
    "nativebatchnormlegitnotraining": "batchnorm",
    "nativebatchnormlegit": "batchnorm",
    "nativebatchnorm": "batchnorm",
    "nativelayernorm": "layernorm",
    "maxpoolwithindices": "maxpool",
    "iadd": "add",
    "imul": "mul",
    "truediv": "div",
    "reshape": "view",
    "unsafeview": "view",
    "addmm": "linear",
    "bmm": "matmul",
    "mm": "matmul",
}


@dataclass(frozen=True)
class Pair:
    """Nodes of the left graph and the nodes of the right graph that stand for them, each
    side in graph order (its last node is the pair's output)."""

    left: tuple[str, ...]
    right: tuple[str, ...]
    how: str  # which evidence paired them (see the module docstring)
    status: str = "same"  # or "changed"
    why: str = ""  # what changed: "rewritten", "kind", "shape", "arguments"
    # removed nodes the same rewrite took away (a folded BatchNorm, with its conv's pair)
    absorbed: tuple[str, ...] = ()

    def to_json(self) -> Json:
        one = len(self.left) == 1 and len(self.right) == 1
        return {
            "left": self.left[0] if one else list(self.left),
            "right": self.right[0] if one else list(self.right),
            "how": self.how,
            "status": self.status,
            **({"why": self.why} if self.why else {}),
            **({"absorbed": list(self.absorbed)} if self.absorbed else {}),
        }


@dataclass
class Alignment:
    pairs: list[Pair] = field(default_factory=list)  # in the left graph's order
    removed: list[str] = field(default_factory=list)  # left only, in graph order
    added: list[str] = field(default_factory=list)  # right only
    _by_left: dict[str, Pair] = field(default_factory=dict, repr=False)
    _by_right: dict[str, Pair] = field(default_factory=dict, repr=False)

    def index(self) -> None:
        self._by_left = {n: p for p in self.pairs for n in p.left}
        self._by_right = {n: p for p in self.pairs for n in p.right}

    def pair_of_left(self, name: str) -> Pair | None:
        return self._by_left.get(name)

    def pair_of_right(self, name: str) -> Pair | None:
        return self._by_right.get(name)

    def changed(self) -> list[Pair]:
        return [p for p in self.pairs if p.status == "changed"]

    def coverage(self, left: GraphDocument, right: GraphDocument) -> tuple[float, float]:
        """The share of each side's call nodes that are paired."""
        shares = []
        for doc, paired in ((left, self._by_left), (right, self._by_right)):
            calls = [n.name for n in doc.graph.nodes if n.op in CALLS]
            shares.append(sum(n in paired for n in calls) / len(calls) if calls else 1.0)
        return shares[0], shares[1]

    def to_json(self) -> Json:
        return {
            "pairs": [p.to_json() for p in self.pairs],
            "removed": list(self.removed),
            "added": list(self.added),
        }

    def describe(self) -> str:
        hows: dict[str, int] = {}
        for p in self.pairs:
            hows[p.how] = hows.get(p.how, 0) + 1
        by = ", ".join(f"{n} by {h}" for h, n in sorted(hows.items(), key=lambda kv: -kv[1]))
        return (
            f"{len(self.pairs)} pairs ({by or 'none'}), {len(self.changed())} changed, "
            f"{len(self.removed)} removed, {len(self.added)} added"
        )


def op_kind(node: fx.Node, modules: dict[str, Any]) -> str:
    """What the node computes, the same word for a module, a torch function and an ATen op
    (``Conv2d``, ``F.conv2d``, ``aten.conv2d.default``: ``conv``; ``relu_``: ``relu``)."""
    if node.op == "call_module":
        name = type(modules.get(str(node.target))).__name__
    elif node.op == "call_function":
        target = node.target
        if is_op_overload(target):
            packet = getattr(target, "overloadpacket", target)
            name = str(getattr(packet, "__name__", target)).rpartition(".")[2]
        else:
            name = str(getattr(target, "__name__", target))
    elif node.op == "call_method":
        name = str(node.target)
    else:
        return node.op
    kind = re.sub(r"(?<=[a-z])[123]d", "", name.lower().replace("_", ""))
    return KIND_ALIASES.get(kind, kind)


class _Side:
    """One graph as the aligner reads it: order, kinds, modules, source lines."""

    def __init__(self, doc: GraphDocument) -> None:
        self.nodes = list(doc.graph.nodes)
        self.by_name = {n.name: n for n in self.nodes}
        self.order = {n.name: i for i, n in enumerate(self.nodes)}
        modules = dict(doc.graph_module.named_modules())
        self.kind = {n.name: op_kind(n, modules) for n in self.nodes}
        self.module = {n.name: module_path(n) for n in self.nodes}
        self.doc = doc
        self.free = {n.name for n in self.nodes}  # not paired yet

    def line(self, name: str) -> tuple[str, int] | None:
        loc = self.doc.source_location(name)
        return (loc.filename, loc.lineno) if loc is not None else None

    def free_in_order(self, ops: Iterable[str] = CALLS) -> list[str]:
        wanted = set(ops)
        return [n.name for n in self.nodes if n.name in self.free and n.op in wanted]


class _Aligner:
    def __init__(self, left: GraphDocument, right: GraphDocument) -> None:
        self.l, self.r = _Side(left), _Side(right)
        self.found: list[tuple[tuple[str, ...], tuple[str, ...], str]] = []
        self.partner: dict[str, str] = {}  # right name -> left name (the groups' last nodes)
        self.absorbed: dict[int, list[str]] = {}  # a provenance pair -> its rewrite's sources

    def pair(self, left: Iterable[str], right: Iterable[str], how: str) -> None:
        ls = tuple(sorted(left, key=self.l.order.__getitem__))
        rs = tuple(sorted(right, key=self.r.order.__getitem__))
        self.l.free.difference_update(ls)
        self.r.free.difference_update(rs)
        self.found.append((ls, rs, how))
        for r in rs:
            self.partner[r] = ls[-1]

    # --- the steps, strongest evidence first ------------------------------------------------

    def ends(self) -> None:
        ins = [self.l.free_in_order(["placeholder"]), self.r.free_in_order(["placeholder"])]
        for a, b in zip(*ins, strict=False):
            self.pair([a], [b], "input")
        outs = [self.l.free_in_order(["output"]), self.r.free_in_order(["output"])]
        for a, b in zip(*outs, strict=False):
            self.pair([a], [b], "output")

    def provenance(self, flipped: bool = False) -> None:
        made_side, from_side = (self.l, self.r) if flipped else (self.r, self.l)
        groups: dict[tuple[Any, ...], list[str]] = {}
        for n in made_side.nodes:
            made = n.meta.get("fxstudio_rewrite")
            if n.name in made_side.free and isinstance(made, dict) and made.get("from"):
                groups.setdefault((made.get("rewrite"), *made["from"]), []).append(n.name)
        for key, made_names in groups.items():
            sources = [s for s in key[1:] if s in from_side.free]
            if not sources:
                continue
            one_to_one = False
            first = len(self.found)
            for m in made_names:
                target = made_side.by_name[m].target
                same = next(
                    (
                        s
                        for s in sources
                        if s in from_side.free and from_side.by_name[s].target == target
                    ),
                    None,
                )
                if same is not None:
                    self._pair_sides([same], [m], "provenance", flipped)
                    one_to_one = True
            if one_to_one and not flipped:  # what else the rewrite took away goes with it
                self.absorbed[first] = sources
            rest = [m for m in made_names if m in made_side.free]
            if not one_to_one and rest:
                self._pair_sides(
                    [s for s in sources if s in from_side.free], rest, "provenance", flipped
                )

    def _pair_sides(self, sources: list[str], made: list[str], how: str, flipped: bool) -> None:
        if flipped:
            self.pair(made, sources, how)
        else:
            self.pair(sources, made, how)

    def from_node(self) -> None:
        groups: dict[str, list[str]] = {}
        for n in self.r.nodes:
            if n.name not in self.r.free:
                continue
            origin = next((s for s in _origins(n) if s != n.name and s in self.l.free), None)
            if origin is not None:
                groups.setdefault(origin, []).append(n.name)
        for origin, names in groups.items():
            self.pair([origin], names, "from_node")

    def names(self) -> None:
        for name in self.r.free_in_order([*CALLS, "get_attr"]):
            if name in self.l.free and (
                self.l.kind[name] == self.r.kind[name]
                and self.l.module[name] == self.r.module[name]
                and self.l.by_name[name].op == self.r.by_name[name].op
            ):
                self.pair([name], [name], "name")
        # parameters read by attribute path (the names may differ: ``p_fc_weight``)
        attrs = {str(self.l.by_name[n].target): n for n in self.l.free_in_order(["get_attr"])}
        for name in self.r.free_in_order(["get_attr"]):
            left = attrs.pop(str(self.r.by_name[name].target), None)
            if left is not None:
                self.pair([left], [name], "name")

    def buckets(self, key: Callable[[_Side, str], Any], how: str, grouped: bool) -> None:
        """Pair nodes of the same ``key`` by op kind, in order; with ``grouped``, what is left
        of a key on one side with a single node on the other becomes one group."""
        lefts: dict[Any, list[str]] = {}
        for name in self.l.free_in_order():
            k = key(self.l, name)
            if k is not None:
                lefts.setdefault(k, []).append(name)
        rights: dict[Any, list[str]] = {}
        for name in self.r.free_in_order():
            k = key(self.r, name)
            if k is not None and k in lefts:
                rights.setdefault(k, []).append(name)
        for k, rs in rights.items():
            ls = lefts[k]
            start = 0
            for a in ls:  # in order: each left node takes the next right node of its kind
                for j in range(start, len(rs)):
                    if rs[j] in self.r.free and self.r.kind[rs[j]] == self.l.kind[a]:
                        self.pair([a], [rs[j]], how)
                        start = j + 1
                        break
            left_over = [a for a in ls if a in self.l.free]
            right_over = [b for b in rs if b in self.r.free]
            if grouped and left_over and right_over and min(len(left_over), len(right_over)) == 1:
                self.pair(left_over, right_over, how)

    def structure(self) -> None:
        """Same kind, fed by the partners of one's inputs: walked in the right graph's order,
        so a node's inputs are paired before it is looked at (one pass a chain, not one a
        node); passes repeat while they find more."""
        while True:
            found = 0
            for name in self.r.free_in_order():
                ins = {
                    self.partner[i.name]
                    for i in self.r.by_name[name].all_input_nodes
                    if i.name in self.partner
                }
                if not ins:
                    continue
                kind = self.r.kind[name]
                some = self.l.by_name[min(ins, key=self.l.order.__getitem__)]
                for user in some.users:  # the candidates: free users of a partner, in order
                    if (
                        user.name in self.l.free
                        and user.op in CALLS
                        and self.l.kind[user.name] == kind
                        and {i.name for i in user.all_input_nodes if i.name not in self.l.free}
                        == ins
                    ):
                        self.pair([user.name], [name], "structure")
                        found += 1
                        break
            if not found:
                return

    # --- the result -------------------------------------------------------------------------

    def result(self) -> Alignment:
        pairs = [
            Pair(
                ls,
                rs,
                how,
                *self._status(ls, rs, how),
                tuple(s for s in self.absorbed.get(i, ()) if s in self.l.free),
            )
            for i, (ls, rs, how) in enumerate(self.found)
        ]
        pairs.sort(key=lambda p: self.l.order[p.left[0]])
        out = Alignment(
            pairs,
            [n.name for n in self.l.nodes if n.name in self.l.free],
            [n.name for n in self.r.nodes if n.name in self.r.free],
        )
        out.index()
        return out

    def _status(self, ls: tuple[str, ...], rs: tuple[str, ...], how: str) -> tuple[str, str]:
        a, b = ls[-1], rs[-1]
        na, nb = self.l.by_name[a], self.r.by_name[b]
        if how == "provenance" or any(
            self.r.by_name[r].meta.get("fxstudio_rewrite")
            != self.l.by_name[a].meta.get("fxstudio_rewrite")
            for r in rs
        ):
            return "changed", "rewritten"
        if len(ls) == len(rs) == 1 and self.l.kind[a] != self.r.kind[b]:
            return "changed", "kind"
        if node_shape(na) != node_shape(nb):
            return "changed", "shape"
        if len(ls) == len(rs) == 1 and how not in ("input", "output"):
            mine = _fed_by(na, self.l.free)
            if any(self.partner[i] not in mine for i in _fed_by(nb, self.r.free)):
                return "changed", "arguments"
        return "same", ""


def _fed_by(node: fx.Node, unpaired: set[str]) -> set[str]:
    """The nearest paired nodes upstream of ``node``'s inputs: through nodes only one side has
    (a BatchNorm folded away, an op inserted), not past them."""
    out: set[str] = set()
    todo = list(node.all_input_nodes)
    seen: set[str] = set()
    while todo:
        n = todo.pop()
        if n.name in seen:
            continue
        seen.add(n.name)
        if n.name in unpaired:
            todo.extend(n.all_input_nodes)
        else:
            out.add(n.name)
    return out


def _origins(node: fx.Node) -> list[str]:
    """The names in ``meta["from_node"]``'s chain, nearest first."""
    out: list[str] = []
    todo = list(node.meta.get("from_node") or ())
    while todo:
        source = todo.pop(0)
        name = getattr(source, "name", None)
        if isinstance(name, str):
            out.append(name)
        todo.extend(getattr(source, "from_node", None) or ())
    return out


def _source_key(side: _Side, name: str) -> tuple[str, str, int] | None:
    line = side.line(name)
    return (side.module[name], *line) if line is not None else None


def _module_key(side: _Side, name: str) -> tuple[str, str]:
    return (side.module[name], side.kind[name])


def align(left: GraphDocument, right: GraphDocument) -> Alignment:
    """Pair the nodes of ``left`` and ``right`` (see the module docstring)."""
    a = _Aligner(left, right)
    a.ends()
    a.provenance()
    a.provenance(flipped=True)
    a.from_node()
    a.names()
    a.buckets(_source_key, "source", grouped=True)
    a.buckets(_module_key, "module", grouped=False)
    a.structure()
    return a.result()
