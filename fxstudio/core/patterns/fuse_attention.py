"""``fuse-attention``: each attention :func:`~fxstudio.core.patterns.attention.find` finds
becomes one ``scaled_dot_product_attention`` call, written in the graph's own dialect
(``F.scaled_dot_product_attention`` or ``aten.scaled_dot_product_attention``).

The masks become SDPA's additive ``attn_mask``: each masking op is replayed with a zero in the
place of the scores (``where(c, s, fill)`` -> ``where(c, 0, fill)``, ``s + m`` -> ``m``), so the
masked scores are ``scale · q kᵀ + mask`` wherever the softmax can tell (``finfo.min`` plus a
score is still ``finfo.min``).  A scale applied after a mask scales the mask too.

Grouped-query attention keeps k and v unrepeated (``enable_gqa=True``); a kᵀ that is no
transpose of the last two dimensions is transposed back.  What SDPA cannot compute the same --
the weights used elsewhere, a scale computed at run time, a dropout in training mode -- is left
as it is, with the reason.

Example (the built-in transformer calls SDPA already):
    >>> from fxstudio.core.opening import open_document
    >>> [job] = attention_jobs(open_document("examples:transformer"), "")
    >>> len(job.found.matches), job.found.warnings[0][:35]
    (0, '2 attention calls are already fused')
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn
from torch.fx.node import map_aggregate

from fxstudio.core.capture import node_dtype
from fxstudio.core.document import GraphDocument
from fxstudio.core.patterns.attention import CASTS, SAME, Attention, find, kind
from fxstudio.core.patterns.constants import constant, value_of
from fxstudio.core.patterns.matcher import Found, Match
from fxstudio.core.patterns.ops import argument, dialect_of
from fxstudio.core.patterns.pattern import from_function
from fxstudio.core.patterns.replace import Job, MatchContext, Replacement, ReplacementGraph, Skip

aten = torch.ops.aten
_SDPA = (F.scaled_dot_product_attention, aten.scaled_dot_product_attention.default)  # fx, ATen


class _Build:
    """The replacement graph of one attention, written in the document's dialect."""

    def __init__(self, doc: GraphDocument, at: Attention) -> None:
        self.aten = dialect_of(doc.graph) == "export"
        self.graph = fx.Graph()
        self.inputs: list[fx.Node] = []  # graph nodes the replacement reads, in placeholder order
        self.env: dict[fx.Node, fx.Node] = {}
        for n in (at.q, at.k, at.v):
            self.take(n)

    def take(self, node: fx.Node) -> fx.Node:
        if node not in self.env:
            self.env[node] = self.graph.placeholder(f"x{len(self.inputs)}")
            self.inputs.append(node)
        return self.env[node]

    def again(self, node: fx.Node, scores: Any, at: int) -> fx.Node:
        """``node`` called once more, with ``scores`` in argument ``at`` (other tensors read)."""
        args: list[Any] = list(node.args)
        args[at] = _Stand(scores)
        args = map_aggregate(  # type: ignore[assignment]
            args,
            lambda a: (
                a.value if isinstance(a, _Stand) else self.take(a) if isinstance(a, fx.Node) else a
            ),  # type: ignore[arg-type,return-value]
        )
        kwargs = map_aggregate(
            dict(node.kwargs), lambda a: self.take(a) if isinstance(a, fx.Node) else a
        )  # type: ignore[arg-type,return-value]
        if node.op == "call_method":
            return self.graph.call_method(str(node.target), tuple(args), kwargs)  # type: ignore[arg-type]
        return self.graph.call_function(node.target, tuple(args), kwargs)  # type: ignore[arg-type]

    def call(self, fx_target: Any, aten_target: Any, *args: Any, **kwargs: Any) -> fx.Node:
        if self.aten:
            return self.graph.call_function(aten_target, args, kwargs)
        if isinstance(fx_target, str):
            return self.graph.call_method(fx_target, args, kwargs)
        return self.graph.call_function(fx_target, args, kwargs)


@dataclass(frozen=True)
class _Stand:
    """Where the scores stood, in a masking op replayed on the mask."""

    value: Any


def _replacement(doc: GraphDocument, at: Attention) -> tuple[ReplacementGraph, list[fx.Node]]:
    """The SDPA call standing for ``at``, and the graph nodes it reads (its inputs, in order);
    :class:`Skip` where SDPA cannot compute the same."""
    if at.refuse:
        raise Skip(at.refuse)
    gm = doc.graph_module
    b = _Build(doc, at)
    q, k, v = b.env[at.q], b.env[at.k], b.env[at.v]
    factor = 1.0
    shaped: list[tuple[Any, fx.Node]] = []  # (mul or truediv, a number the graph works out)
    mask: Any = None  # the additive mask, built as the scores were
    masked_at: fx.Node | None = None  # the original node whose dtype the mask has
    if kind(at.start, gm) == "baddbmm":  # beta · input + alpha · q kᵀ
        alpha, beta = argument(at.start, 4, "alpha", 1), argument(at.start, 3, "beta", 1)
        factor = _number(alpha, gm, at.start)
        beta = _number(beta, gm, at.start)
        base = argument(at.start, 0)
        if beta != 0 and isinstance(base, fx.Node):
            mask = b.take(base)
            if beta != 1:
                mask = b.call(operator.mul, aten.mul.Tensor, mask, beta)
            masked_at = at.start
    prev = at.start
    for node in at.chain[:-1]:
        fam = kind(node, gm)
        spot = next(i for i, a in enumerate(node.args) if a is prev)
        prev = node
        if fam in CASTS or fam in SAME:
            continue
        other = [a for i, a in enumerate(node.args[:2]) if i != spot]
        if fam in ("mul", "div"):
            by = other[0] if other else None
            c = constant(by, gm)
            if c is None:
                raise Skip(
                    f"{node.name} scales the scores by {_said(by)}, which is computed at run "
                    "time: SDPA takes its scale as a number"
                )
            if c == 0 and fam == "div":
                raise Skip(f"{node.name} divides the scores by zero")
            if (
                not b.aten
                and isinstance(by, fx.Node)
                and not isinstance(value_of(by, gm), torch.Tensor)
            ):
                # a number worked out from shapes as the graph runs: an fx graph runs on other
                # shapes too, so it stays worked out (torch.export fixed the shapes)
                shaped.append((operator.mul if fam == "mul" else operator.truediv, b.take(by)))
            else:
                factor = factor * c if fam == "mul" else factor / c
            if mask is not None:
                mask = b.again(node, mask, spot)
            continue
        if fam in ("add",) and mask is None:  # s + m: the mask is m
            mask = b.take(other[0]) if isinstance(other[0], fx.Node) else None
            if mask is None:  # s + a number changes nothing the softmax sees
                continue
        else:  # sub, where, masked_fill: replayed with a zero for the scores
            if mask is None:
                mask = b.call("new_zeros", aten.new_zeros.default, q, [])
            mask = b.again(node, mask, spot)
        masked_at = node
    q_dtype = node_dtype(at.q)
    if mask is not None and masked_at is not None and node_dtype(masked_at) != q_dtype:
        dtype = getattr(torch, q_dtype or "float32")
        mask = b.call("to", aten.to.dtype, mask, dtype)
    if at.transpose_k:
        k = b.call("transpose", aten.transpose.int, k, -2, -1)
    scale: Any = factor
    for op, by in shaped:
        unit = not isinstance(scale, fx.Node) and scale == 1.0 and op is operator.mul
        scale = by if unit else b.graph.call_function(op, (scale, by))
    kwargs: dict[str, Any] = {"scale": scale}
    if at.gqa:
        kwargs["enable_gqa"] = True
    b.graph.output(b.graph.call_function(_SDPA[b.aten], (q, k, v, mask), kwargs))
    return ReplacementGraph(b.graph), b.inputs


def _number(value: Any, gm: nn.Module, node: fx.Node) -> float:
    c = constant(value, gm)
    if c is None:
        raise Skip(f"{node.name} scales by {_said(value)}, computed at run time")
    return c


def _said(value: Any) -> str:
    return value.name if isinstance(value, fx.Node) else repr(value)


def _attention(q: Any, k: Any, v: Any) -> Any:
    return torch.softmax(q @ k.transpose(-2, -1), -1) @ v


class _AttentionJob(Job):
    """The attentions :func:`find` finds, each a match whose SDPA call is worked out once."""

    def __init__(self, doc: GraphDocument) -> None:
        self._made: dict[str, ReplacementGraph | Skip] = {}
        matches: list[Match] = []
        for at in find(doc):
            made: ReplacementGraph | Skip
            try:
                made, reads = _replacement(doc, at)
            except Skip as skip:
                made, reads = skip, []
            names = tuple(n.name for n in reads)
            m = Match(len(matches), at.nodes, names, (True,) * len(names), (at.nodes["output"],))
            self._made[m.anchor] = made
            matches.append(m)
        replacement = Replacement("scaled_dot_product_attention", self._build, exact=False)
        super().__init__(from_function(_attention, "attention"), replacement, Found(matches))

    def _build(self, ctx: MatchContext) -> ReplacementGraph:
        made = self._made[ctx.match.anchor]
        if isinstance(made, Skip):
            raise made
        return made


def attention_jobs(doc: GraphDocument, arg: str) -> list[Job]:
    """The ``fuse-attention`` work; says plainly when attention is fused already."""
    job = _AttentionJob(doc)
    fused = [n.name for n in doc.graph.nodes if n.op == "call_function" and n.target in _SDPA]
    if fused and job.found is not None:  # said whether or not something else is left to fuse
        job.found.warnings.append(
            f"{len(fused)} attention call{'s are' if len(fused) != 1 else ' is'} already fused "
            f"(scaled_dot_product_attention: {', '.join(fused[:3])}"
            f"{', …' if len(fused) > 3 else ''}): nothing to fuse there"
        )
    return [job]
