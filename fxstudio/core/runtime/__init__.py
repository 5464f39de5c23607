"""Running and timing a document's graph on a chosen device.

The modules: ``devices`` (what can run the model, and a clear refusal for what cannot),
``timer`` (the clean whole-model timer: warm-up, blocks sized so the clock's overhead is
negligible, synchronised, median and spread; A/B interleaved; cold L2), ``environment`` (the
stamp every result carries), ``nodes`` (the separate profiled run: a range per node, kernels
attributed to the node that launched them), ``flops`` (FLOPs and ideal bytes per node),
``roofline`` (device peaks and a node's place under them), ``breakdown`` (node and module
rows that add up to the profiled whole), ``speedup`` (before vs after: speed-up, confidence
interval, significance), ``ondevice`` (the model on a device, outputs checked, then timed --
what the Run dock and ``fxstudio profile`` run), ``profiling`` (the one profiling flow: one
function, one result).
"""
