"""branchy: forward branches on a tensor value.

torch.fx.symbolic_trace cannot follow ``if x.sum() > 0`` -- the value is not known while
tracing. Kept to teach the error and its fixes (torch.cond with the export frontend, a leaf
module, or concrete_args).
"""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.pos = nn.Linear(8, 8)
        self.neg = nn.Linear(8, 8)

    def forward(self, x):
        if x.sum() > 0:
            return self.pos(x)
        return self.neg(x)


def example_inputs():
    return (torch.randn(2, 8),)
