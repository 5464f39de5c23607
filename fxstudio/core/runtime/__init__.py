"""Running and timing a document's graph on a chosen device.

The modules: ``devices`` (what can run the model, and a clear refusal for what cannot),
``timer`` (the clean whole-model timer: warm-up, blocks sized so the clock's overhead is
negligible, synchronised, median and spread), ``environment`` (the stamp every result carries),
``run`` (the model on a device, outputs checked, then timed -- what ``fxstudio profile`` runs).
"""
