"""The document and what is read off a graph: ``request`` (what the user asked to open: one
record, kept on the document), ``document`` (``GraphDocument``, the one source of truth, and
its change events), ``graphviews`` (table rows, targets and arguments as a user reads them,
the module tree), ``notation`` (a group's key and a shape in words, torch-free), ``shapes``
(a node's recorded shape and dtype, as the views show them; a value's shape in words),
``propagation`` (shapes propagated on fake tensors or one real run), ``execution`` (a graph
run node by node, lean, and the threads of a bookkeeping run), ``edited`` (what edits
touched since the shapes were right; what a call's shape depends on), ``modes`` (eval mode
for a while), ``attributes`` (submodules and attributes by dotted path), ``signatures`` (a
callable's signature, or torch's schemas for a builtin), ``families`` (what op a call is,
whatever its spelling), ``nodedata`` (a number per node and what it means), ``catalogue``
(what can be inserted), ``weights`` (structure-only models: meta tensors, no weights, any
size; a model run on fake values), ``checkpoints`` (a checkpoint folder's safetensors
tensors read by name), ``parts`` (one module taken out of its graph as a document of its
own, to run)."""
