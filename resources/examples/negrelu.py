"""negrelu: neg(x) + relu(y), then * z -- the classic torch.fx.replace_pattern demo."""

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x, y, z):
        a = torch.neg(x)
        b = torch.relu(y)
        return (a + b) * z


def example_inputs():
    return (torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8))
