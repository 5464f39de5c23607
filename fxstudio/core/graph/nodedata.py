"""Per-node data: a number for each of some nodes (a time, a share, FLOPs, a value
difference) and what the number is -- what the profile makes, a compare makes, the canvas
colours by, and :mod:`fxstudio.core.compare.overlay` writes for other viewers and reads back.

Example:
    >>> o = Overlay("time", {"conv": 2.0, "relu": 0.5}, "ms")
    >>> o.scale(), o.share("relu"), o.unknown({"conv"})
    ((0.5, 2.0), 0.0, ['relu'])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class Overlay:
    """A number for each of some nodes, and what the number is."""

    what: str  # "time", "max_rel_diff", ...
    values: dict[str, float] = field(default_factory=dict)
    unit: str = ""

    def unknown(self, names: set[str]) -> list[str]:
        """The overlay's nodes not in ``names`` (another graph's, or renamed since)."""
        return sorted(set(self.values) - names)

    def scale(self) -> tuple[float, float]:
        finite = [v for v in self.values.values() if math.isfinite(v)]
        return (min(finite), max(finite)) if finite else (0.0, 0.0)

    def share(self, name: str) -> float | None:
        """Where the node's value lies between the smallest and the largest, 0 to 1."""
        value = self.values.get(name)
        if value is None or not math.isfinite(value):
            return None
        low, high = self.scale()
        return (value - low) / (high - low) if high > low else 0.0
