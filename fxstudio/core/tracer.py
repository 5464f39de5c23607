"""fxstudio's tracer: ``symbolic_trace``'s, with the leaf modules the user chose, stack
traces recorded, and a stop asked for (:func:`~fxstudio.core.guard.cancel_requested`) taken
at the next node it makes -- a forward that traces on for ever spends its time in torch.fx,
where :func:`~fxstudio.core.guard.stop_thread` does not land.

    >>> import torch
    >>> graph = Tracer(["Linear"]).trace(torch.nn.Sequential(torch.nn.Linear(2, 2)))
    >>> [n.op for n in graph.nodes]
    ['placeholder', 'call_module', 'output']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch.fx as fx
from torch import nn

from fxstudio.core.guard import Stopped, cancel_requested


class Tracer(fx.Tracer):
    """``symbolic_trace``'s tracer, with user-chosen leaf modules and recorded stack traces."""

    def __init__(self, leaf_modules: Iterable[str] = ()) -> None:
        super().__init__()
        self.leaf_names = set(leaf_modules)
        self.record_stack_traces = True

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        if module_qualified_name in self.leaf_names or type(m).__name__ in self.leaf_names:
            return True
        return super().is_leaf_module(m, module_qualified_name)

    def create_node(self, *args: Any, **kwargs: Any) -> fx.Node:
        if cancel_requested():  # the work is no longer wanted: stop here, where it is safe
            raise Stopped()
        return super().create_node(*args, **kwargs)
