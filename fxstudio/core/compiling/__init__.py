"""torch.compile insight: where Dynamo breaks the user's model into several graphs and why
(``breaks``); the model compiled, timed against eager, each kernel traced to the nodes and
lines it came from (``model``: ``compile_model``, the one flow; ``kernels`` for a document's
graph, ``running`` and ``origins`` shared -- inductor's kernel <-> node records matched to the
profiled events -- ``result`` what it tells, ``located`` the document's nodes at a line,
``quiet`` a printing forward muted while timed)."""
