"""The canvas's drawing vocabulary and a ``.pt2``'s first picture, torch-free: the window
draws a ``.pt2`` straight from its archive before torch is imported
(:mod:`fxstudio.core.layout.preview`), with the canvas's own items.

- ``first_picture`` (a ``.pt2`` path) -> :class:`FirstPicture`: its nodes, edges and boxes,
  read from the archive's JSON and laid out; ``None`` where the file is not such an archive
- what a canvas item is drawn with: ``Box``, ``GROUP_PAD``, ``GROUP_TITLE``, ``TEXT_MARGIN``,
  ``TextMetrics``, ``edge_path``, ``group_key``

This module (and everything it imports) never imports torch: a test checks it.
"""

from __future__ import annotations

from fxstudio.core.graph.notation import group_key
from fxstudio.core.layout.boxes import GROUP_PAD, GROUP_TITLE, Box
from fxstudio.core.layout.labels import TEXT_MARGIN, TextMetrics
from fxstudio.core.layout.preview import FirstPicture, PreviewNode, first_picture
from fxstudio.core.layout.routes import edge_path

__all__ = [
    "GROUP_PAD",
    "GROUP_TITLE",
    "TEXT_MARGIN",
    "Box",
    "FirstPicture",
    "PreviewNode",
    "TextMetrics",
    "edge_path",
    "first_picture",
    "group_key",
]
