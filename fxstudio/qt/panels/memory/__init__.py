"""The Memory dock: where the bytes go -- estimated, or measured when it fits.

- ``panel`` -- :class:`MemoryPanel`, the dock (``fxstudio memory`` in a worker, on a copy);
- ``form`` (its widgets, laid out as a column or a strip), ``plot`` (the timeline of live
  bytes, drawn with pyqtgraph), ``step`` (a training step: its whole timeline, the backward's
  nodes, what is live at its peak).
"""
