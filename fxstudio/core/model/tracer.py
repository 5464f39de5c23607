"""fxstudio's tracer: ``symbolic_trace``'s, with the leaf modules the user chose, a stop asked
for (:func:`~fxstudio.core.process.guard.cancel_requested`) taken at the next node it makes -- a
forward that traces on for ever spends its time in torch.fx, where
:func:`~fxstudio.core.process.guard.stop_thread` does not land -- and two costs of big models cut:

- **source locations**: each node records the frames of the model's code that made it (from
  the outermost ``forward`` in, torch's own frames left out) as its ``stack_trace``, in the
  format torch writes -- where torch's ``record_stack_traces`` extracts and formats the whole
  Python stack for every node, most of a big model's trace time;
- **parameters by identity**: a parameter or buffer read in a ``forward`` (a layer scale, a
  position table) is found in a table made once per trace, where torch.fx searches every
  ``named_parameters()`` of the model at each read (quadratic in the model's size).

    >>> import torch
    >>> graph = Tracer(["Linear"]).trace(torch.nn.Sequential(torch.nn.Linear(2, 2)))
    >>> [n.op for n in graph.nodes]
    ['placeholder', 'call_module', 'output']
"""

from __future__ import annotations

import inspect
import linecache
from collections.abc import Iterable
from types import FrameType
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.errors import is_library_file
from fxstudio.core.process import progress
from fxstudio.core.process.guard import Stopped, cancel_requested


class Tracer(fx.Tracer):
    """``symbolic_trace``'s tracer, with user-chosen leaf modules and cheap source locations."""

    def __init__(self, leaf_modules: Iterable[str] = ()) -> None:
        super().__init__()
        self.leaf_names = set(leaf_modules)
        self.record_stack_traces = False  # (recorded here, more cheaply: see create_node)
        self._library_file: dict[str, bool] = {}
        self._tensors: tuple[Any, dict[int, str], dict[int, str]] | None = None
        self.counter = progress.Counter("Tracing forward")  # (a tracer traces once)

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        if module_qualified_name in self.leaf_names or type(m).__name__ in self.leaf_names:
            return True
        return super().is_leaf_module(m, module_qualified_name)

    def create_node(self, *args: Any, **kwargs: Any) -> fx.Node:
        if cancel_requested():  # the work is no longer wanted: stop here, where it is safe
            raise Stopped()
        node = super().create_node(*args, **kwargs)
        if not node.stack_trace:
            node.stack_trace = self._model_frames()
        self.counter.step()
        return node

    def _model_frames(self) -> str:
        """The model's frames on the stack, outermost ``forward`` first, as torch formats a
        traceback (``File "f.py", line 3, in forward`` then the line)."""
        frames = []
        frame: FrameType | None = inspect.currentframe()
        while frame is not None:
            frames.append(frame)
            frame = frame.f_back
        frames.reverse()
        start = next((i for i, f in enumerate(frames) if f.f_code.co_name == "forward"), None)
        if start is None:  # a function traced, or code outside any forward
            return ""
        lines = []
        for f in frames[start:]:
            file = f.f_code.co_filename
            library = self._library_file.get(file)
            if library is None:  # torch's and fxstudio's own frames (this one) are left out
                library = self._library_file[file] = is_library_file(file)
            if not library:
                text = linecache.getline(file, f.f_lineno).strip()
                lines.append(f'File "{file}", line {f.f_lineno}, in {f.f_code.co_name}\n    {text}')
        return "\n".join(lines)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Any]) -> Any:
        """A parameter or buffer read in a ``forward``: its ``get_attr`` node, found by
        identity (see the module's description)."""
        if isinstance(attr_val, torch.Tensor) and not self.param_shapes_constant:
            params, buffers = self._tensor_names()
            name = params.get(id(attr_val)) if isinstance(attr_val, nn.Parameter) else None
            if name is None and self.proxy_buffer_attributes:
                name = buffers.get(id(attr_val))
            if name is not None:
                if name not in parameter_proxy_cache:
                    parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
                return parameter_proxy_cache[name]
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def _tensor_names(self) -> tuple[dict[int, str], dict[int, str]]:
        """The model's parameters and buffers by identity: the first name of each, as
        ``named_parameters()`` and ``named_buffers()`` list them."""
        if self._tensors is None or self._tensors[0] is not self.root:
            params: dict[int, str] = {}
            for name, p in self.root.named_parameters():
                params.setdefault(id(p), name)
            buffers: dict[int, str] = {}
            for name, b in self.root.named_buffers():
                buffers.setdefault(id(b), name)
            self._tensors = (self.root, params, buffers)
        return self._tensors[1], self._tensors[2]
