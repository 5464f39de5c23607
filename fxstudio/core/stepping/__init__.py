"""Step through a graph node by node with ``torch.fx.Interpreter`` (Qt-free).

- :mod:`.summaries`  what a value looks like: shape, dtype, statistics, a histogram, a picture
- :mod:`.eager`   the eager model's values at module boundaries (forward hooks), compared
- :mod:`.stepper` the stepper: step, back, run to a node or a breakpoint, step over a module,
  with a bounded window of kept values (older ones are recomputed)
"""
