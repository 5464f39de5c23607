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
    >>> from fxstudio.core.sessions.documents import open_document
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

from fxstudio.core.errors import LoadError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.shapes import node_dtype, node_shape
from fxstudio.core.model.modelspec import parse_spec
from fxstudio.core.patterns.attention import CASTS, SAME, Attention, kind, survey
from fxstudio.core.patterns.constants import constant, value_of
from fxstudio.core.patterns.found import Found, Match, Skipped
from fxstudio.core.patterns.making import from_function
from fxstudio.core.patterns.ops import argument, dialect_of
from fxstudio.core.patterns.pattern import PatternError
from fxstudio.core.patterns.reasons import cause_of, refusal
from fxstudio.core.patterns.replacements import (
    Job,
    MatchContext,
    Replacement,
    ReplacementGraph,
    Skip,
)
from fxstudio.core.patterns.softcap import FLEX, PARTIAL, SoftCap, find_softcap, score_mod

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
        args = map_aggregate(
            args,
            lambda a: (
                a.value if isinstance(a, _Stand) else self.take(a) if isinstance(a, fx.Node) else a
            ),
        )
        kwargs = map_aggregate(
            dict(node.kwargs), lambda a: self.take(a) if isinstance(a, fx.Node) else a
        )
        if node.op == "call_method":
            return self.graph.call_method(str(node.target), tuple(args), kwargs)
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


def _replacement(
    doc: GraphDocument, at: Attention, flex: _Flex | None
) -> tuple[ReplacementGraph, list[fx.Node]]:
    """The SDPA call standing for ``at`` -- or, for a soft-capped one when ``flex`` is asked
    for, the flex_attention call -- and the graph nodes it reads (its inputs, in order);
    :class:`Skip` where neither can compute the same."""
    if at.refuse:
        raise Skip(at.refuse, cause_of(at.refuse))
    gm = doc.graph_module
    cap = find_softcap(at.chain, at.start, gm, kind)
    if isinstance(cap, str) and cap:
        raise Skip(cap, "a tanh on the scores that is no soft-cap")
    if isinstance(cap, SoftCap) and flex is None:
        raise Skip(
            f"{cap.describe()} before the softmax, which scaled_dot_product_attention cannot "
            f"express (it only scales and adds a mask); {FLEX_HINT}",
            "a tanh soft-cap on the scores, which scaled_dot_product_attention cannot express",
        )
    capped = cap if isinstance(cap, SoftCap) else None
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
    mask_rank: int | None = None  # the dimensions of the mask as the graph gave it
    prev = at.start
    for node in at.chain[:-1]:
        fam = kind(node, gm)
        spot = next(i for i, a in enumerate(node.args) if a is prev)
        prev = node
        if fam in CASTS or fam in SAME:
            continue
        if capped is not None and node in capped.nodes:
            if mask is not None:
                raise Skip(
                    f"the scores are masked ({masked_at}) before {capped.tanh.name} caps them: "
                    "flex_attention's score_mod caps the scores as they come",
                    "a mask before the soft-cap",
                )
            continue
        other = [a for i, a in enumerate(node.args[:2]) if i != spot]
        if capped is not None and fam in ("mul", "div") and node > capped.multiply:
            raise Skip(
                f"{node.name} scales the scores after {capped.tanh.name} caps them: "
                "flex_attention scales before its score_mod",
                "a scale after the soft-cap",
            )
        if fam in ("mul", "div"):
            by = other[0] if other else None
            c = constant(by, gm)
            if c is None:
                raise Skip(
                    f"{node.name} scales the scores by {_said(by)}, which is computed at run "
                    "time: SDPA takes its scale as a number",
                    "a scale computed at run time",
                )
            if c == 0 and fam == "div":
                raise Skip(f"{node.name} divides the scores by zero", "a division by zero")
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
            mask_rank = _rank(other[0])
        else:  # sub, where, masked_fill: replayed with a zero for the scores
            if mask is None:
                mask = b.call("new_zeros", aten.new_zeros.default, q, [])
            mask = b.again(node, mask, spot)
            mask_rank = _rank(node)
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
    if capped is not None and flex is not None:
        return flex.call(b, capped, (q, k, v), mask, mask_rank, kwargs), b.inputs
    b.graph.output(b.graph.call_function(_SDPA[b.aten], (q, k, v, mask), kwargs))
    return ReplacementGraph(b.graph), b.inputs


def _calls_flex(made: ReplacementGraph) -> bool:
    return any(n.target is FLEX for n in made.graph.nodes)


def _rank(node: Any) -> int | None:
    shape = node_shape(node) if isinstance(node, fx.Node) else None
    return len(shape) if isinstance(shape, tuple) else None


class _Flex:
    """``fuse-attention-flex``: soft-capped attentions as flex_attention calls, one score_mod
    module per cap and mask rank, shared by the attentions that have them."""

    def __init__(self) -> None:
        self.root = nn.Module()
        self.made: dict[tuple[float, int | None], str] = {}

    def call(
        self,
        b: _Build,
        capped: SoftCap,
        qkv: tuple[Any, Any, Any],
        mask: Any,
        mask_rank: int | None,
        kwargs: dict[str, Any],
    ) -> ReplacementGraph:
        if mask is not None and (mask_rank is None or not 1 <= mask_rank <= 4):
            raise Skip(
                f"the mask of {capped.tanh.name}'s attention has no recorded shape to index",
                "a mask of unknown shape",
            )
        key = (capped.cap, mask_rank if mask is not None else None)
        name = self.made.get(key)
        if name is None:
            name = self.made[key] = f"softcap_{len(self.made)}"
            self.root.add_module(name, score_mod(*key))
        module = b.graph.get_attr(name)
        mod = module if mask is None else b.graph.call_function(PARTIAL, (module, mask))
        out = b.graph.call_function(FLEX, qkv, {"score_mod": mod, **kwargs})
        b.graph.output(out)
        return ReplacementGraph(b.graph, root=self.root)


def _number(value: Any, gm: nn.Module, node: fx.Node) -> float:
    c = constant(value, gm)
    if c is None:
        raise Skip(
            f"{node.name} scales by {_said(value)}, computed at run time",
            "a scale computed at run time",
        )
    return c


def _said(value: Any) -> str:
    return value.name if isinstance(value, fx.Node) else repr(value)


def _attention(q: Any, k: Any, v: Any) -> Any:
    return torch.softmax(q @ k.transpose(-2, -1), -1) @ v


class _AttentionJob(Job):
    """The attentions :func:`survey` finds, each a match whose SDPA call is worked out once;
    the softmaxes that are no attention it could fuse, each with why."""

    def __init__(self, doc: GraphDocument, flex: _Flex | None = None) -> None:
        self._made: dict[str, ReplacementGraph | Skip] = {}
        matches: list[Match] = []
        seen = survey(doc)
        for at in seen.attentions:
            made: ReplacementGraph | Skip
            try:
                made, reads = _replacement(doc, at, flex)
            except Skip as skip:
                made, reads = skip, []
            names = tuple(n.name for n in reads)
            m = Match(len(matches), at.nodes, names, (True,) * len(names), (at.nodes["output"],))
            self._made[m.anchor] = made
            matches.append(m)
        refused = [
            Skipped({"softmax": softmax.name}, refusal(softmax.name, stop.cause, stop.text))
            for softmax, stop in seen.refused
        ]
        absent = (
            ""
            if seen.candidates
            else "no softmax over the last dimension (no attention written out)"
        )
        replacement = Replacement("scaled_dot_product_attention", self._build, exact=False)
        found = Found(matches, refused, absent=absent)
        flexed = sum(
            1 for m in self._made.values() if isinstance(m, ReplacementGraph) and _calls_flex(m)
        )
        if flexed:
            found.warnings.append(
                f"{flexed} attention{'s' if flexed != 1 else ''} will call flex_attention: save "
                "the result as a session (.fxstudio) or a Python module (.py) -- torch.export "
                "cannot serialise flex_attention (.pt2); on the CPU it runs only without "
                "gradients (under torch.no_grad() or torch.inference_mode())"
            )
        super().__init__(from_function(_attention, "attention"), replacement, found)

    def _build(self, ctx: MatchContext) -> ReplacementGraph:
        made = self._made[ctx.match.anchor]
        if isinstance(made, Skip):
            raise made
        return made


FLEX_HINT = (
    "fuse-attention-flex writes it as flex_attention with a score_mod (the same values; "
    "one fused kernel under torch.compile, run eagerly it is slower)"
    if FLEX is not None
    else "this torch has no torch.nn.attention.flex_attention, which could"
)


def attention_jobs(doc: GraphDocument, arg: str, flex: bool = False) -> list[Job]:
    """The ``fuse-attention`` work (``flex``: a soft-capped attention as flex_attention, what
    ``fuse-attention-flex`` does); says plainly when attention is fused already."""
    if flex and FLEX is None:
        raise PatternError(
            f"This torch ({torch.__version__}) has no torch.nn.attention.flex_attention."
        )
    job = _AttentionJob(doc, _Flex() if flex else None)
    fused = [n.name for n in doc.graph.nodes if n.op == "call_function" and n.target in _SDPA]
    if fused and job.found is not None:  # said whether or not something else is left to fuse
        job.found.warnings.append(
            f"{len(fused)} attention call{'s are' if len(fused) != 1 else ' is'} already fused "
            f"(scaled_dot_product_attention: {', '.join(fused[:3])}"
            f"{', …' if len(fused) > 3 else ''}): nothing to fuse there"
            + eager_hint(doc.request.spec)
        )
    return [job]


def eager_hint(spec: str) -> str:
    """How to open ``spec`` with its attention written out, where that is known: a
    transformers model chooses SDPA unless its config says ``attn_implementation="eager"``
    (given as an ``hf:`` override); "" for any other model.

    >>> eager_hint("hf:gpt2(n_layer=2)").split("open ")[1]
    'hf:gpt2(n_layer=2, attn_implementation="eager")'
    >>> eager_hint("examples:transformer")
    ''
    """
    try:
        ms = parse_spec(spec)
    except LoadError:
        return ""
    given = dict(ms.kwargs)
    if ms.kind != "hf" or given.get("attn_implementation") == "eager":
        return ""
    given.pop("attn_implementation", None)
    overrides = [f"{k}={v!r}" for k, v in given.items()] + ['attn_implementation="eager"']
    return (
        ". To see the attention written out (matmul, softmax), open "
        f"hf:{ms.location}({', '.join(overrides)})"
    )


def flex_attention_jobs(doc: GraphDocument, arg: str) -> list[Job]:
    """``fuse-attention-flex``: as ``fuse-attention``, a soft-capped attention as
    flex_attention."""
    return attention_jobs(doc, arg, flex=True)
