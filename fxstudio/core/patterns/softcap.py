"""A tanh soft-cap on attention scores -- ``cap · tanh(s / cap)`` before the softmax, as
Gemma 2 writes it (``attn_logit_softcapping``) -- told apart in an attention's chain, and the
``score_mod`` that computes it for ``torch.nn.attention.flex_attention``.

``scaled_dot_product_attention`` cannot express the cap: it only scales the scores and adds a
mask.  ``flex_attention`` can -- its ``score_mod`` sees each score after the scale -- so
``fuse-attention-flex`` writes a soft-capped attention as ``flex_attention(q, k, v,
score_mod=partial(self.softcap, mask), scale=...)``: the cap and the additive mask (the
``mask`` a run computes, which a ``score_mod`` cannot take as an argument) in one small
graph module of the model, saved with it as plain Python.  Run eagerly, ``flex_attention``
works out every score as the written-out attention does (the same values); it fuses into one
kernel only under ``torch.compile``.

Example:
    >>> import torch
    >>> mod = score_mod(50.0, mask_rank=4)
    >>> mask = torch.zeros(1, 1, 2, 2)
    >>> idx = torch.tensor(0)
    >>> float(mod(mask, torch.tensor(1000.0), idx, idx, idx, idx))  # capped at 50
    50.0
"""

from __future__ import annotations

import functools
import importlib
import operator
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.patterns.constants import constant

#: torch.nn.attention.flex_attention.flex_attention, where this torch has it (2.5+)
FLEX: Any = getattr(
    importlib.import_module("torch.nn.attention.flex_attention")
    if importlib.util.find_spec("torch.nn.attention.flex_attention")
    else None,
    "flex_attention",
    None,
)
PARTIAL = functools.partial


@dataclass(frozen=True)
class SoftCap:
    """A soft-cap found in a chain: the cap, and its three nodes (``s / cap``, ``tanh``,
    ``· cap``)."""

    cap: float
    divide: fx.Node
    tanh: fx.Node
    multiply: fx.Node

    @property
    def nodes(self) -> tuple[fx.Node, fx.Node, fx.Node]:
        return (self.divide, self.tanh, self.multiply)

    def describe(self) -> str:
        return f"{self.tanh.name} soft-caps the scores: {self.cap:g} · tanh(s / {self.cap:g})"


def find_softcap(chain: list[fx.Node], start: fx.Node, gm: nn.Module, kind: Any) -> SoftCap | str:
    """The soft-cap among ``chain``'s ops (``start`` computes the scores they take), or why a
    ``tanh`` there is none (""; no tanh at all)."""
    tanhs = [i for i, n in enumerate(chain) if kind(n, gm) == "tanh"]
    if not tanhs:
        return ""
    if len(tanhs) > 1:
        return f"{chain[tanhs[1]].name}: a second tanh on the scores"
    i = tanhs[0]
    tanh = chain[i]
    before = chain[i - 1] if i else start
    after = chain[i + 1] if i + 1 < len(chain) else None
    inner = _scale_of(before, gm, kind)
    outer = _scale_of(after, gm, kind) if after is not None else None
    if inner is None or outer is None or inner == 0:
        return (
            f"{tanh.name} is no soft-cap c · tanh(s / c) (no number divides before it and "
            "multiplies after)"
        )
    cap = 1 / inner
    if abs(outer - cap) > 1e-6 * max(1.0, abs(cap)):
        return f"{tanh.name} divides by {cap:g} and multiplies by {outer:g}: no soft-cap"
    assert after is not None
    return SoftCap(cap, before, tanh, after)


def _scale_of(node: Any, gm: nn.Module, kind: Any) -> float | None:
    """``f`` when ``node`` is ``x · f`` or ``x / (1/f)`` for a number ``f`` (``None`` else)."""
    fam = kind(node, gm)
    if fam not in ("mul", "div") or not isinstance(node, fx.Node) or len(node.args) < 2:
        return None
    by = constant(node.args[1], gm)
    if by is None and fam == "mul":
        by = constant(node.args[0], gm)
    if by is None or (fam == "div" and by == 0):
        return None
    return by if fam == "mul" else 1 / by


def score_mod(cap: float, mask_rank: int | None) -> fx.GraphModule:
    """``(mask, score, b, h, q_idx, kv_idx) -> cap · tanh(score / cap) + mask[b, h, q, kv]``
    (without ``mask`` when ``mask_rank`` is None); a mask of fewer dimensions, or of size 1
    in one, is read where it broadcasts (``index % size``)."""
    g = fx.Graph()
    mask = g.placeholder("mask") if mask_rank is not None else None
    score, *index = (g.placeholder(n) for n in ("score", "b", "h", "q_idx", "kv_idx"))
    scaled = g.call_function(operator.truediv, (score, cap))
    out = g.call_function(operator.mul, (g.call_function(torch.tanh, (scaled,)), cap))
    if mask is not None and mask_rank is not None:
        at = []
        for d, i in enumerate(index[4 - mask_rank :]):
            size = g.call_method("size", (mask, d))
            at.append(g.call_function(operator.mod, (i, size)))
        out = g.call_function(
            operator.add, (out, g.call_function(operator.getitem, (mask, tuple(at))))
        )
    g.output(out)
    return fx.GraphModule(nn.Module(), g, class_name="SoftCap")
