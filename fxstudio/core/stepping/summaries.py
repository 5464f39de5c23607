"""What a node's value looks like, small enough to keep for every node of a big graph.

:func:`summarize` gives a :class:`ValueSummary` -- shape, dtype, device, min/max/mean/std,
NaN/Inf counts and a histogram of the finite values -- for a tensor, a tuple or list of
them, or a plain Python value.  :func:`picture` turns a tensor into a grey image where one
helps: a 2-D slice, or a grid of the first feature maps of an image batch.

Example:
    >>> import torch
    >>> s = summarize(torch.tensor([[1.0, 2.0], [float("nan"), 4.0]]))
    >>> s.shape, s.dtype, s.min, s.max, s.nans
    ((2, 2), 'float32', 1.0, 4.0, 1)
    >>> summarize((torch.zeros(3), 2)).text
    'tuple of 2: [3] float32, 2'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from fxstudio.core.results import Json

BINS = 24
MAX_PICTURE = 256  # pixels on the longer side
MAX_MAPS = 16  # feature maps in a grid


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass(frozen=True)
class ValueSummary:
    """A value in a few numbers.  ``kind``: tensor, sequence, scalar, none or other."""

    kind: str
    text: str  # one line: "[1, 16, 8, 8] float32" or a repr
    shape: tuple[int, ...] | None = None
    dtype: str = ""
    device: str = ""
    numel: int = 0
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    std: float | None = None
    nans: int = 0
    infs: int = 0
    histogram: tuple[int, ...] = ()  # BINS counts of the finite values over [min, max]
    parts: tuple[ValueSummary, ...] = field(default_factory=tuple)  # a tuple's items

    @property
    def finite(self) -> bool:
        return self.nans == 0 and self.infs == 0 and all(p.finite for p in self.parts)

    def to_json(self) -> Json:
        out: dict[str, Any] = {"kind": self.kind, "text": self.text}
        if self.kind == "tensor":
            out.update(
                shape=list(self.shape or ()),
                dtype=self.dtype,
                device=self.device,
                numel=self.numel,
                min=self.min,
                max=self.max,
                mean=self.mean,
                std=self.std,
                nans=self.nans,
                infs=self.infs,
                histogram=list(self.histogram),
            )
        if self.parts:
            out["parts"] = [p.to_json() for p in self.parts]
        return out


def _number(x: torch.Tensor) -> float:
    return float(x.item())


def _tensor(t: torch.Tensor) -> ValueSummary:
    shape = tuple(int(s) for s in t.shape)
    text = f"[{', '.join(map(str, shape))}] {dtype_name(t.dtype)}"
    base = dict(shape=shape, dtype=dtype_name(t.dtype), device=str(t.device), numel=t.numel())
    if t.numel() == 0 or t.is_complex() or t.is_meta or t.layout != torch.strided:
        return ValueSummary("tensor", text, **base)  # type: ignore[arg-type]
    x = t.detach()
    x = x.to(torch.float64) if x.dtype == torch.float64 else x.to(torch.float32)
    nan = torch.isnan(x)
    inf = torch.isinf(x)
    finite = x[~(nan | inf)]
    stats: dict[str, Any] = {"nans": int(nan.sum()), "infs": int(inf.sum())}
    if finite.numel():
        low, high = torch.aminmax(finite)
        lo, hi = _number(low), _number(high)
        hist = torch.histc(finite.float(), bins=BINS, min=lo, max=hi if hi > lo else lo + 1)
        if finite.numel() > 1:
            std, mean = torch.std_mean(finite)
        else:
            std, mean = torch.zeros(()), finite.mean()
        stats.update(
            min=lo,
            max=hi,
            mean=_number(mean),
            std=_number(std),
            histogram=tuple(hist.int().tolist()),
        )
    return ValueSummary("tensor", text, **base, **stats)  # type: ignore[arg-type]


def summarize(value: Any) -> ValueSummary:
    """The summary of one node's value (see the module docstring)."""
    if isinstance(value, torch.Tensor):
        return _tensor(value)
    if value is None:
        return ValueSummary("none", "None")
    if isinstance(value, (bool, int, float)):
        return ValueSummary("scalar", repr(value))
    if isinstance(value, torch.Size):
        return ValueSummary("other", f"torch.Size({list(value)})")
    if isinstance(value, (tuple, list)) and value:
        parts = tuple(summarize(v) for v in value)
        inner = ", ".join(p.text for p in parts[:4]) + (", …" if len(parts) > 4 else "")
        kind = type(value).__name__
        return ValueSummary("sequence", f"{kind} of {len(parts)}: {inner}", parts=parts)
    if isinstance(value, dict) and value:
        parts = tuple(summarize(v) for v in value.values())
        keys = ", ".join(map(str, list(value)[:4])) + (", …" if len(value) > 4 else "")
        return ValueSummary("sequence", f"dict of {len(parts)}: {keys}", parts=parts)
    text = repr(value)
    return ValueSummary("other", text if len(text) <= 80 else text[:79] + "…")


@dataclass(frozen=True)
class Picture:
    """A grey image of a tensor: ``pixels`` is (H, W) float32 in [0, 1]; ``caption`` says
    which part of the tensor it shows."""

    pixels: torch.Tensor
    caption: str


def _shrink(x: torch.Tensor, side: int) -> torch.Tensor:
    step = max(1, math.ceil(max(x.shape[-2:]) / side))
    return x[..., ::step, ::step]


def picture(value: Any, max_side: int = MAX_PICTURE) -> Picture | None:
    """A picture of a tensor where one helps (None for scalars, vectors and others).

    4-D (N, C, H, W) with H, W > 1: the first feature maps of item 0 in a grid; 3-D: its first
    slice; 2-D: itself.  Scaled to [0, 1] by the finite min and max; NaN and Inf drawn black.
    """
    if not isinstance(value, torch.Tensor) or value.is_complex() or value.dim() < 2:
        return None
    if value.numel() == 0 or value.layout != torch.strided or value.is_meta:
        return None
    x = value.detach().to("cpu", torch.float32)
    if x.dim() >= 4 and x.shape[-1] > 1 and x.shape[-2] > 1:
        while x.dim() > 4:
            x = x[0]
        maps = min(int(x.shape[1]), MAX_MAPS)
        cols = math.ceil(math.sqrt(maps))
        rows = math.ceil(maps / cols)
        tile = max(8, max_side // cols)
        small = _shrink(x[0, :maps], tile)
        h, w = int(small.shape[-2]), int(small.shape[-1])
        grid = torch.full((rows * (h + 1) - 1, cols * (w + 1) - 1), float("nan"))
        for i in range(maps):
            r, c = divmod(i, cols)
            grid[r * (h + 1) : r * (h + 1) + h, c * (w + 1) : c * (w + 1) + w] = small[i]
        caption = f"channels 0–{maps - 1} of item 0" if maps > 1 else "channel 0 of item 0"
        x = grid
    else:
        lead = ""
        while x.dim() > 2:
            x = x[0]
            lead += "0, "
        caption = f"[{lead}:, :]" if lead else "the whole matrix"
        x = _shrink(x, max_side)
    finite = torch.isfinite(x)
    pixels = torch.zeros_like(x)
    if finite.any():
        lo, hi = x[finite].min(), x[finite].max()
        span = float(hi - lo) or 1.0
        pixels[finite] = (x[finite] - lo) / span
    return Picture(pixels.clamp(0, 1), caption)
