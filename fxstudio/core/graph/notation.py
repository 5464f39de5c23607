"""How a graph is written down without torch: a module group's key (``group:PATH``, what a
document keeps a group's position under) and a shape in words (``2x16``).  A ``.pt2``'s
first picture draws with them before torch is imported (:mod:`fxstudio.core.flows.picture`).

    >>> group_key("layer1"), format_shape((2, 16)), format_shape([(2, 8), None])
    ('group:layer1', '2x16', '(2x8, None)')
"""

from __future__ import annotations


def group_key(path: str) -> str:
    """The key of a module group's position (node names never contain a colon)."""
    return f"group:{path}"


def format_shape(shape: tuple[int, ...] | list[tuple[int, ...] | None] | None) -> str:
    """``2x16``; ``(2x8, 2x8)`` for several; ``scalar`` for 0-d; ``""`` when unknown."""
    if shape is None:
        return ""
    if isinstance(shape, list):
        return "(" + ", ".join("None" if s is None else format_shape(s) for s in shape) + ")"
    return "x".join("?" if d < 0 else str(d) for d in shape) or "scalar"
