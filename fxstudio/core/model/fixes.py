"""The classic symbolic-tracing traps, explained at the user's line, with fixes that re-trace.

Two kinds: a **failure** (tracing stopped: :func:`diagnose_failure` on the ``CaptureError``)
and a **silent trap** (tracing worked but the graph is not what the code means:
:func:`diagnose_graph` on the captured document).  Each :class:`Diagnosis` has a stable rule
id, the rule in plain words, the user's line and the fixes fxstudio can apply itself -- each
an :class:`~fxstudio.core.model.opening.OpenRequest` to capture again (a leaf module, the export
frontend, the training mode), and offered only after it was tried and captured the model.

Example:
    >>> from fxstudio.core.graph.request import OpenRequest
    >>> from fxstudio.core.sessions.documents import open_document
    >>> [d.rule for d in diagnose_graph(open_document("examples:trap_dropout"))]
    ['baked-training']
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import Any

from fxstudio.core.errors import CaptureError, SourceLocation, UserError

RULES = {
    "tensor-if": (
        "A branch on a tensor's value",
        "Symbolic tracing runs forward once with stand-ins (Proxies) that have shapes' names "
        "but no values, so `if x.mean() > 0` cannot be decided. Keep the code that branches "
        "inside a leaf module (one node, run for real each call), fix the argument with "
        "concrete_args when the branch depends on a flag, or use torch.cond with torch.export.",
    ),
    "len": (
        "len() of a traced value",
        "A Proxy has no length while tracing. Use x.size(0) or x.shape[0] (traced as a node), "
        'call torch.fx.wrap("len") at module scope so len becomes a node, or use torch.export.',
    ),
    "iterate": (
        "Iterating over a traced value",
        "A Proxy cannot say how many items it has, so `for row in x` or `a, b = x` fails. "
        "Index explicitly (x[0], x.unbind(0) with a known count) or use torch.export.",
    ),
    "trace": (
        "Symbolic tracing failed",
        "The forward did something a Proxy cannot stand in for. Keep that code inside a leaf "
        "module, or use torch.export.",
    ),
    "constant-tensor": (
        "A tensor made while tracing became a constant",
        "torch.randn(2, 8) (any constructor called with plain numbers) runs once while "
        "tracing, and the graph keeps its result: every call returns the same numbers. Make "
        "the tensor from an input (torch.randn_like(x)), wrap a helper with torch.fx.wrap, or "
        "use torch.export, which records the constructor as an op.",
    ),
    "baked-training": (
        "The training flag was baked in",
        "self.training is a plain bool while tracing, so F.dropout(x, training=self.training) "
        "keeps the value it had: a graph captured in eval mode never drops out, even after "
        ".train(). Capture the mode you mean, or use nn.Dropout (it reads its mode at run time).",
    ),
}


@dataclass(frozen=True)
class Fix:
    """A way to capture the model again that avoids the trap (tried: it captures)."""

    label: str
    request: Any  # an OpenRequest
    explanation: str


@dataclass(frozen=True)
class Diagnosis:
    rule: str  # a key of RULES
    title: str
    explanation: str  # the rule in plain words
    location: SourceLocation | None
    fixes: tuple[Fix, ...] = field(default_factory=tuple)
    nodes: tuple[str, ...] = ()  # the graph nodes concerned (silent traps)

    def describe(self) -> str:
        lines = [self.title + (f" at {self.location}" if self.location else "")]
        if self.location and self.location.text:
            lines.append(f"    {self.location.text.strip()}")
        lines.append(self.explanation)
        lines += [f"Fix: {f.label} — {f.explanation}" for f in self.fixes]
        return "\n".join(lines)


def _diagnosis(
    rule: str, location: SourceLocation | None, fixes: list[Fix], **kw: Any
) -> Diagnosis:
    title, text = RULES[rule]
    return Diagnosis(rule, title, text, location, tuple(fixes), **kw)


def _captures(request: Any) -> bool:
    from fxstudio.core.model.opening import open_model

    try:
        open_model(request)
    except UserError:
        return False
    return True


def branching_module(request: Any, location: SourceLocation | None) -> str | None:
    """The innermost submodule whose ``forward`` holds the failing line, if any."""
    if location is None:
        return None
    from fxstudio.core.model.loading import load_model

    try:
        module = load_model(request.spec, request.inputs, request.seed).module
    except UserError:
        return None
    best: str | None = None
    for path, sub in module.named_modules():
        if not path:
            continue
        try:
            lines, first = inspect.getsourcelines(type(sub).forward)
            filename = inspect.getsourcefile(type(sub).forward)
        except (OSError, TypeError):
            continue
        same_file = filename is not None and (
            filename == location.filename
            or filename.endswith("/" + location.filename.split("/")[-1])
        )
        if same_file and first <= location.lineno < first + len(lines):
            if best is None or len(path) > len(best):
                best = path
    return best


def diagnose_failure(request: Any, error: CaptureError) -> Diagnosis:
    """What went wrong when symbolic tracing failed, and the fixes that capture the model."""
    rule = error.rule if error.rule in RULES else "trace"
    candidates: list[Fix] = []
    leaf = branching_module(request, error.location)
    if leaf is not None:
        candidates.append(
            Fix(
                f"Keep {leaf} as a leaf module",
                replace(request, leaf_modules=(*request.leaf_modules, leaf)),
                f"{leaf} becomes one call_module node; its code runs for real on each call",
            )
        )
    if request.frontend != "export":
        candidates.append(
            Fix(
                "Capture with torch.export",
                replace(request, frontend="export"),
                "export traces with real shapes (sizes and len() are known); a branch on a "
                "value still needs torch.cond",
            )
        )
    fixes = [f for f in candidates if _captures(f.request)]
    return _diagnosis(rule, error.location, fixes)


def diagnose_graph(doc: Any, *, try_fixes: bool = True) -> list[Diagnosis]:
    """The silent traps in a captured graph: constants made while tracing, dropout's
    training flag baked in (symbolic-trace graphs; export records both as ops)."""
    if doc.request.frontend != "fx":
        return []
    request = replace(doc.request, frontend="fx")
    found: list[Diagnosis] = []
    constants = [
        n
        for n in doc.graph.nodes
        if n.op == "get_attr" and str(n.target).startswith("_tensor_constant")
    ]
    if constants:
        users = [u for n in constants for u in n.users]
        loc = next(filter(None, (doc.source_location(u.name) for u in users)), None)
        fix = Fix(
            "Capture with torch.export",
            replace(request, frontend="export"),
            "export records the constructor as an op that runs on every call",
        )
        fixes = [fix] if request.spec and try_fixes and _captures(fix.request) else []
        found.append(
            _diagnosis("constant-tensor", loc, fixes, nodes=tuple(n.name for n in constants))
        )
    # Captured for inference (the default), a functional dropout was traced with
    # training=False: the graph never drops out, even after .train().  A training capture
    # asked for its flag, so it is not reported.
    baked = [n for n in doc.graph.nodes if _baked_training(n) is False]
    if baked and not request.train:
        fix = Fix(
            "Capture the training graph as well",
            replace(request, train=True),
            "the graph is traced again with self.training True: dropout on (fxstudio --train)",
        )
        fixes = [fix] if request.spec and try_fixes and _captures(fix.request) else []
        found.append(
            _diagnosis(
                "baked-training",
                doc.source_location(baked[0].name),
                fixes,
                nodes=tuple(n.name for n in baked),
            )
        )
    return found


def _baked_training(node: Any) -> bool | None:
    """The training flag a functional dropout node was traced with (None: not one)."""
    import torch.nn.functional as F

    dropouts = (F.dropout, F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout)
    if node.op != "call_function" or node.target not in dropouts:
        return None
    flag = node.kwargs.get("training", node.args[2] if len(node.args) > 2 else True)
    return flag if isinstance(flag, bool) else None
