"""trap_if: a submodule branches on a tensor's value (a classic symbolic tracing failure).

``if x.mean() > 0`` needs the value, which a Proxy does not have while tracing.  The fixes:
keep ``gate`` as a leaf module (one call_module node, its branch runs at run time), the
export frontend with ``torch.cond``, or ``concrete_args`` when the branch depends on a flag.
"""

import torch
from torch import nn


class Gate(nn.Module):
    def forward(self, x):
        if x.mean() > 0:
            return torch.relu(x)
        return -x


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.gate = Gate()

    def forward(self, x):
        return self.gate(self.fc(x))


def example_inputs():
    return (torch.randn(2, 8),)
