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


class Bottleneck(nn.Module):
    def __init__(self, cin: int, width: int, stride: int) -> None:
        super().__init__()
        cout = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return self.relu(out + identity)


class ResNet50(nn.Module):
    """The ResNet-50 architecture (25.6 M parameters), written out so no torchvision is needed."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        layers, cin = [], 64
        for i, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)]):
            stage = []
            for b in range(blocks):
                stage.append(Bottleneck(cin, width, 2 if b == 0 and i > 0 else 1))
                cin = width * 4
            layers.append(nn.Sequential(*stage))
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet50():
    return ResNet50().eval()


# --- nested: the shape of a transformer (stages of blocks of modules of layers) --------------


class _MLP(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(width, 2 * width)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(2 * width, width)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class _Block(nn.Module):
    def __init__(self, width: int, layer_scale: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.mlp = _MLP(width)
        # a parameter read in forward (ConvNeXt's and CaiT's layer scale): torch.fx finds it
        # by a search of every parameter of the model, each time
        self.scale = nn.Parameter(torch.full((width,), 0.1)) if layer_scale else None

    def forward(self, x):
        y = self.mlp(self.norm(x))
        return x + (self.scale * y if self.scale is not None else y * 0.1)


class _Stage(nn.Module):
    def __init__(self, blocks: int, width: int, layer_scale: bool) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(_Block(width, layer_scale) for _ in range(blocks))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class Nested(nn.Module):
    """``stages`` x ``blocks`` x (norm -> mlp (linear, GELU, linear) -> scale -> add): modules
    four levels deep (stages.i.blocks.j.mlp.fc1), six graph nodes a block (seven with a
    layer-scale parameter)."""

    def __init__(self, stages: int, blocks: int, width: int = 8, layer_scale: bool = False):
        super().__init__()
        self.stages = nn.ModuleList(_Stage(blocks, width, layer_scale) for _ in range(stages))

    def forward(self, x):
        for stage in self.stages:
            x = stage(x)
        return x


def nested(nodes: int, layer_scale: bool = False) -> Nested:
    return Nested(10, max(1, nodes // (70 if layer_scale else 60)), layer_scale=layer_scale)


def nested_layer_scale_10000():
    return nested(10000, layer_scale=True)


def nested_10000():
    return nested(10000)


def nested_20000():
    return nested(20000)


def nested_50000():
    return nested(50000)


def nested_example_inputs():
    return (torch.randn(2, 8),)


def llama_32():
    """A LLaMA of 32 small layers (transformers, random weights): many identical layers."""
    from transformers import LlamaConfig, LlamaModel

    from tests.models.hf_models import decoder

    return decoder(LlamaConfig, LlamaModel, layers=32, attn=None, return_dict=False)
