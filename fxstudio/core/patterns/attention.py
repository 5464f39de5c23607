"""Attention written out -- ``softmax(q @ kᵀ · scale + mask) @ v`` in the spellings real models
use -- found in symbolically traced graphs (torch functions) and ``torch.export`` ones (ATen
ops) alike, for ``fuse-attention`` (:mod:`fxstudio.core.patterns.fuse_attention`).

Found by structure rather than by a fixed pattern: from each softmax over the last dimension,
back through the ops that scale and mask the scores to the matmul of q and kᵀ, and on through
casts and pass-through dropouts to the matmul with v.  What real models put there:

- transformers' eager attention (GPT-2, BERT, LLaMA, Qwen2, ...): ``matmul -> mul / div by the
  scale -> add an additive mask (or where / masked_fill) -> softmax(dtype=float32) -> to ->
  dropout -> matmul``; LLaMA and Qwen2 repeat k and v for grouped-query attention
  (``unsqueeze -> expand -> reshape``), which SDPA's ``enable_gqa`` does itself;
- diffusers' classic ``AttnProcessor``: ``baddbmm(mask or empty, q, kᵀ, beta, alpha=scale) ->
  softmax -> bmm`` on (batch × heads, L, E) tensors, k and v of another length when it
  attends across;
- hand-written: ``q @ k.transpose(-2, -1) / math.sqrt(d)``, ``.softmax(-1)``, ``nn.Dropout``.

Example:
    >>> import torch
    >>> from fxstudio.core.graph.propagation import propagate_shapes
    >>> from fxstudio.core.graph.document import GraphDocument
    >>> class Attention(torch.nn.Module):
    ...     def forward(self, q, k, v):
    ...         return (q @ k.transpose(-2, -1) / 4.0).softmax(-1) @ v
    >>> gm = torch.fx.symbolic_trace(Attention())
    >>> x = tuple(torch.randn(1, 2, 5, 16) for _ in range(3))
    >>> propagate_shapes(gm, x)
    >>> [(at.q.name, at.k.name, at.v.name) for at in find(GraphDocument(gm, example_inputs=x))]
    [('q', 'k', 'v')]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.fxcompat import op_schema_arguments
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.shapes import node_shape
from fxstudio.core.patterns.constants import UNKNOWN, reads_metadata, value_of
from fxstudio.core.patterns.ops import (
    argument,
    family,
    is_dropout,
    passes_through,
    spelled,
    submodule,
)
from fxstudio.core.patterns.reasons import Reason

GQA = any(
    a.name == "enable_gqa"
    for a in op_schema_arguments(torch.ops.aten.scaled_dot_product_attention.default)
)  # (torch >= 2.5: SDPA repeats k and v for grouped-query attention itself)

CASTS = frozenset({"to", "_to_copy", "type", "float", "half", "bfloat16", "double", "type_as"})
SAME = frozenset({"contiguous", "clone", "alias"})  # the same values, maybe laid out anew
_CHECKS = frozenset({"_assert_tensor_metadata"})  # export's dtype checks: go with their node
_VIEWS = frozenset({"reshape", "view", "_unsafe_view"})


def kind(node: Any, gm: nn.Module | None) -> str | None:
    """A node's op family, the dialect aside (``aten.add`` and ``operator.add``: ``add``)."""
    if not isinstance(node, fx.Node):
        return None
    if node.op == "call_module" and isinstance(submodule(gm, node.target), nn.Softmax):
        return "softmax"
    fam = family(node, gm)
    return fam.removeprefix("aten.") if fam else None


@dataclass
class Attention:
    """One attention, as the replacement needs it."""

    q: fx.Node
    k: fx.Node
    v: fx.Node
    transpose_k: bool  # k is kᵀ still (it was not a transpose of the last two dimensions)
    gqa: bool
    start: fx.Node  # the q @ kᵀ (matmul, bmm or baddbmm)
    chain: list[fx.Node]  # scaling, masking and casting ops, from the start to the softmax
    nodes: dict[str, str] = field(default_factory=dict)  # label -> graph node, all replaced
    refuse: str = ""  # why SDPA cannot stand for it, if it cannot


def _rank(node: Any) -> int | None:
    return len(_shape(node)) or None


def _last_two(node: fx.Node, gm: nn.Module) -> fx.Node | None:
    """``x`` when ``node`` is ``x`` with its last two dimensions swapped (a transpose or such a
    permute), else ``None``."""
    fam, x = kind(node, gm), argument(node, 0)
    if not isinstance(x, fx.Node):
        return None
    rank = _rank(node)
    if fam == "transpose":
        dims = [argument(node, 1, "dim0"), argument(node, 2, "dim1")]
        if not all(isinstance(d, int) for d in dims):
            return None
        if sorted(dims) == [-2, -1] or (
            rank is not None and sorted(d % rank for d in dims) == [rank - 2, rank - 1]
        ):
            return x
    if fam == "permute" and rank is not None:
        perm = (
            node.args[1:] if node.op == "call_method" and len(node.args) > 2 else argument(node, 1)
        )
        swap = [*range(rank - 2), rank - 1, rank - 2]
        if isinstance(perm, (list, tuple)) and all(isinstance(p, int) for p in perm):
            return x if [int(p) % rank for p in perm] == swap else None  # type: ignore[arg-type]
    return None


def _shape(node: Any) -> tuple[int, ...]:
    """A node's recorded shape (``()`` when none is)."""
    shape = node_shape(node) if isinstance(node, fx.Node) else None
    return shape if isinstance(shape, tuple) else ()


def _repeated(node: fx.Node, gm: nn.Module) -> tuple[fx.Node, list[fx.Node]] | None:
    """``(x, nodes)`` when ``node`` is ``x`` (batch, kv heads, S, D) repeated for grouped-query
    attention -- ``x[:, :, None].expand(b, kv, rep, S, D).reshape(b, kv·rep, S, D)``, as
    transformers' ``repeat_kv`` writes it -- with the nodes that do it."""
    if kind(node, gm) not in _VIEWS:
        return None
    expand = argument(node, 0)
    if kind(expand, gm) != "expand" or len(expand.users) != 1:
        return None
    inserted = argument(expand, 0)
    if not isinstance(inserted, fx.Node) or len(inserted.users) != 1:
        return None
    x = argument(inserted, 0)
    sx, si, se, sn = (_shape(n) for n in (x, inserted, expand, node))
    if len(sx) != 4 or len(se) != 5:
        return None
    b, kv, s, d = sx
    rep = se[2]
    if si != (b, kv, 1, s, d) or se != (b, kv, rep, s, d) or sn != (b, kv * rep, s, d):
        return None
    return (x, [inserted, expand]) if rep > 1 and isinstance(x, fx.Node) else None


@dataclass(frozen=True)
class Stop:
    """Where the walk back from a softmax to q @ kᵀ stopped, and why (a refusal's words)."""

    node: fx.Node
    cause: str
    text: str
    depth: int = 0


def _scores_back(node: fx.Node, gm: nn.Module, depth: int = 0) -> list[fx.Node] | Stop:
    """The ops from the q @ kᵀ to ``node`` (the softmax's input), first to last -- or where
    the walk stopped when ``node`` is no scaled, masked (and maybe soft-capped) product of
    two tensors (the deepest stop of the ways back it tried)."""
    fam = kind(node, gm)
    if fam in ("matmul", "bmm", "baddbmm"):
        return [node]
    if depth > 12:
        return Stop(node, "too many ops before the softmax", "more than 12 ops after q @ kᵀ")
    if fam in CASTS or fam in SAME or fam == "tanh":  # (tanh: a soft-cap, told apart later)
        places = [0]
    elif fam in ("mul", "add"):
        places = [0, 1]
    elif fam in ("div", "sub", "masked_fill"):
        places = [0]
    elif fam == "where":
        places = [1, 2]
    else:
        return Stop(node, f"{fam or spelled(node)} on the scores", _unknown(node))
    stops: list[Stop] = []
    for i in places:
        x = argument(node, i)
        if not isinstance(x, fx.Node):
            continue
        if x.op in ("placeholder", "get_attr"):
            stops.append(Stop(x, "no q @ kᵀ before the softmax", _no_product(x), depth + 1))
            continue
        if _users(x) != [node]:
            others = ", ".join(u.name for u in _users(x) if u is not node)
            stops.append(
                Stop(
                    x,
                    "the scores are used elsewhere",
                    f"{x.name}, on the way to the softmax, is also read by {others}",
                    depth + 1,
                )
            )
            continue
        found = _scores_back(x, gm, depth + 1)
        if not isinstance(found, Stop):
            return [*found, node]
        stops.append(found)
    if not stops:
        return Stop(node, "no q @ kᵀ before the softmax", _no_product(node), depth)
    return max(stops, key=lambda stop: stop.depth)


def _unknown(node: fx.Node) -> str:
    return (
        f"the scores pass through {node.name} ({spelled(node)}) on the way to the softmax: "
        "fuse-attention carries only scaling, masking, casting and a tanh soft-cap there"
    )


def _no_product(node: fx.Node) -> str:
    return f"the softmax's input goes back to {node.name} ({node.op}), not to a matmul of q and kᵀ"


def _is_check(node: fx.Node) -> bool:
    return (kind(node, None) or "") in _CHECKS


def _users(node: fx.Node) -> list[fx.Node]:
    """A node's users but the dtype checks and metadata reads of it."""
    return [u for u in node.users if not reads_metadata(u) and not _is_check(u)]


@dataclass
class Survey:
    """What :func:`survey` finds: the attentions, and the softmaxes over the last dimension
    that are no attention SDPA could stand for, each with where the walk stopped."""

    attentions: list[Attention]
    refused: list[tuple[fx.Node, Stop]]  # (the softmax, why)

    @property
    def candidates(self) -> int:
        return len(self.attentions) + len(self.refused)


def find(doc: GraphDocument) -> list[Attention]:
    """Every attention in the graph (the ones the replacement must then refuse included)."""
    return survey(doc).attentions


def survey(doc: GraphDocument) -> Survey:
    """Every softmax over the last dimension, as an attention or with why it is none."""
    gm = doc.graph_module
    found = Survey([], [])
    for softmax in doc.graph.nodes:
        if kind(softmax, gm) not in ("softmax", "_softmax") or not _over_last(softmax, gm):
            continue
        scores: list[fx.Node] | Stop
        source = argument(softmax, 0)
        if not isinstance(source, fx.Node):
            continue
        scores = _scores_back(source, gm)
        if isinstance(scores, Stop):
            found.refused.append((softmax, scores))
            continue
        if _users(scores[-1]) != [softmax]:
            others = ", ".join(u.name for u in _users(scores[-1]) if u is not softmax)
            text = f"{scores[-1].name}, the softmax's input, is also read by {others}"
            found.refused.append((softmax, Stop(scores[-1], "the scores are used elsewhere", text)))
            continue
        at = _around(scores[0], [*scores[1:], softmax], gm)
        if isinstance(at, Stop):
            found.refused.append((softmax, at))
        else:
            found.attentions.append(at)
    return found


def _over_last(softmax: fx.Node, gm: nn.Module) -> bool:
    """A softmax over the last dimension (the keys)."""
    if softmax.op == "call_module":
        dim = getattr(submodule(gm, softmax.target), "dim", None)
    else:
        dim = argument(softmax, 1, "dim")
    rank = _rank(softmax)
    return isinstance(dim, int) and (dim == -1 or (rank is not None and dim == rank - 1))


def _around(start: fx.Node, chain: list[fx.Node], gm: nn.Module) -> Attention | Stop:
    """The attention whose scores ``start`` computes and ``chain`` scales, masks and
    normalises: on to the @ v, then its q, k and v and the nodes that go with it."""
    after: list[fx.Node] = []  # casts and dropouts between the softmax and the @ v
    refuse: str = ""  # why SDPA cannot stand for it (a Reason: with its cause)
    end = chain[-1]
    while len(_users(end)) == 1:
        (nxt,) = _users(end)
        if kind(nxt, gm) not in CASTS | SAME and not is_dropout(nxt, gm):
            break
        if is_dropout(nxt, gm) and not passes_through(nxt, gm):
            refuse = Reason(
                f"{nxt.name} drops attention weights (training mode)", "dropout in training mode"
            )
        after.append(nxt)
        end = nxt
    out = [u for u in _users(end) if kind(u, gm) in ("matmul", "bmm") and argument(u, 0) is end]
    if len(out) != 1:
        users = ", ".join(f"{u.name} ({spelled(u)})" for u in _users(end)) or "nothing"
        return Stop(
            end,
            "no @ v after the softmax",
            f"the weights ({end.name}) are read by {users}, not by one matmul with v",
        )
    others = [u.name for u in _users(end) if u is not out[0]]
    if others:
        refuse = Reason(
            f"the attention weights ({end.name}) are used by {', '.join(others)} too: SDPA "
            "does not give them out (a model asked to return its attentions?)",
            "the weights are used elsewhere",
        )
    first = 1 if kind(start, gm) == "baddbmm" else 0
    q, kt, v = argument(start, first), argument(start, first + 1), argument(out[0], 1)
    if not all(isinstance(t, fx.Node) for t in (q, kt, v)):
        return Stop(
            start, "q, k or v is a constant", f"{start.name} or {out[0].name} reads a constant"
        )
    replaced = [start, *chain, *after, out[0]]
    k = _last_two(kt, gm) if len(kt.users) == 1 else None
    if k is not None:
        replaced.append(kt)
    gqa = False
    if k is not None and GQA:
        rk, rv = _repeated(k, gm), _repeated(v, gm)
        if rk and rv and len(k.users) == 1 and len(v.users) == 1:
            gqa = True
            replaced += [k, v, *rk[1], *rv[1]]
            k, v = rk[0], rv[0]
    base = argument(start, 0)
    if first and argument(start, 3, "beta", 1) == 0 and isinstance(base, fx.Node):
        if len(base.users) == 1:
            replaced.append(base)  # baddbmm's input, unread when beta is 0
    replaced = _with_private_inputs(replaced, (q, k or kt, v), gm)
    outside = [
        f"{n.name} is read by {u.name}"
        for n in replaced
        if n is not out[0]
        for u in n.users
        if u not in replaced
    ]
    if outside and not refuse:
        refuse = Reason(f"{outside[0]}, outside the attention", "a value read outside it")
    labels = ["scores", *(f"step{i}" for i in range(len(chain) - 1)), "softmax"]
    labels += [f"then{i}" for i in range(len(after))] + ["output"]
    labels += [f"part{i}" for i in range(len(replaced) - len(labels))]
    nodes = {label: n.name for label, n in zip(labels, replaced, strict=True)}
    return Attention(q, k or kt, v, k is None, gqa, start, chain, nodes, refuse)


def _with_private_inputs(
    nodes: list[fx.Node], reads: tuple[fx.Node, ...], gm: nn.Module
) -> list[fx.Node]:
    """``nodes`` and what only they read among constants, metadata reads and export's dtype
    checks (``torch.full([], 8.0, dtype=w.dtype)`` for the scale goes with the attention)."""
    inside = dict.fromkeys(nodes)
    grew = True
    while grew:
        grew = False
        for n in list(inside):
            for u in n.users:
                if u not in inside and _is_check(u):
                    inside[u] = None
                    grew = True
            for a in n.all_input_nodes:
                if a in inside or a in reads or a.op in ("placeholder", "get_attr"):
                    continue
                if not set(a.users) <= set(inside):
                    continue
                if reads_metadata(a) or value_of(a, gm) is not UNKNOWN:
                    inside[a] = None
                    grew = True
        for n in list(inside):  # metadata reads that only constants inside read
            for u in n.users:
                if (
                    u not in inside
                    and reads_metadata(u)
                    and u.users
                    and set(u.users) <= set(inside)
                ):
                    inside[u] = None
                    grew = True
    return list(inside)
