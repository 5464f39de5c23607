"""Attention as people write it out, each a case for fuse-attention (q, k, v and a mask in)."""

import math

import torch
import torch.nn.functional as F
from torch import nn

L = 8  # query length of the examples


class Causal(nn.Module):
    """GPT-2's classic: a causal bias buffer through where with finfo.min, a scale tensor,
    softmax in float32, .type back, dropout (eval), an additive mask on top."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("bias", torch.ones(L, L, dtype=torch.bool).tril().view(1, 1, L, L))
        self.drop = nn.Dropout(0.1)

    def forward(self, q, k, v, mask):
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], 4.0, dtype=w.dtype)
        w = torch.where(self.bias[:, :, :L, :L], w, torch.finfo(torch.float32).min)
        w = w + mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).type(v.dtype)
        return torch.matmul(self.drop(w), v)


class MaskedFill(nn.Module):
    """masked_fill with -inf, the scale applied after the mask (it scales the mask too)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("keep", torch.ones(L, L).tril())

    def forward(self, q, k, v, mask):
        w = (q @ k.transpose(2, 3)).masked_fill(self.keep == 0, float("-inf"))
        return ((w + mask) * (1 / math.sqrt(q.shape[-1]))).softmax(-1) @ v


class Baddbmm(nn.Module):
    """diffusers' classic processor on (batch x heads, L, E): baddbmm with the mask as input."""

    def forward(self, q, k, v, mask):
        q, k, v = (t.flatten(0, 1) for t in (q, k, v))
        scores = torch.baddbmm(mask.flatten(0, 1), q, k.transpose(-1, -2), beta=1, alpha=0.25)
        return torch.bmm(scores.softmax(dim=-1), v)


class Permuted(nn.Module):
    """k laid out (batch, S, heads, E) and permuted straight to kᵀ: SDPA gets k back."""

    def __init__(self) -> None:
        super().__init__()
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, q, k, v, mask):
        kt = k.transpose(1, 2).permute(0, 2, 3, 1)  # (b, h, e, s)
        return self.softmax(torch.matmul(q, kt) * 0.25 + mask) @ v


class Grouped(nn.Module):
    """Grouped-query attention: two k/v heads repeated for four query heads (repeat_kv)."""

    def forward(self, q, k, v, mask):
        k, v = k[:, :2], v[:, :2]
        b, h, s, d = k.shape
        k = k[:, :, None, :, :].expand(b, h, 2, s, d).reshape(b, h * 2, s, d)
        v = v[:, :, None, :, :].expand(b, h, 2, s, d).reshape(b, h * 2, s, d)
        w = torch.matmul(q, k.transpose(2, 3)) * 0.25 + mask
        return torch.matmul(F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype), v)


# --- what SDPA cannot stand for ------------------------------------------------------------


class ReturnsWeights(nn.Module):
    def forward(self, q, k, v, mask):
        w = (q @ k.transpose(-2, -1) * 0.25 + mask).softmax(-1)
        return w @ v, w


class ScaleAtRunTime(nn.Module):
    def forward(self, q, k, v, mask):
        return (q @ k.transpose(-2, -1) / mask.abs().sum().sqrt()).softmax(-1) @ v


class TrainingDropout(nn.Module):
    def forward(self, q, k, v, mask):
        w = (q @ k.transpose(-2, -1) * 0.25).softmax(-1)
        return F.dropout(w, 0.1, training=True) @ v


# --- a soft-cap on the scores (Gemma 2): flex_attention can, SDPA cannot ---------------------


class SoftCapped(nn.Module):
    """Gemma 2's eager attention: scale, cap at 30 with tanh, the additive mask, softmax in
    float32."""

    def forward(self, q, k, v, mask):
        w = torch.matmul(q, k.transpose(-2, -1)) * 0.25
        w = torch.tanh(w / 30.0) * 30.0
        w = w + mask
        return torch.matmul(F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype), v)


class CappedUnmasked(nn.Module):
    """The cap and no mask."""

    def forward(self, q, k, v, mask):
        w = torch.tanh(q @ k.transpose(-2, -1) / 4.0 / 20.0) * 20.0
        return w.softmax(-1) @ v


class MaskedThenCapped(nn.Module):
    """The mask added before the cap: no score_mod can cap what the mask went into."""

    def forward(self, q, k, v, mask):
        w = (q @ k.transpose(-2, -1) * 0.25 + mask) / 30.0
        return (torch.tanh(w) * 30.0).softmax(-1) @ v


class Sigmoided(nn.Module):
    """Scores through a sigmoid before the softmax: no attention fuse-attention knows."""

    def forward(self, q, k, v, mask):
        return torch.sigmoid(q @ k.transpose(-2, -1) * 0.25).softmax(-1) @ v
