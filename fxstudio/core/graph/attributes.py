"""A model's submodules and attributes, found by their dotted path (``layer1.0.conv1``).

Example:
    >>> import torch
    >>> m = torch.nn.Sequential(torch.nn.Linear(2, 3))
    >>> submodule_at(m, "0"), submodule_at(m, "1")
    (Linear(in_features=2, out_features=3, bias=True), None)
    >>> attribute(m, "0.weight").shape, attribute(m, "0.scale")
    (torch.Size([3, 2]), None)
"""

from __future__ import annotations

from typing import Any

from torch import nn


def submodule_at(gm: nn.Module, path: str) -> nn.Module | None:
    """The submodule at a dotted ``path``, or ``None`` where there is none."""
    try:
        return gm.get_submodule(path)
    except AttributeError:
        return None


def attribute(gm: Any, path: str) -> Any:
    """The attribute at a dotted ``path`` (``layer1.0.conv1``, ``fc.weight``), or ``None``."""
    obj: Any = gm
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj
