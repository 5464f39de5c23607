"""How wide the canvas's labels are, for sizing node boxes: the advance of each character in
the canvas's two fonts (a node's name, bold; its target and shape), as plain numbers.

The window measures its fonts once (:func:`fxstudio.qt.canvas.items.text_metrics`) and gives
the numbers to the layout, which runs in a worker thread and never touches Qt; without a
window (the command line) :data:`ESTIMATE` stands in.  The canvas elides what is still wider
than a box may grow (:data:`MAX_NODE_WIDTH`) and shows the whole text in the tooltip.
:func:`~fxstudio.core.graph.notation.format_shape` writes a shape as every view shows it.

Example:
    >>> m = TextMetrics({"a": 7.0, "": 9.0}, {"a": 6.0, "": 8.0})
    >>> m.width("aa", bold=True), m.width("aé")
    (14.0, 14.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import repeat

#: A node's box: never narrower or wider than this (points); its text margin, both sides.
MIN_NODE_WIDTH, MAX_NODE_WIDTH = 70.0, 320.0
TEXT_MARGIN = 6.0
#: Added to the widest line, beyond the margins: kerning and rounding never cut a label.
SLACK = 6.0
#: The advance of a character when the fonts are not known (the command line's layout).
CHAR_WIDTH = 6.6


@dataclass(frozen=True, eq=False)
class TextMetrics:
    """Advances per character of the bold (name) and the plain (target, shape) font; the
    key ``""`` is any other character's.  Hashed by identity (a key of cached widths)."""

    bold: dict[str, float] = field(default_factory=lambda: {"": CHAR_WIDTH})
    plain: dict[str, float] = field(default_factory=lambda: {"": CHAR_WIDTH})

    def width(self, text: str, bold: bool = False) -> float:
        table = self.bold if bold else self.plain
        other = table.get("", CHAR_WIDTH)
        return float(sum(map(table.get, text, repeat(other))))  # (a C loop: 10,000s a layout)

    def box_width(self, name: str, *details: str) -> float:
        """A node box's width: its widest line with margins, within the min and max."""
        widest = max([self.width(name, bold=True), *(self.width(d) for d in details)])
        return min(max(widest + 2 * TEXT_MARGIN + SLACK, MIN_NODE_WIDTH), MAX_NODE_WIDTH)


#: The command line's estimate: every character :data:`CHAR_WIDTH` wide.
ESTIMATE = TextMetrics()
