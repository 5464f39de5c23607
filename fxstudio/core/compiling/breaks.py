"""Where Dynamo breaks the user's model into several graphs, and why: ``torch._dynamo.explain``
run over the eager model on its example inputs, each break with its reason, the user's file
and line (the innermost frame of the user's code), the stack of the user's frames, what kind
of break it is and what to change.

A model Dynamo captures whole has no breaks, and says so.

Example:
    >>> from fxstudio.core.model.loading import load_model
    >>> explained = explain_breaks(load_model("examples:resnet"))
    >>> explained.graphs, explained.breaks, explained.describe().splitlines()[0]
    (1, [], 'One graph: Dynamo captures the whole forward (no graph breaks).')
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field
from typing import Any

from fxstudio.core.compiling.quiet import muted_stdout
from fxstudio.core.errors import UserError, is_library_file
from fxstudio.core.fxcompat.compiler import dynamo_explain, reset_dynamo
from fxstudio.core.graph.weights import faked, has_weights
from fxstudio.core.process import modelcode
from fxstudio.core.results import Json

#: Kinds of break: (words in Dynamo's reason, a title, what to change).
KINDS = (
    (
        ("generic_jump", "data-dependent", "Data-dependent"),
        "A branch on a tensor's value",
        "Dynamo cannot know which way `if` goes on a tensor's value, so it ends the graph "
        "there and starts another after it. Compute both sides and pick with torch.where, "
        "use torch.cond, or branch on a shape or a Python flag instead.",
    ),
    (
        ("print", "logging", "logger"),
        "print or logging",
        "A print or log call inside forward runs Python that Dynamo does not put in a graph. "
        "Remove it, or guard it with `if not torch.compiler.is_compiling():`.",
    ),
    (
        (".item()", "item", "_local_scalar_dense", "scalar"),
        "A tensor turned into a Python number",
        "`.item()` (or int()/float() of a tensor) leaves the graph to read the value. Keep it a "
        "tensor, or set torch._dynamo.config.capture_scalar_outputs = True.",
    ),
    (
        ("numpy", "np."),
        "A NumPy call",
        "NumPy runs outside the graph. Use the torch op of the same name on tensors.",
    ),
    (
        ("builtin", "Unsupported", "unsupported"),
        "A call Dynamo cannot trace",
        "Dynamo cannot put this call in a graph. Move it out of forward, replace it with a "
        "torch op, or mark the function with torch.compiler.disable if it must stay.",
    ),
)


@dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str
    text: str

    def to_json(self) -> Json:
        return {"file": self.file, "line": self.line, "function": self.function, "text": self.text}


@dataclass(frozen=True)
class GraphBreak:
    reason: str  # Dynamo's, first line
    detail: str  # all of it
    kind: str  # one of KINDS' titles, or "Another break"
    advice: str
    stack: tuple[Frame, ...]  # the user's frames, outermost first

    @property
    def where(self) -> Frame | None:
        return self.stack[-1] if self.stack else None

    def to_json(self) -> Json:
        at = self.where
        return {
            "reason": self.reason,
            "kind": self.kind,
            "advice": self.advice,
            "file": at.file if at else None,
            "line": at.line if at else None,
            "stack": [f.to_json() for f in self.stack],
        }


@dataclass
class Explained:
    graphs: int  # the graphs Dynamo made
    breaks: list[GraphBreak] = field(default_factory=list)
    graph_nodes: list[int] = field(default_factory=list)  # nodes in each graph
    seconds: float = 0.0
    #: each graph's ops (not its inputs and output), each as the user's frames that made it
    graph_stacks: list[list[tuple[Frame, ...]]] = field(default_factory=list)
    #: the names of those ops in Dynamo's graph (as inductor's records name them)
    graph_names: list[list[str]] = field(default_factory=list)

    def frames(self, index: int, name: str) -> tuple[Frame, ...] | None:
        """The user's frames that made the op ``name`` of graph ``index`` (None: no such op)."""
        if not 0 <= index < len(self.graph_names):
            return None
        names = self.graph_names[index]
        return self.graph_stacks[index][names.index(name)] if name in names else None

    def graph_lines(self, index: int) -> list[tuple[str, int]]:
        """The lines of the user's code graph ``index`` computes (innermost frames)."""
        seen = {(s[-1].file, s[-1].line) for s in self.graph_stacks[index] if s}
        return sorted(seen)

    def to_json(self) -> Json:
        return {
            "graphs": self.graphs,
            "graph_nodes": self.graph_nodes,
            "graph_lines": [
                [{"file": f, "line": n} for f, n in self.graph_lines(i)]
                for i in range(len(self.graph_stacks))
            ],
            "graph_breaks": [b.to_json() for b in self.breaks],
            "explain_s": self.seconds,
        }

    def describe(self) -> str:
        if not self.breaks:
            return "One graph: Dynamo captures the whole forward (no graph breaks)."
        lines = [
            f"{self.graphs} graphs ({', '.join(map(str, self.graph_nodes))} nodes), "
            f"{len(self.breaks)} graph breaks:"
        ]
        for i, b in enumerate(self.breaks, 1):
            at = b.where
            place = f"{at.file}:{at.line} ({at.text})" if at else "(no user frame)"
            lines += [f"  {i}. {place}", f"     {b.kind}: {b.reason}", f"     Fix: {b.advice}"]
        return "\n".join(lines)


def _kind(reason: str) -> tuple[str, str]:
    for words, title, advice in KINDS:
        if any(w in reason for w in words):
            return title, advice
    return "Another break", "See Dynamo's reason; the line is where the graph ends."


_TRACE_FRAME = re.compile(
    r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)\n(?P<text>.*)'
)


def _traced_frames(stack_trace: str | None) -> tuple[Frame, ...]:
    """The user's frames of an FX node's ``stack_trace`` (outermost first).

    >>> _traced_frames('  File "/m/a.py", line 7, in forward\\n    if h.sum() > 0:\\n')
    (Frame(file='/m/a.py', line=7, function='forward', text='if h.sum() > 0:'),)
    """
    frames = []
    for m in _TRACE_FRAME.finditer(stack_trace or ""):
        if not is_library_file(m["file"]):
            frames.append(Frame(m["file"], int(m["line"]), m["fn"], m["text"].strip()))
    return tuple(frames)


def _frames(stack: Any) -> tuple[Frame, ...]:
    out = []
    for f in stack or ():
        file = str(getattr(f, "filename", ""))
        if file and not is_library_file(file):
            out.append(
                Frame(file, int(getattr(f, "lineno", 0) or 0), str(f.name), str(f.line or ""))
            )
    return tuple(out)


def explain_breaks(loaded: Any, train: bool = False) -> Explained:
    """``loaded``: a :class:`~fxstudio.core.model.loading.LoadedModel` (the eager module and its
    example inputs), run in eval mode unless ``train``.  Runs Dynamo's explain once;
    nothing is compiled to code."""
    import torch

    module, inputs = loaded.module.train(train), tuple(loaded.example_inputs)
    fake = contextlib.nullcontext(inputs) if has_weights(module) else faked(module, inputs)
    t0 = time.perf_counter()
    # Dynamo traces the model's code (and imports torch's lazy modules the first time): one
    # thread at a time with the other captures (:mod:`fxstudio.core.process.modelcode`)
    with modelcode.one_turn():
        reset_dynamo()  # a fresh cache: every break is seen again
        try:
            # (a structure-only model: on fake tensors made from its meta weights)
            with torch.no_grad(), muted_stdout(), fake as args:  # a print: not our report's
                out = dynamo_explain(module, args)
        except Exception as exc:
            first = str(exc).splitlines()[0] if str(exc) else ""
            raise UserError(
                f"Dynamo could not run the model: {type(exc).__name__}: {first}"
            ) from exc
        finally:
            reset_dynamo()
    seconds = time.perf_counter() - t0
    breaks: list[GraphBreak] = []
    seen: set[tuple[Any, ...]] = set()
    for r in out.break_reasons:
        detail = str(r.reason)
        first = next((line.strip() for line in detail.splitlines() if line.strip()), detail)
        kind, advice = _kind(detail)
        frames = _frames(r.user_stack)
        key = (frames[-1] if frames else None, kind)
        if key in seen:  # Dynamo tells a break again when it resumes in an inlined call
            continue
        seen.add(key)
        breaks.append(GraphBreak(first, detail, kind, advice, frames))
    nodes = [len(g.graph.nodes) for g in out.graphs]
    ops = [
        [n for n in g.graph.nodes if n.op not in ("placeholder", "output", "get_attr")]
        for g in out.graphs
    ]
    stacks = [[_traced_frames(n.meta.get("stack_trace")) for n in g] for g in ops]
    names = [[n.name for n in g] for g in ops]
    return Explained(int(out.graph_count), breaks, nodes, seconds, stacks, names)
