"""Inductor's records of which FX nodes each kernel came from, and a compiled call's profiled
events matched to them (:mod:`.kernels` times and shows the result).

Inductor records, for every kernel it generates (fused C++/Triton kernels and the calls of
library kernels it keeps, such as ``extern_kernels.convolution``), the post-grad nodes it
computes, and for those the pre-grad nodes -- which, when the graph handed to
``torch.compile`` is the document's ``GraphModule``, are the document's own nodes.  A
kernel's events inside the compiled graph's call are matched, in call order, to the kernels
inductor recorded, by :func:`base_name`.

Example:
    >>> base_name("graph_0_cpp_fused_relu_3"), base_name("extern_kernels.convolution")
    ('cpp_fused_relu_3', 'convolution')
    >>> base_name("aten::addmm"), base_name("torch.ops.aten.topk.default")
    ('addmm', 'topk')
    >>> base_name("torch.ops.mkldnn._convolution_pointwise_.binary")
    '_convolution_pointwise_'
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from fxstudio.core.fxcompat.compiler import CACHE_EVENTS

#: Events inside a compiled graph's call that are no kernel: buffers made or viewed.
NOT_KERNELS = {"empty", "empty_strided", "as_strided", "resize_", "set_", "view", "detach"}


def base_name(name: str) -> str:
    """A kernel's name as both the profiler and inductor's records can spell it: without the
    ``graph_<id>_`` prefix, a namespace (``aten::``, ``extern_kernels.``) or an overload."""
    name = re.sub(r"^graph_\d+_", "", name.split(":")[-1] if "::" in name else name)
    parts = [p for p in name.split(".") if p]
    if len(parts) >= 4 and parts[:2] == ["torch", "ops"]:  # torch.ops.NAMESPACE.OP.OVERLOAD
        return parts[3]
    while len(parts) > 1 and parts[-1] in ("default", "Tensor", "Scalar", "out"):
        parts.pop()
    return parts[-1] if parts else name


@dataclass
class Recorded:
    """One compiled graph's kernels as inductor recorded them, in call order."""

    kernels: list[tuple[str, list[str]]]  # (name:number, the post-grad nodes it computes)
    post_to_pre: dict[str, list[str]]


def records(payloads: list[tuple[str, Any]]) -> list[Recorded]:
    """The provenance artifacts among ``payloads`` (:func:`~fxstudio.core.fxcompat.
    compiler.inductor_provenance`), one per compiled graph, each kernel with the nodes it computes
    (:func:`_computed`)."""
    out = []
    for name, payload in payloads:
        if name in CACHE_EVENTS or not payload:
            continue
        data = json.loads(payload) if isinstance(payload, str) else payload
        code = data.get("cppCodeToPost") or {}
        kernels = _computed(sorted(code.items(), key=lambda kv: _number(kv[0])))
        out.append(Recorded(list(kernels.items()), data.get("postToPre") or {}))
    return out


def _number(key: str) -> int:
    """The call's number of a recorded kernel ``name:number`` (its order in the wrapper)."""
    tail = key.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def cache_said(payloads: list[tuple[str, Any]]) -> str:
    """What inductor's FX graph cache said last: hit, miss, bypass (or unknown)."""
    said = [name for name, _ in payloads if name in CACHE_EVENTS]
    return said[-1].removeprefix("fx_graph_cache_") if said else "unknown"


def compiled_fresh(payloads: list[tuple[str, Any]], graphs: int) -> bool:
    """Whether every one of ``graphs`` compiled graphs was compiled here, not answered by a
    cache: a cache's answer brings the records of the graph that was cached, whose nodes may
    have had other names (the cache keys on the computation: ``h = h * 2`` and ``return h *
    2`` are one entry, their node named ``h`` in one and ``mul`` in the other).

    >>> compiled_fresh([("fx_graph_cache_miss", None)], 1)
    True
    >>> compiled_fresh([("fx_graph_cache_hit", None), ("fx_graph_cache_miss", None)], 2)
    False
    """
    said = [name for name, _ in payloads if name in CACHE_EVENTS]
    return "fx_graph_cache_hit" not in said and len(said) >= graphs


def _op(key: str) -> str:
    """A recorded kernel's name without its call's number, as :func:`base_name` spells it."""
    return base_name(key.rsplit(":", 1)[0])


def is_library(key: str) -> bool:
    """A library kernel inductor calls (``extern_kernels.mm``, an ATen fallback), not one it
    generated."""
    return not key.startswith(("cpp_", "triton_"))


def _computed(kernels: list[tuple[str, list[str]]]) -> dict[str, list[str]]:
    """Each recorded kernel's post-grad nodes, as it computes them.  Inductor records, as a
    library (fallback) kernel's origins, every node its inputs were made from -- an
    attention's mask and rotary embedding, made by kernels of their own: a library kernel
    computes the nodes of its op (all it recorded when none is).  A generated kernel keeps
    all it recorded: a convolution among them is real work for it (resnet18's bn+relu kernel
    before a 512-channel conv also copies that conv's 512x512x3x3 weight to channels-last,
    every call: 3 ms, where the bn+relu alone is microseconds).

    >>> got = _computed([("cpp_fused_sdpa_add_0:1", ["sdpa", "iota", "add_4"]),
    ...                  ("torch.ops.aten.sdpa.default:2", ["sdpa", "iota", "add_4"]),
    ...                  ("extern_kernels.mm:3", ["mm_3"]),
    ...                  ("extern_kernels.convolution:4", ["permute", "clone"])])
    >>> [got[k] for k in got]
    [['sdpa', 'iota', 'add_4'], ['sdpa'], ['mm_3'], ['permute', 'clone']]
    """
    return {key: (_of_op(key, post) if is_library(key) else []) or post for key, post in kernels}


def unnamed_calls(recorded: list[Recorded]) -> int:
    """Library kernels with no recorded node of their op (a pattern pass made the call: its
    node is named ``fn_N`` and keeps one origin; :func:`_computed` left them all it
    recorded)."""
    return sum(
        1
        for rec in recorded
        for key, post in rec.kernels
        if is_library(key) and not _of_op(key, post)
    )


def _of_op(key: str, post: list[str]) -> list[str]:
    """The post-grad nodes of a library kernel's own op."""
    op = _op(key)
    return [node for node in post if re.sub(r"_\d+$", "", node) == op]


#: Library ops that take weights: a generated kernel computing part of one copies a weight
#: (or an input) to the layout the library takes.
WEIGHTED = {"convolution", "mm", "addmm", "bmm"}


def copying_kernels(recorded: list[Recorded]) -> int:
    """Kernels inductor generated that also compute part of the node of a library call that
    takes weights (:data:`WEIGHTED`): on the CPU, a weight copied to channels-last every
    call, which freezing does once.  (Part of an attention's node -- its mask made
    additive -- is not counted.)

    >>> copying_kernels([Recorded([("cpp_fused_convolution_0:1", ["convolution"]),
    ...                      ("extern_kernels.convolution:2", ["convolution"]),
    ...                      ("cpp_fused_where_1:3", ["sdpa", "where"]),
    ...                      ("torch.ops.aten.sdpa.default:4", ["sdpa"])], {})])
    1
    """
    count = 0
    for rec in recorded:
        weighted = [nodes for key, nodes in rec.kernels if is_library(key) and _op(key) in WEIGHTED]
        called = {n for nodes in weighted for n in nodes}
        count += sum(1 for key, post in rec.kernels if not is_library(key) and called & set(post))
    return count


def attribute(
    recorded: list[Recorded], call: list[list[tuple[str, float]]]
) -> list[tuple[str, set[str], float, bool, int]]:
    """One call's events matched to the recorded kernels: (kernel, the pre-grad nodes it came
    from, seconds, library, the index of its graph); events no record matches and that make
    no buffer are kernels of no node.  A kernel of the second graph on is named with its
    graph, counted from 1 (names repeat): ``graph 2: cpp_fused_add_mul_0:1``."""
    out = []
    unknown: dict[str, int] = defaultdict(int)
    for g, events in enumerate(call):
        rec = recorded[g] if g < len(recorded) else Recorded([], {})
        graph = f"graph {g + 1}: " if g else ""
        waiting: dict[str, list[tuple[str, list[str]]]] = defaultdict(list)
        for key, post in rec.kernels:
            waiting[_op(key)].append((key, post))
        for name, seconds in events:
            base = base_name(name)
            if waiting.get(base):
                key, post = waiting[base].pop(0)
                pre = {n for node in post for n in rec.post_to_pre.get(node, [])}
                out.append((graph + key, pre, seconds, is_library(key), g))
            elif base not in NOT_KERNELS:
                unknown[name] += 1
                library = name.startswith("aten::")
                out.append((f"{graph}{name}:{unknown[name]}", set(), seconds, library, g))
    return out
