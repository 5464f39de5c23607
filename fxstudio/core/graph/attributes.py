"""A model's attributes, found by their dotted path (``layer1.0.conv1``, ``fc.weight``); its
submodules by path are :func:`~fxstudio.core.fxcompat.modules.submodule_at`'s
(it reads a module's registered children).

Example:
    >>> import torch
    >>> m = torch.nn.Sequential(torch.nn.Linear(2, 3))
    >>> attribute(m, "0.weight").shape, attribute(m, "0.scale")
    (torch.Size([3, 2]), None)
"""

from __future__ import annotations

from typing import Any


def attribute(gm: Any, path: str) -> Any:
    """The attribute at a dotted ``path`` (``layer1.0.conv1``, ``fc.weight``), or ``None``."""
    obj: Any = gm
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj
