"""trap_random: ``torch.randn`` with fixed sizes is run once while tracing (a silent trap).

Its arguments are plain numbers, not Proxies, so symbolic tracing calls it and keeps the
result as a constant: every call of the graph adds the same "noise".  The fixes: the export
frontend (it records ``randn`` as an op), or ``torch.fx.wrap`` on a helper that calls it.
"""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        noise = torch.randn(2, 8)
        return self.fc(x) + 0.1 * noise


def example_inputs():
    return (torch.randn(2, 8),)
