"""Two graphs compared: which node is which (``align``), what their values do on the same
inputs (``values``), and per-node data written for, and read from, other viewers
(``overlay``: Model Explorer's node data, Netron's metrics, CSV)."""
