"""Two graphs compared: which node is which (``align``), what their values do on the same
inputs (``values``) and how long each pair takes (``times``), what a document is compared
with besides another model -- itself before its last rewrite (``sides``) -- and per-node data
written for, and read from, other viewers (``overlay``: Model Explorer's node data, Netron's
metrics, CSV)."""
