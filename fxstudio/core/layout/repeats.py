"""Repeated blocks: a model's identical submodules (the 32 layers of a LLaMA, the blocks of a
stage) recognised by a structural hash, and a run of identical collapsed siblings folded into
one box, ``layers.0–31 ×32``, that expands one member at a time.

Two groups are the same structure when their nodes, in graph order, do the same ops (a
submodule by its class, a function by its name, an ATen op by its overload) on tensors of the
same shapes, wired the same way (each input by its place in the group, or from outside), and
their submodules nest the same way -- names, weights and the values they hold aside.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.layout.groups import drawn_tree
    >>> doc = open_document("examples:resnet")
    >>> same = structures(doc, [drawn_tree(doc)])
    >>> same["layer1.0"] == same["layer1.1"], same["layer1.0"] == same["layer2.0"]
    (True, False)
    >>> items = [("group", "layer1.0"), ("group", "layer1.1"), ("group", "layer2.0")]
    >>> runs(items, same, {"layer1.0", "layer1.1", "layer2.0"}, minimum=2)
    [['layer1.0', 'layer1.1']]
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable

from fxstudio.core.fxcompat import is_op_overload
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.families import function_family
from fxstudio.core.graph.graphviews import ModuleGroup
from fxstudio.core.graph.shapes import node_shape

#: Identical collapsed siblings fold into one box from this many on.
FOLD_AT = 3


def structures(doc: GraphDocument, groups: Iterable[ModuleGroup]) -> dict[str, int]:
    """A structural hash per path of these groups and the groups inside them (equal hashes:
    the same structure, see above)."""
    classes = {
        name: type(m).__qualname__
        for name, m in doc.graph_module.named_modules(remove_duplicate=False)
    }
    index = {n: i for i, n in enumerate(doc.node_names())}
    out: dict[str, int] = {}

    def what(name: str) -> tuple[object, ...]:
        node = doc.node(name)
        if node.op == "call_module":
            target: object = classes.get(str(node.target), "")
        elif node.op == "call_function":
            t = node.target  # an ATen op by its overload, else its spelling-free family
            target = str(t) if is_op_overload(t) else function_family(t)
        elif node.op == "call_method":
            target = node.target
        else:
            target = node.op
        return (node.op, target, repr(node_shape(node)))

    def visit(group: ModuleGroup) -> int:
        kids = tuple(visit(c) for c in group.children.values())
        nodes = sorted(group.all_nodes(), key=index.__getitem__)
        at = {n: i for i, n in enumerate(nodes)}
        parts = tuple(
            (*what(n), tuple(at.get(a.name, -1) for a in doc.node(n).all_input_nodes))
            for n in nodes
        )
        out[group.path] = hash((group.type_name, kids, parts))
        return out[group.path]

    for group in groups:
        visit(group)
    return out


class Structures:
    """:func:`structures` of drawn groups, each hashed once per version of one document
    (expanding a fold lays the same graph out again)."""

    def __init__(self) -> None:
        self._of: weakref.ref[GraphDocument] | None = None
        self._version = -1
        self._known: dict[str, int] = {}

    def of(self, doc: GraphDocument, groups: list[ModuleGroup]) -> dict[str, int]:
        if self._of is None or self._of() is not doc or self._version != doc.version:
            self._of, self._version, self._known = weakref.ref(doc), doc.version, {}
        todo = [g for g in groups if g.path not in self._known]
        if todo:
            self._known.update(structures(doc, todo))
        return self._known


def runs(
    items: list[tuple[str, str]], same: dict[str, int], collapsed: set[str], minimum: int = FOLD_AT
) -> list[list[str]]:
    """In one group's items (``("node", name)`` or ``("group", path)``, in graph order): the
    runs of ``minimum`` or more groups next to each other, all collapsed and of one
    structure, each as its members' paths in order."""
    out: list[list[str]] = []
    run: list[str] = []
    for kind, key in [*items, ("end", "")]:
        folded = kind == "group" and key in collapsed
        if folded and run and same[key] == same[run[0]]:
            run.append(key)
            continue
        if len(run) >= minimum:
            out.append(run)
        run = [key] if folded else []
    return out


def fold_label(members: list[str], type_name: str) -> str:
    """``layers.0–31 ×32 : LlamaDecoderLayer`` (or ``a … b ×3`` for paths without a count)."""
    first, last = members[0], members[-1]
    stem = os.path.commonprefix([first, last])
    stem = stem[: stem.rfind(".") + 1] if "." in stem else ""
    a, b = first[len(stem) :], last[len(stem) :]
    span = f"{stem}{a}–{b}" if a.isdigit() and b.isdigit() else f"{first} … {last}"
    return f"{span} ×{len(members)}" + (f" : {type_name}" if type_name else "")
