"""What can be inserted: torch functions, ``torch.nn.functional``, Tensor methods, ``nn``
module classes and the model's own parameters and buffers -- the insert palette's list.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:simple")
    >>> entries = catalogue(doc)
    >>> [e.text for e in search(entries, "leaky")][:3]
    ['torch.nn.functional.leaky_relu', 'torch.nn.functional.leaky_relu_', 'nn.LeakyReLU']
    >>> search(entries, "fc1.w")[0].text
    'fc1.weight'
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cache

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

from fxstudio.core.graph.document import GraphDocument


@dataclass(frozen=True)
class Entry:
    """One thing to insert: ``op`` and ``target`` as the edits take them."""

    text: str  # what the list shows and the search matches
    op: str  # call_function, call_method, call_module, get_attr
    target: str  # a function's full name, a method name, nn.Class, or an attribute path
    kind: str  # "torch", "functional", "method", "module", "weight"


@cache
def _library() -> tuple[Entry, ...]:
    out: list[Entry] = []
    for name in sorted(dir(torch)):
        obj = getattr(torch, name, None)
        if name[0].isalpha() and name[0].islower() and callable(obj) and not inspect.isclass(obj):
            if not inspect.ismodule(obj):
                out.append(Entry(f"torch.{name}", "call_function", f"torch.{name}", "torch"))
    for name in sorted(dir(F)):
        obj = getattr(F, name, None)
        if not name.startswith("_") and callable(obj) and not inspect.isclass(obj):
            full = f"torch.nn.functional.{name}"
            out.append(Entry(full, "call_function", full, "functional"))
    for name in sorted(dir(torch.Tensor)):
        if not name.startswith("_") and callable(getattr(torch.Tensor, name, None)):
            out.append(Entry(f"Tensor.{name}", "call_method", name, "method"))
    for name in sorted(dir(nn)):
        obj = getattr(nn, name, None)
        if inspect.isclass(obj) and issubclass(obj, nn.Module) and not name.startswith("_"):
            if obj.__module__.startswith("torch.nn.modules"):
                out.append(Entry(f"nn.{name}", "call_module", f"nn.{name}", "module"))
    return tuple(out)


def catalogue(doc: GraphDocument) -> list[Entry]:
    """Everything insertable into ``doc``: the library, then its parameters and buffers."""
    gm = doc.graph_module
    weights = [name for name, _ in gm.named_parameters()] + [n for n, _ in gm.named_buffers()]
    return [*_library(), *(Entry(w, "get_attr", w, "weight") for w in weights)]


def search(entries: list[Entry], query: str) -> list[Entry]:
    """Entries whose text contains every word of ``query`` (case-insensitive); those whose
    last part starts with the first word come first."""
    words = query.lower().split()
    if not words:
        return list(entries)
    hits = [e for e in entries if all(w in e.text.lower() for w in words)]
    first = words[0]
    return sorted(hits, key=lambda e: (not e.text.lower().rsplit(".", 1)[-1].startswith(first),))
