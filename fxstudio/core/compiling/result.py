"""What compiling a model tells (:func:`~fxstudio.core.compiling.model.compile_model`, for the
command line and the window alike): where Dynamo breaks the model, the speed-up of the
compiled model over eager with its CI, and each kernel the compiler made, timed, with the
graph of Dynamo's it belongs to, the user's lines it computes and the document's nodes.

A kernel of a compiled *document graph* (a model Dynamo captures whole) names the document's
nodes it was generated from; a kernel of a compiled *eager model* (a model with graph breaks,
compiled as torch.compile does) names the ops of Dynamo's graph it came from, their lines,
and -- when a document is open -- the document's nodes made at those lines.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Literal

from fxstudio.core.compiling.breaks import Explained
from fxstudio.core.results import Json
from fxstudio.core.runtime.speedup import Speedup
from fxstudio.core.runtime.timer import Timing

Lines = tuple[tuple[str, int], ...]


def where(lines: Lines, limit: int = 6) -> str:
    """Lines of the user's code, short: ``model.py:12, 13; other.py:4``.

    >>> where((("/m/model.py", 12), ("/m/model.py", 13), ("/m/other.py", 4)))
    'model.py:12, 13; other.py:4'
    """
    by_file: dict[str, list[int]] = defaultdict(list)
    for file, line in lines[:limit]:
        by_file[os.path.basename(file)].append(line)
    text = "; ".join(f"{f}:{', '.join(map(str, ns))}" for f, ns in by_file.items())
    return text + (" …" if len(lines) > limit else "")


@dataclass(frozen=True)
class Kernel:
    name: str  # inductor's, with its call's number: "cpp_fused_relu_1:3"
    time_s: float  # mean over the middle calls, per call
    share: float  # of the profiled call
    nodes: tuple[str, ...]  # the document's nodes it was generated from, in graph order
    library: bool  # a library kernel inductor calls (convolution, addmm), not generated
    times_s: tuple[float, ...] = field(repr=False, default=())
    graph: int = 0  # which of the compiled graphs, counted from 0
    lines: Lines = ()  # the user's lines (file, line) it computes
    ops: tuple[str, ...] = ()  # Dynamo's graph's ops it came from (an eager model compiled)

    @property
    def short_name(self) -> str:
        """Its name without the graph it is in (``graph 2: ``)."""
        return self.name.split(": ", 1)[-1]

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "time_s": self.time_s,
            "share": self.share,
            "nodes": list(self.nodes),
            "library": self.library,
            "graph": self.graph,
            "lines": [{"file": f, "line": n} for f, n in self.lines],
            "ops": list(self.ops),
        }


@dataclass(frozen=True)
class ModuleSpeed:
    """One module, eager (its nodes' profiled times) vs compiled (the kernels made of its
    nodes alone), call by call; ``spanning``: kernels fusing its nodes with others' (their
    time is in no single module)."""

    path: str
    type_name: str
    eager_s: float
    compiled_s: float
    speed: Speedup | None  # None: no kernel of its own (all its nodes fused beyond it)
    kernels: int
    spanning: int

    def to_json(self) -> Json:
        return {
            "path": self.path,
            "type": self.type_name,
            "eager_s": self.eager_s,
            "compiled_s": self.compiled_s,
            "speedup": self.speed.to_json() if self.speed else None,
            "kernels": self.kernels,
            "spanning": self.spanning,
        }


#: What was compiled: the document's graph (Dynamo captures the model whole), or the eager
#: model as torch.compile compiles it (Dynamo's graphs, the breaks between them run eagerly).
Source = Literal["graph", "model"]


@dataclass
class Compiled:
    backend: str
    mode: str
    device: str
    compile_s: float  # the first call, compiling (with the caches as they were)
    cache: str  # what the FX graph cache said then: hit / miss / bypass / unknown
    warm_compile_s: float  # compiling again, Dynamo reset (inductor's caches warm)
    eager: Timing
    compiled: Timing
    speed: Speedup
    kernels: list[Kernel]
    profiled_s: float  # one profiled call (the kernels' and unattributed times add up to it)
    unattributed_s: float
    no_kernel: list[str]  # computing nodes no kernel came from (views, folded, dropped)
    graphs: int  # graphs Dynamo compiled
    modules: list[ModuleSpeed] = field(default_factory=list)  # the tree, parents first
    env: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    freezing: bool = False  # inductor folded the weights as constants
    source: Source = "graph"
    explained: Explained | None = None  # Dynamo's breaks of the eager model, when run

    @property
    def attributed(self) -> float:
        """The share of kernels traced to at least one node (the document's, or an op of
        Dynamo's graph when the eager model was compiled)."""
        if not self.kernels:
            return 0
        return sum(1 for k in self.kernels if k.nodes or k.ops) / len(self.kernels)

    @property
    def kernel_share(self) -> float:
        """The share of the profiled call spent inside kernels."""
        return sum(k.share for k in self.kernels)

    def kernels_of(self, node: str) -> list[Kernel]:
        return [k for k in self.kernels if node in k.nodes]

    def graph_kernels(self, index: int) -> list[Kernel]:
        """The kernels of compiled graph ``index``, slowest first."""
        return sorted((k for k in self.kernels if k.graph == index), key=lambda k: -k.time_s)

    def to_json(self) -> Json:
        return {
            **(self.explained.to_json() if self.explained is not None else {}),
            "compiled_from": "eager model" if self.source == "model" else "document graph",
            "backend": self.backend,
            "mode": self.mode,
            "freezing": self.freezing,
            "device": self.device,
            "compiled_graphs": self.graphs,
            "compile_s": self.compile_s,
            "cache": self.cache,
            "warm_compile_s": self.warm_compile_s,
            "eager": self.eager.to_json(),
            "compiled": self.compiled.to_json(),
            "speedup": self.speed.to_json(),
            "profiled_s": self.profiled_s,
            "kernels": [k.to_json() for k in self.kernels],
            "kernel_share": self.kernel_share,
            "attributed": self.attributed,
            "unattributed_s": self.unattributed_s,
            "no_kernel": self.no_kernel,
            "modules": [m.to_json() for m in self.modules],
            "environment": self.env,
            "notes": self.notes,
        }

    def describe(self, top: int = 10, breaks: bool = True) -> str:
        """In words; ``breaks``: Dynamo's breaks first (the command line said them already)."""
        s = self.speed
        lines = [self.explained.describe()] if self.explained is not None and breaks else []
        what = " of the eager model" if self.source == "model" else ""
        lines += [
            f"torch.compile(backend={self.backend!r}, mode={self.mode!r}"
            f"{', freezing' if self.freezing else ''}){what} on {self.device}: "
            f"{self.graphs} graph{'s' if self.graphs != 1 else ''}, compiled in "
            f"{self.compile_s:.2f} s (FX graph cache: {self.cache}; again with warm caches: "
            f"{self.warm_compile_s:.2f} s)",
            f"eager {s.before_s * 1e3:.3f} ms, compiled {s.after_s * 1e3:.3f} ms: {s.describe()}",
        ]
        if self.kernels:
            traced = "Dynamo's ops and your lines" if self.source == "model" else "FX nodes"
            lines.append(
                f"{len(self.kernels)} kernels, {self.kernel_share:.0%} of a profiled call "
                f"({self.profiled_s * 1e3:.3f} ms); {self.attributed:.0%} traced to {traced}; "
                f"outside kernels {self.unattributed_s * 1e3:.3f} ms"
                + (" (guards, wrappers, your code at the breaks)" if self.source == "model" else "")
            )
            if self.graphs > 1 or self.source == "model":
                lines += self._by_graph(top)
            else:
                lines += [_row(k) for k in sorted(self.kernels, key=lambda k: -k.time_s)[:top]]
            lines += self._modules(top)
            if self.no_kernel:
                lines.append(
                    f"no kernel of their own ({len(self.no_kernel)}): "
                    + ", ".join(self.no_kernel[:12])
                    + (" …" if len(self.no_kernel) > 12 else "")
                )
        lines += self.notes
        return "\n".join(lines)

    def _by_graph(self, top: int) -> list[str]:
        out = []
        for g in sorted({k.graph for k in self.kernels}):
            kernels = self.graph_kernels(g)
            known = self.explained is not None and g < len(self.explained.graph_stacks)
            at = self.explained.graph_lines(g) if known else ()  # type: ignore[union-attr]
            spent = sum(k.time_s for k in kernels)
            out.append(
                f"graph {g + 1}: {len(kernels)} kernel{'s' if len(kernels) != 1 else ''}, "
                f"{spent * 1e3:.3f} ms" + (f" (lines {where(tuple(at))})" if at else "")
            )
            out += ["  " + _row(k) for k in kernels[:top]]
            if len(kernels) > top:
                out.append(f"    … {len(kernels) - top} more")
        return out

    def _modules(self, top: int) -> list[str]:
        tops = [m for m in self.modules if "." not in m.path and m.speed is not None]
        if not tops:
            return []
        lines = ["per module (profiled on both sides; kernels fusing across modules are in none):"]
        for m in tops[:top]:
            span = f", {m.spanning} kernels spanning" if m.spanning else ""
            lines.append(
                f"  {m.path} ({m.type_name}): {m.eager_s * 1e3:.3f} → "
                f"{m.compiled_s * 1e3:.3f} ms, {m.speed.verdict}{span}"  # type: ignore[union-attr]
            )
        return lines


def _row(k: Kernel) -> str:
    """One kernel: its time, share, name, lines and nodes (or Dynamo's ops)."""
    nodes = k.nodes or k.ops
    text = ", ".join(nodes[:6]) + (" …" if len(nodes) > 6 else "")
    at = f"  at {where(k.lines, 4)}" if k.lines else ""
    return f"  {k.time_s * 1e3:9.3f} ms {k.share:6.1%}  {k.short_name}{at}  <- {text or '?'}"
