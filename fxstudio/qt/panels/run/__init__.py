"""The Run dock: the model run and timed on a device, on a copy of the graph, in a worker.

- ``panel`` -- :class:`RunPanel`, the dock;
- ``form`` (its widgets, laid out as a column or a strip), ``summary`` (what the profile says,
  as paragraphs), ``bar_chart`` (the top nodes or modules by time), ``module`` (one module of
  the model run alone, as ``fxstudio profile --module``).
"""
