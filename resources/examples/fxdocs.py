"""fxdocs: the small module of the torch.fx documentation (a parameter, a Linear, a clamp).

Its graph has all six opcodes -- placeholder, get_attr, call_function, call_module,
call_method and output -- which is why Help > Learn FX starts with it.
"""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.param = nn.Parameter(torch.rand(3, 4))
        self.linear = nn.Linear(4, 5)

    def forward(self, x):
        return self.linear(x + self.param).clamp(min=0.0, max=1.0)


def example_inputs():
    return (torch.randn(3, 4),)
