"""trap_dropout: ``F.dropout(..., training=self.training)`` is baked into the graph (a silent
trap).

``self.training`` is a plain bool while tracing, so the graph keeps the value it had: a graph
captured in eval mode never drops out, even after ``.train()``.  The fix: capture the mode
you mean (fxstudio --train for the training graph), or use ``nn.Dropout`` (a module call
that reads its mode when it runs).
"""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return F.dropout(self.fc(x), p=0.5, training=self.training)


def example_inputs():
    return (torch.randn(2, 8),)
