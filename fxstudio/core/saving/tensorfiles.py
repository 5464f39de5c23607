"""Tensors in safetensors files as fxstudio writes and reads them: what a file can hold
(no two tensors in one piece of memory) and what comes back (ordinary, aligned copies).

Example:
    >>> import tempfile, os
    >>> from safetensors.torch import save_file
    >>> x = torch.arange(4.0)
    >>> path = os.path.join(tempfile.mkdtemp(), "t.safetensors")
    >>> save_file(storable({"x": x, "same": x, "view": x[1:]}), path)
    >>> {k: v.tolist() for k, v in sorted(read_tensors(path).items())}
    {'same': [0.0, 1.0, 2.0, 3.0], 'view': [1.0, 2.0, 3.0], 'x': [0.0, 1.0, 2.0, 3.0]}
"""

from __future__ import annotations

import os

import torch
from safetensors.torch import load_file


def storable(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """``tensors`` as safetensors saves them: on the CPU, contiguous, detached, and none in
    memory another one uses (safetensors refuses to save shared storage: an output that is
    its input, a tensor returned twice, two views of one buffer); only those are copied.

    >>> x = torch.zeros(4)
    >>> out = storable({"a": x, "b": x, "c": x[:2]})
    >>> [out[k].data_ptr() == x.data_ptr() for k in "abc"]
    [True, False, False]
    """
    seen: set[tuple[str, int]] = set()
    out = {}
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        storage = t.untyped_storage()
        key = (str(t.device), storage.data_ptr())
        if storage.nbytes() and key in seen:
            t = t.clone()
        seen.add(key)
        out[name] = t
    return out


def read_tensors(path: str | os.PathLike[str]) -> dict[str, torch.Tensor]:
    """A safetensors file's tensors as ordinary (torch-allocated, aligned) copies: tensors
    ``load_file`` gives point into the file at whatever offset its header leaves, which can
    send a computation down another kernel path."""
    return {k: v.clone() for k, v in load_file(str(path)).items()}
