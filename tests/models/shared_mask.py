"""A small stack of layers that all read one mask and the shared position ids: what
transformers do, in a model quick to trace.  Used by the layout and canvas tests."""

import torch
from torch import nn


class Layer(nn.Module):
    def __init__(self, width: int = 16, depth: int = 12) -> None:
        super().__init__()
        self.proj = nn.Linear(width, width)
        self.depth = depth

    def forward(self, x, mask, pos):
        h = self.proj(x) + pos
        for _ in range(self.depth):
            h = torch.relu(h) * 0.5 + h
        return x + h * mask


class Model(nn.Module):
    def __init__(self, layers: int = 6) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer() for _ in range(layers))

    def forward(self, x):
        mask = (x > 0).float()
        pos = torch.arange(x.shape[-1], dtype=x.dtype)
        for layer in self.layers:
            x = layer(x, mask, pos)
        return x


def example_inputs():
    return (torch.randn(2, 16),)
