"""Run a module in eval mode for a while, leaving its train/eval flags as they were.

Example:
    >>> import torch
    >>> m = torch.nn.Sequential(torch.nn.Dropout(), torch.nn.Linear(2, 2))
    >>> with eval_mode(m):
    ...     print(m.training, m[0].training)
    False False
    >>> m.training, m[0].training
    (True, True)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from torch import nn


@contextlib.contextmanager
def eval_mode(module: nn.Module) -> Iterator[None]:
    """Run in eval mode, then restore each submodule's flag.

    Shape propagation must not change the model: in train mode a real run would update
    batch-norm statistics and draw dropout masks (and batch norm refuses a batch of one).
    The flags are set directly: an unlifted ``torch.export`` module refuses ``.eval()``.
    """
    flags = [(m, m.training) for m in module.modules()]
    for m, _ in flags:
        m.training = False
    try:
        yield
    finally:
        for m, training in flags:
            m.training = training
