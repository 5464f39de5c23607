"""trap_len: ``len()`` of a traced tensor (a classic symbolic tracing failure).

A Proxy has no length while tracing.  The fixes: ``torch.fx.wrap("len")`` at module scope
(``len`` becomes one node), ``x.shape[0]`` (traced as a node), or the export frontend.
"""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        rows = len(x)
        return self.fc(x) / rows


def example_inputs():
    return (torch.randn(2, 8),)
