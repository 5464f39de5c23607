"""What a layout places, in points (1/72 inch), y pointing down as Qt draws: :class:`Box`, the
sizes of a node's box and a group's frame, and :func:`group_key` (the key of a module group's
position).  Torch-free, as the first picture of a ``.pt2`` is drawn before torch is imported
(:mod:`fxstudio.core.layout.preview`)."""

from __future__ import annotations

from dataclasses import dataclass

NODE_HEIGHT = 44.0
GROUP_PAD = 14.0
GROUP_TITLE = 20.0
COLLAPSED_HEIGHT = 40.0


@dataclass(frozen=True)
class Box:
    x: float  # top-left
    y: float
    w: float
    h: float

    @property
    def center(self) -> tuple[float, float]:
        return (self.x + self.w / 2, self.y + self.h / 2)

    def to_json(self) -> list[float]:
        return [round(self.x, 2), round(self.y, 2), round(self.w, 2), round(self.h, 2)]
