"""The *Nodes* dock: every node in a table, filtered as you type, on the shared selection.

- ``panel`` -- :class:`TablePanel`, the dock; ``model`` (the ``QAbstractTableModel`` over the
  document's rows, with bytes and times once measured).
"""
