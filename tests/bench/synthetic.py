"""Synthetic deep models of a chosen node count, for benchmarks."""

import torch
from torch import nn


class ResidualMLP(nn.Module):
    """``blocks`` x (linear -> relu -> add): three graph nodes per block."""

    def __init__(self, blocks: int, width: int = 16) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(blocks))
        self.width = width

    def forward(self, x):
        for layer in self.layers:
            x = x + torch.relu(layer(x))
        return x


def deep(nodes: int) -> ResidualMLP:
    return ResidualMLP(max(1, (nodes - 2) // 3))


def deep_100():
    return deep(100)


def deep_1000():
    return deep(1000)


def deep_10000():
    return deep(10000)


def example_inputs():
    return (torch.randn(4, 16),)
