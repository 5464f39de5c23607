"""torch.compile's internals fxstudio reads: how many graphs Dynamo compiled, a fresh start
(its caches forgotten), ``explain``'s graphs and break reasons, and which FX nodes each kernel
Inductor generates came from (its provenance records and cache events, read from torch's
structured trace log, the one tlparse reads).

Example:
    >>> reset_dynamo()
    >>> compiled_graph_count() >= 0
    True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = [
    "CACHE_EVENTS",
    "INDUCTOR_ARTIFACTS",
    "compiled_graph_count",
    "dynamo_explain",
    "inductor_provenance",
    "reset_dynamo",
]


def compiled_graph_count() -> int:
    """Graphs torch.compile has compiled so far in this process."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def reset_dynamo() -> None:
    """Forget what torch.compile has compiled (a fresh start for the next compile)."""
    import torch._dynamo

    torch._dynamo.reset()


def dynamo_explain(module: Any, inputs: tuple[Any, ...]) -> Any:
    """``torch._dynamo.explain(module)(*inputs)``: the graphs Dynamo made and its break
    reasons (``graph_count``, ``graphs``, ``break_reasons`` with ``reason``, ``user_stack``)."""
    import torch._dynamo

    return torch._dynamo.explain(module)(*inputs)


#: Inductor's structured-log artifacts fxstudio reads: which post-grad nodes each kernel came
#: from and which pre-grad (the document's) nodes those came from; whether the FX graph cache
#: answered the compile.
INDUCTOR_ARTIFACTS = ("inductor_provenance_tracking_node_mappings",)
CACHE_EVENTS = ("fx_graph_cache_hit", "fx_graph_cache_miss", "fx_graph_cache_bypass")


@contextlib.contextmanager
def inductor_provenance(
    freezing: bool = False, cached: bool = True
) -> Iterator[list[tuple[str, Any]]]:
    """Inside: inductor tracks which FX nodes each kernel it generates came from, and its CPU
    kernels mark themselves for ``torch.profiler`` (``graph_<id>_<kernel>``); with
    ``freezing``, it folds the weights as constants (inference only: what is computed from
    weights alone -- layout copies, folded batch norms -- runs once, at compile time).
    Yields a list that fills, compile after compile, with ``(name, payload)``: the
    provenance artifacts of
    :data:`INDUCTOR_ARTIFACTS` (JSON text) and the cache events of :data:`CACHE_EVENTS`
    (payload None) -- read from torch's structured trace log, the one tlparse reads.

    A graph answered from inductor's FX graph cache (or AOTAutograd's) comes with the records
    of the graph that was cached -- which may have had other node names (the cache keys
    on the computation, not the names): ``cached=False`` compiles without those caches, so
    the records are of this very graph."""
    import logging

    import torch._inductor.config as inductor_config

    got: list[tuple[str, Any]] = []

    class Listener(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            meta = getattr(record, "metadata", None)
            if not isinstance(meta, dict):
                return
            if "artifact" in meta and meta["artifact"].get("name") in INDUCTOR_ARTIFACTS:
                got.append((meta["artifact"]["name"], getattr(record, "payload", None)))
            for name in CACHE_EVENTS:
                if name in meta or meta.get("artifact", {}).get("name") == name:
                    got.append((name, None))

    trace_log = logging.getLogger("torch.__trace")
    listener = Listener(logging.DEBUG)
    level = trace_log.level
    trace_log.setLevel(logging.DEBUG)
    trace_log.addHandler(listener)
    try:
        patch: dict[str, Any] = {
            "trace.provenance_tracking_level": 1,
            "cpp.enable_kernel_profile": True,
            "freezing": freezing,
        }
        if not cached:  # (AOTAutograd's cache is not used without inductor's)
            patch["fx_graph_cache"] = False
        with inductor_config.patch(patch):
            yield got
    finally:
        trace_log.removeHandler(listener)
        trace_log.setLevel(level)
