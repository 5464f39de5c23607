"""fxstudio: a desktop editor for PyTorch torch.fx graphs."""

__version__ = "0.1.0"
