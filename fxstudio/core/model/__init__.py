"""From what the user names to a captured graph (what the user asked to open is
:mod:`fxstudio.core.graph.request`): ``modelspec`` (MODEL and ``--input`` specs parsed),
``modelfiles`` (what a model file offers, read with ast), ``loading`` (a spec to a module and
its example inputs) and ``zoo`` (``timm:`` and ``hf:`` models by name) with ``hfinputs`` (a
transformers model's example input, from its config), ``sizing`` (a build
and its capture sized before they take the memory: a model built once, stopped before its
weights would not fit; a configuration of too many layers, or a capture that would not fit,
refused with the numbers), ``capture``
(symbolic_trace or torch.export, shapes recorded) with ``tracer`` (fxstudio's tracer: the
user's leaf modules, a stop taken at the next node), ``failures`` (what a failed capture
says) and ``fixes`` (tracing traps explained, with fixes that re-trace), ``opening`` (all of
it in one call: a model into a document)."""
