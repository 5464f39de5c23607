"""Where the nodes a rewrite makes come from: the ``meta`` each new node is given -- the
stack trace and the module it is drawn in (``nn_module_stack``), and which rewrite made it
from which nodes (``fxstudio_rewrite``, the inspector's *rewritten by*).

Example (a conv + BatchNorm fold: the folded conv keeps the conv's module, not the
BatchNorm's that anchors the match):
    >>> from fxstudio.core.graph.graphviews import module_path
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
    >>> doc = open_document("examples:resnet")
    >>> _ = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    >>> module_path(doc.node("layer1_0_conv1")), "layer1_0_bn1" in doc
    ('layer1.0.conv1', False)
"""

from __future__ import annotations

from typing import Any

from torch.fx.node import Node

from fxstudio.core.edits.naming import enclosing_modules

#: What a new node takes over from the node it stands for.
META_KEPT = ("stack_trace", "nn_module_stack")


class Provenance:
    """Where a new node of one match's replacement comes from, for its ``meta``: its stack
    trace and ``nn_module_stack`` are those of the matched node calling the same submodule
    (a folded conv stays ``layer1.0.conv1``, not the BatchNorm anchoring the match), or the
    matched call of the same op (a folded ``aten.conv2d`` of an export graph), else
    the anchor's -- less the module the anchor calls, for a node that does not call it (a
    new submodule is its own innermost module)."""

    def __init__(self, anchor: Node, matched: list[Node], made: dict[str, Any]) -> None:
        self.anchor = anchor
        self.calls = {str(n.target): n for n in matched if n.op == "call_module"}
        # an ATen call of the same op (a folded aten.conv2d): the one it takes over from
        self.same = {n.target: n for n in matched if n.op == "call_function"}
        self.made = made

    def meta(self, op: str, target: Any, module: Any) -> dict[str, Any]:
        path = str(target)
        if op == "call_module":
            source = self.calls.get(path)
        else:
            source = self.same.get(target) if op == "call_function" else None
        meta: dict[str, Any] = {}
        if source is not None:
            meta = {k: source.meta[k] for k in META_KEPT if k in source.meta}
        else:
            if "stack_trace" in self.anchor.meta:
                meta["stack_trace"] = self.anchor.meta["stack_trace"]
            stack = enclosing_modules(self.anchor)
            if op == "call_module" and "nn_module_stack" in self.anchor.meta:
                stack[path] = (path, type(module))
            if stack:
                meta["nn_module_stack"] = stack
        meta["fxstudio_rewrite"] = self.made
        return meta
