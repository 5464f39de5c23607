"""The window's docks, a room each, every one a
:class:`~fxstudio.qt.panels.base.DocumentPanel` (``base``: told of the session's document and
its changes, says status, offers actions; given a ``PanelContext``, never the window).  A
dock of several modules is a package whose docstring is its map, its dock in ``panel``.

- ``table`` (the *Nodes* dock); ``code`` (the generated code); ``inspector``; ``history``
  (the undo stack); ``console`` (the Python console);
- ``patterns`` (the Patterns dock: patterns, matches, rewrites, the check);
- ``run`` (the Run dock: run and time, one module alone); ``memory`` (the Memory dock: where
  the bytes go); ``step`` (the Step dock: node by node); ``compile`` (graph breaks and
  kernels under torch.compile); ``lesson`` (Learn FX).
"""
