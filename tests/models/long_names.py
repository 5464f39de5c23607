"""A small ConvNeXt-like model whose modules have long names (``stages.0.downsample``, as
timm's convnext): the node labels must fit their boxes or be elided with a tooltip."""

import torch
from torch import nn


class Stage(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.downsample = nn.Conv2d(width, width, 2, stride=2)
        self.depthwise_convolution = nn.Conv2d(width, width, 3, padding=1, groups=width)
        self.pointwise_projection_after_layer_normalisation_and_activation = nn.Conv2d(
            width, width, 1
        )

    def forward(self, x):
        x = self.downsample(x)
        y = self.depthwise_convolution(x)
        return x + self.pointwise_projection_after_layer_normalisation_and_activation(y)


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stages = nn.Sequential(Stage(8), Stage(8))

    def forward(self, x):
        return torch.flatten(self.stages(x), 1)


def example_inputs():
    return (torch.randn(1, 8, 16, 16),)
