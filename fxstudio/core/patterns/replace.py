"""Replace matches: every accepted match of a pattern, as one undoable edit.

A :class:`Replacement` builds, for one match, a small graph (:class:`ReplacementGraph`) whose
inputs are the pattern's inputs (then the literals the pattern binds) and whose outputs stand
for the pattern's outputs (:mod:`~fxstudio.core.patterns.replacements` makes them).  A
replacement's own submodules and tensors are set on the model under free names, one step
each; one the pattern names too stands for what the pattern's matched there.

:func:`rewrite` makes all replacements one :func:`~fxstudio.core.edits.engine.commit` of edit
steps, placed as it goes in the live graph: an earlier match's output that a later match
takes as input is followed to its replacement (torch.fx's back-to-back bug, pytorch#159613).
New nodes keep the replaced anchor's ``stack_trace`` and ``nn_module_stack`` and record
``meta["fxstudio_rewrite"]``: which rewrite, from which nodes.

Example:
    >>> import torch
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.patterns.making import from_function
    >>> from fxstudio.core.patterns.replacements import function_replacement
    >>> doc = open_document("examples:negrelu")
    >>> def pattern(x, y):
    ...     return torch.neg(x) + torch.relu(y)
    >>> def replacement(x, y):
    ...     return torch.relu(x)
    >>> done = rewrite(doc, from_function(pattern), function_replacement(replacement))
    >>> print(doc.code())
    def forward(self, x, y, z):
        relu = torch.relu(x);  x = None
        mul = relu * z;  relu = z = None
        return mul
    <BLANKLINE>
    >>> done.edit.undo(); "torch.neg(x)" in doc.code()
    True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
from torch.fx.node import Node, map_aggregate

from fxstudio.core.edits.engine import Edit, commit
from fxstudio.core.edits.naming import name_base
from fxstudio.core.edits.steps import (
    CreateNode,
    EditError,
    EraseNode,
    NodeSpec,
    Ref,
    RenameNode,
    SetAttribute,
    SetInputs,
    SetSubmodule,
    Step,
    reserved,
    to_refs,
)
from fxstudio.core.fxcompat import used_names
from fxstudio.core.graph.attributes import attribute
from fxstudio.core.graph.document import ChangeKind, GraphDocument
from fxstudio.core.graph.graphviews import module_path
from fxstudio.core.patterns.found import Found, Match
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.pattern import Pattern, PatternError
from fxstudio.core.patterns.provenance import Provenance
from fxstudio.core.patterns.reasons import cause_of, verdict
from fxstudio.core.patterns.replacements import (
    Job,
    MatchContext,
    Replacement,
    Skip,
)
from fxstudio.core.results import Json


@dataclass
class Rewritten:
    edit: Edit | None
    found: Found
    replaced: list[Match]
    skipped: list[tuple[Match, str]]  # matches left alone by the replacement, and why
    seconds_match: float
    seconds_replace: float

    @property
    def candidates(self) -> int:
        """The places looked at: the matches, and those refused before they were one."""
        return len(self.found.matches) + len(self.found.skipped)

    def causes(self) -> list[str]:
        """Why each place left alone was, in a summary's words."""
        return [cause_of(why) for _, why in self.skipped] + [
            s.failure.short for s in self.found.skipped
        ]

    def verdict(self, done: str = "replaced") -> str:
        """Nothing replaced: how many places were looked at and why each was left alone
        ("2 candidates, none fused: ..."); "" when something was replaced (or would be)."""
        if self.replaced:
            return ""
        return verdict(self.candidates, self.causes(), done, self.found.absent)


def rewrite(
    doc: GraphDocument,
    pattern: Pattern,
    replacement: Replacement,
    accepted: set[int] | None = None,
    found: Found | None = None,
    label: str | None = None,
) -> Rewritten:
    """Replace the matches of ``pattern`` (those numbered in ``accepted``, default all) as
    one edit.  A match the replacement skips is listed with the reason; no match at all, or
    all skipped: nothing changes and ``edit`` is ``None``."""
    job = Job(pattern, replacement, found, accepted)
    record = {
        "edit": "rewrite",
        "pattern": pattern.to_json(),
        "replacement": dict(replacement.spec),
    }
    return rewrite_jobs(
        doc, [job], label or f"Replace {pattern.name} with {replacement.name}", record
    )


def rewrite_jobs(doc: GraphDocument, jobs: list[Job], label: str, record: Json) -> Rewritten:
    """Several patterns replaced as one edit (a built-in rewrite with variants): all are
    matched on the graph as it is, then replaced in turn."""
    for job in jobs:
        if job.found is None:
            job.found = Matcher(job.pattern).find(doc.graph_module)
    match_s = sum(j.found.seconds for j in jobs if j.found is not None)
    t1 = time.perf_counter()
    merged = Found(
        [m for j in jobs for m in j.found.matches],  # type: ignore[union-attr]
        [s for j in jobs for s in j.found.skipped],  # type: ignore[union-attr]
        list(dict.fromkeys(w for j in jobs for w in j.found.warnings)),  # type: ignore[union-attr]
        match_s,
        next((j.found.absent for j in jobs if j.found.absent), ""),  # type: ignore[union-attr]
    )
    replaced: list[Match] = []
    skipped: list[tuple[Match, str]] = []
    work = [
        (j, [m for m in j.found.matches if j.accepted is None or m.index in j.accepted])  # type: ignore[union-attr]
        for j in jobs
    ]
    if not any(chosen for _, chosen in work):
        return Rewritten(None, merged, [], [], match_s, 0.0)
    accepted = [sorted(m.anchor for m in chosen) for j, chosen in work if j.accepted is not None]
    if accepted:
        record = {**record, "accepted": accepted[0] if len(work) == 1 else accepted}

    def steps() -> Iterator[Step]:
        for job, chosen in work:
            yield from _steps(doc, job.pattern, job.replacement, chosen, replaced, skipped)
        if not replaced:
            raise _NothingDone

    edit = None
    try:
        edit = commit(doc, label, steps(), ChangeKind.GRAPH_REPLACED, record)
    except _NothingDone:
        pass
    if edit is not None:
        edit.label = f"{label} ({len(replaced)} match{'es' if len(replaced) != 1 else ''})"
    return Rewritten(edit, merged, replaced, skipped, match_s, time.perf_counter() - t1)


class _NothingDone(EditError):
    def __init__(self) -> None:
        super().__init__("Every match was skipped: nothing changed.")


def _steps(
    doc: GraphDocument,
    pattern: Pattern,
    replacement: Replacement,
    matches: list[Match],
    replaced: list[Match],
    skipped: list[tuple[Match, str]],
) -> Iterator[Step]:
    names = _Names(set(used_names(doc.graph)) | set(doc.node_names()))
    followed: dict[str, Any] = {}  # a replaced output -> what stands for it now
    copied: dict[int, str] = {}  # a replacement's own tensor -> where the model holds it
    named = {  # the pattern's own attributes (self.weight, self.conv): pattern node by path
        str(p.target): p.name for p in pattern.graph.nodes if p.op in ("get_attr", "call_module")
    }
    for m in matches:
        ctx = MatchContext(doc, pattern, m)
        try:
            rg = replacement.build(ctx)
        except Skip as exc:
            skipped.append((m, exc.reason))
            continue
        matched = [doc.node(n) for n in m.graph_nodes]
        inside = set(matched)
        outs = [doc.node(o) for o in m.outputs]
        users = [u for o in outs for u in o.users if u not in inside]
        last = max(matched)
        after = last
        if users and min(users) < last:
            first = min(users)
            after = first.prev
            inputs = [
                followed.get(v, v)
                for v, node in zip(m.inputs, m.input_is_node, strict=True)
                if node
            ]
            if any(doc.node(v) > after for v in inputs if isinstance(v, str)):
                skipped.append((m, "the graph would need reordering to place the replacement"))
                continue
        values: list[Any] = [
            Ref(followed.get(v, v)) if node else v
            for v, node in zip(m.inputs, m.input_is_node, strict=True)
        ] + [v for _, v in m.bound]
        env: dict[Node, Any] = {}
        placeholders, body = _layout(rg.graph)
        if len(placeholders) != len(values):
            raise PatternError(
                f"The replacement {replacement.name} takes {len(placeholders)} inputs; the "
                f"match gives {len(values)}."
            )
        env.update(zip(placeholders, values, strict=True))
        made = {
            "rewrite": replacement.name,
            "pattern": pattern.name,
            "from": [n.name for n in sorted(matched)],
            "at": module_path(doc.node(m.anchor)),  # the module whose output it stands for
        }
        where = Provenance(doc.node(m.anchor), matched, made)
        # a replacement's self.weight where the pattern has self.weight too (of one kind):
        # the model's tensor that one matched (torch.fx's result when the names agree)
        theirs = {
            path: str(doc.node(m.nodes[p]).target)
            for path, p in named.items()
            if p in m.nodes and _same_kind(attribute(pattern.graph_module, path), rg.root, path)
        }
        prev = after.name
        result: Any = None
        created: list[str] = []
        for rn, base in body:
            if rn.op == "output":
                result = _substitute(rn.args[0], env)
                break
            target = rn.target
            module = None
            if rn.op in ("call_module", "get_attr"):
                path = str(target)
                if path in rg.modules:
                    module = rg.modules[path]
                    yield SetSubmodule(path, module)
                elif rg.root is not None and path in theirs:
                    path = theirs[path]
                    module = attribute(doc.graph_module, path) if rn.op == "call_module" else None
                elif rg.root is not None and rn.op == "call_module":
                    module = attribute(rg.root, path)
                    if attribute(doc.graph_module, path) is not module:  # not the model's own
                        path = names.attr(doc, name_base(path))
                        yield SetSubmodule(path, module)
                elif rg.root is not None:  # a tensor of the replacement's (self.scale)
                    value = attribute(rg.root, path)
                    if attribute(doc.graph_module, path) is not value:  # copied in once
                        if id(value) not in copied:
                            copied[id(value)] = names.attr(doc, name_base(path))
                            yield SetAttribute(copied[id(value)], value)
                        path = copied[id(value)]
                target = path
            name = names.node(base)
            args = _substitute(rn.args, env)
            kwargs = _substitute(dict(rn.kwargs), env)
            meta = where.meta(
                rn.op,
                target,
                module if module is not None else attribute(doc.graph_module, str(target)),
            )
            yield CreateNode(NodeSpec(name, rn.op, target, args, kwargs, None, meta, prev))
            env[rn] = Ref(name)
            created.append(name)
            prev = name
        new = list(result) if isinstance(result, (tuple, list)) and len(outs) > 1 else [result]
        if len(new) != len(outs):
            raise PatternError(
                f"The replacement {replacement.name} returns {len(new)} values for the "
                f"pattern's {len(outs)} outputs."
            )
        swap = {o.name: v for o, v in zip(outs, new, strict=True)}
        for u in dict.fromkeys(users):
            yield SetInputs(u.name, _swapped(u.args, swap), _swapped(dict(u.kwargs), swap))
        for o, v in swap.items():
            followed[o] = v.name if isinstance(v, Ref) else v
        called = {str(n.target) for n in matched if n.op == "call_module"}
        for n in sorted(matched, reverse=True):
            if not n.users:
                yield EraseNode(n.name)
        for path in sorted(called):
            if path not in rg.modules and not _still_called(doc, path):
                yield SetSubmodule(path, None)
        # the replacement's nodes take the names of the nodes they replace where they can:
        # a node calling what a removed one called takes its name
        gone = [n for n in matched if not n.users and n.name not in doc]
        for new_name in created:
            node = doc.node(new_name)
            same = next((g for g in gone if (g.op, g.target) == (node.op, node.target)), None)
            if same is not None:
                gone.remove(same)
                yield RenameNode(new_name, same.name)
                for o in swap:  # only this match's outputs can stand for the new node
                    if followed.get(o) == new_name:
                        followed[o] = same.name
        replaced.append(m)


_LAYOUTS: dict[int, tuple[fx.Graph, list[Node], list[tuple[Node, str]]]] = {}


def _layout(graph: fx.Graph) -> tuple[list[Node], list[tuple[Node, str]]]:
    """A replacement graph's inputs, and its other nodes with the names new nodes are given
    from them -- read once per graph, not once per match."""
    known = _LAYOUTS.get(id(graph))
    if known is None or known[0] is not graph:
        if len(_LAYOUTS) > 256:
            _LAYOUTS.clear()
        inputs = [n for n in graph.nodes if n.op == "placeholder"]
        body = [(n, name_base(_node_base(n))) for n in graph.nodes if n.op != "placeholder"]
        known = _LAYOUTS[id(graph)] = (graph, inputs, body)
    return known[1], known[2]


def _same_kind(ours: Any, root: Any, path: str) -> bool:
    """The replacement's attribute at ``path`` plays the pattern's one there (``ours``): of
    the same class, a tensor of the same shape and dtype -- else it is the replacement's own
    (a GELU where the pattern has a ReLU)."""
    theirs = attribute(root, path) if root is not None else None
    if theirs is None or type(theirs) is not type(ours):
        return False
    if isinstance(ours, torch.Tensor):
        return bool(ours.shape == theirs.shape and ours.dtype == theirs.dtype)
    return True


def _substitute(value: Any, env: dict[Node, Any]) -> Any:
    return map_aggregate(value, lambda a: env[a] if isinstance(a, Node) else a)


def _swapped(value: Any, swap: dict[str, Any]) -> Any:
    """``value`` with references to replaced outputs turned into their replacements."""
    return map_aggregate(
        to_refs(value),
        lambda v: swap.get(v.name, v) if isinstance(v, Ref) else v,
    )


def _still_called(doc: GraphDocument, path: str) -> bool:
    return any(True for _ in doc.graph.find_nodes(op="call_module", target=path))


def _node_base(rn: fx.Node) -> str:
    if rn.op in ("call_module", "get_attr"):
        return str(rn.target).replace(".", "_")
    return getattr(rn.target, "__name__", str(rn.target))


class _Names:
    """Names no node and no attribute has, handed out as ``base``, ``base_1``...: the count
    goes on per base, so a rewrite of thousands of matches does not probe every name again."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken
        self.count: dict[str, int] = {}

    def node(self, base: str) -> str:
        return self._new(base, lambda name: False)

    def attr(self, doc: GraphDocument, base: str) -> str:
        return self._new(base, lambda name: hasattr(doc.graph_module, name))

    def _new(self, base: str, used: Callable[[str], bool]) -> str:
        i = self.count.get(base, 0)
        name = base if i == 0 else f"{base}_{i}"
        while name in self.taken or used(name) or reserved(name):
            i += 1
            name = f"{base}_{i}"
        self.count[base] = i
        self.taken.add(name)
        return name
