"""The canvas: ``items`` (nodes, module groups, edges), ``scene`` (one layout's items, kept up
to date edit by edit), ``overview`` (the far-out picture drawn without items), ``view`` (zoom,
pan), ``zoom`` (the status bar's "75 %"), ``minimap``, ``heat`` (time shares as tints) and
``marks`` (pattern, match and near-miss outlines), ``tools`` (one class per mouse
interaction), ``menu`` (the context menu: the canvas's actions and the docks') and the
``controller`` that keeps it in step with the document."""
