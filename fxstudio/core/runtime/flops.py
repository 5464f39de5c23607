"""What each node computes and moves: FLOPs as ``torch.utils.flop_counter.FlopCounterMode``
counts them (mm = 2·m·n·k; conv, bmm, addmm, SDPA; other ops decompose or count 0) and the
ideal bytes moved (the sizes of the node's tensor inputs, a called module's own parameters
and buffers, and its outputs -- what the op must read and write at least once).

One pass of ``torch.fx.Interpreter`` under one counter, never timed: the count a node adds
to the counter's total is that node's.  The counter's registry lacks the CPU kernel of
``scaled_dot_product_attention`` (it knows the CUDA ones), so that one op is added with the
counter's own SDPA formula -- on the CPU attention would otherwise count 0 FLOPs.

Example:
    >>> import torch
    >>> gm = torch.fx.symbolic_trace(torch.nn.Linear(8, 4))
    >>> work = node_work(gm, (torch.randn(2, 8),))
    >>> work["linear"].flops, work["linear"].bytes  # 2·2·8·4; x 64 + weight 128 + bias 16 + out 32
    (128, 240)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
from torch.utils.flop_counter import FlopCounterMode, sdpa_flop_count

from fxstudio.core.fxcompat import tree_leaves


def _cpu_sdpa(query_shape: Any, key_shape: Any, value_shape: Any, *args: Any, **kwargs: Any) -> int:
    return int(sdpa_flop_count(query_shape, key_shape, value_shape))


_EXTRA = {torch.ops.aten._scaled_dot_product_flash_attention_for_cpu: _cpu_sdpa}


@dataclass(frozen=True)
class Work:
    flops: int
    bytes: int


def _nbytes(value: Any) -> int:
    return sum(
        t.numel() * t.element_size() for t in tree_leaves(value) if isinstance(t, torch.Tensor)
    )


class _Counting(fx.Interpreter):
    def __init__(self, gm: fx.GraphModule, counter: FlopCounterMode) -> None:
        super().__init__(gm)
        self.counter = counter
        self.work: dict[str, Work] = {}

    def _total(self) -> int:
        return int(sum(self.counter.flop_counts["Global"].values()))

    def run_node(self, n: fx.Node) -> Any:
        before = self._total()
        result = super().run_node(n)
        if n.op in ("call_function", "call_method", "call_module"):
            moved = _nbytes([self.env[a] for a in n.all_input_nodes if a in self.env])
            if n.op == "call_module":
                module = self.fetch_attr(str(n.target))
                moved += _nbytes(list(module.parameters())) + _nbytes(list(module.buffers()))
            moved += _nbytes(result)
            self.work[n.name] = Work(self._total() - before, moved)
        return result


def node_work(gm: fx.GraphModule, inputs: tuple[Any, ...]) -> dict[str, Work]:
    """FLOPs and ideal bytes of every call node of ``gm`` on ``inputs``."""
    counter = FlopCounterMode(display=False, custom_mapping=_EXTRA)
    interpreter = _Counting(gm, counter)
    with torch.no_grad(), counter:
        interpreter.run(*inputs)
    return interpreter.work
