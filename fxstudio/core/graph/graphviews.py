"""Views of a graph the document shows: table rows, targets and arguments as a user reads
them, the generated code's node -> line map and the module tree.  Plain functions of an
``fx.Graph`` (no document), so that a worker thread can compute them on a copy
(:mod:`fxstudio.core.edits.catchup`).

Example:
    >>> import torch, torch.fx as fx
    >>> gm = fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU()))
    >>> [(make_row(n).name, make_row(n).target) for n in gm.graph.nodes][1:3]
    [('_0', '0'), ('_1', '1')]
    >>> line_map(tidy_code(gm.code), gm.graph)["_0"]
    3
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch.fx as fx

from fxstudio.core.errors import stack_trace_location
from fxstudio.core.fxcompat import forward_source, is_op_overload, qualified_name
from fxstudio.core.fxcompat.modules import submodule_at
from fxstudio.core.graph.notation import format_shape
from fxstudio.core.graph.shapes import node_dtype, node_shape


@dataclass(frozen=True)
class NodeRow:
    """One node as the table shows it: ``print_tabular``'s columns plus shape and module."""

    opcode: str
    name: str
    target: str
    args: str
    kwargs: str
    shape: str
    dtype: str
    module_path: str

    COLUMNS = ("opcode", "name", "target", "args", "kwargs", "shape", "dtype", "module_path")

    def values(self) -> tuple[str, ...]:
        return tuple(getattr(self, c) for c in self.COLUMNS)


@dataclass
class ModuleGroup:
    """A node of the module hierarchy (from ``nn_module_stack``): path, type, members."""

    path: str  # "" for the root, "layer1.0" below it
    type_name: str = ""
    children: dict[str, ModuleGroup] = field(default_factory=dict)
    nodes: list[str] = field(default_factory=list)  # nodes directly in this group

    def walk(self) -> Iterator[ModuleGroup]:
        """This group and every group below it, parents before children (pre-order)."""
        stack = [self]  # a stack, not nested generators: a yield costs one frame, not depth
        while stack:
            group = stack.pop()
            yield group
            stack.extend(reversed(group.children.values()))

    def all_nodes(self) -> list[str]:
        return [n for g in self.walk() for n in g.nodes]


def format_target(node: fx.Node) -> str:
    """The target as a user reads it: ``torch.relu``, ``operator.add``, ``layer1.0.conv1``."""
    t = node.target
    if isinstance(t, str):
        return t
    if is_op_overload(t):
        return f"torch.ops.{t}"
    try:
        name = qualified_name(t)
    except Exception:
        return repr(t)
    return "operator." + name[len("_operator.") :] if name.startswith("_operator.") else name


def format_args(value: Any) -> str:
    """``print_tabular``'s rendering: nodes by name, the rest by ``repr``."""
    if not value:
        return repr(value)  # () or {}: most kwargs
    # (map_arg's callback may return any value; torch types it as returning an Argument)
    return repr(fx.node.map_arg(value, lambda n: _NameRef(n.name)))  # type: ignore[arg-type,return-value]


class _NameRef:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


def module_path(node: fx.Node) -> str:
    """The innermost module that produced the node, from ``nn_module_stack``."""
    stack = node.meta.get("nn_module_stack")
    if stack:
        return str(list(stack.values())[-1][0])
    if node.op == "call_module":
        return str(node.target)
    if node.op == "get_attr" and isinstance(node.target, str):
        return node.target.rpartition(".")[0]
    return ""


def class_path(cls: type) -> str:
    """A class's name as a user imports it: the shortest package that exports it
    (``torch.nn.modules.conv.Conv2d`` -> ``torch.nn.Conv2d``), among those already imported."""
    name, parts = cls.__qualname__, cls.__module__.split(".")
    for i in range(1, len(parts)):
        package = sys.modules.get(".".join(parts[:i]))
        if package is not None and getattr(package, name, None) is cls:
            return f"{'.'.join(parts[:i])}.{name}"
    return f"{cls.__module__}.{name}"


def describe_module(module: Any) -> tuple[str, str]:
    """A submodule's class and what it was made with (its ``extra_repr``):

    >>> import torch
    >>> describe_module(torch.nn.Conv2d(3, 16, 3, bias=False))
    ('torch.nn.Conv2d', '3, 16, kernel_size=(3, 3), stride=(1, 1), bias=False')
    """
    try:
        made_with = str(module.extra_repr())
    except Exception:  # a module whose extra_repr fails: its class is still worth showing
        made_with = ""
    return class_path(type(module)), made_with


def called_module(gm: Any, node: fx.Node) -> tuple[str, str] | None:
    """The class and constructor arguments (:func:`describe_module`) of the submodule a
    ``call_module`` node calls; None for another node, or where ``gm`` has no such module."""
    if node.op != "call_module":
        return None
    module = submodule_at(gm, str(node.target))
    return describe_module(module) if module is not None else None


def make_row(n: fx.Node) -> NodeRow:
    return _row(n, format_args(n.args), format_args(n.kwargs))


def _row(n: fx.Node, args: str, kwargs: str) -> NodeRow:
    return NodeRow(
        opcode=n.op,
        name=n.name,
        target=format_target(n),
        args=args,
        kwargs=kwargs,
        shape=format_shape(node_shape(n)),
        dtype=node_dtype(n) or "",
        module_path=module_path(n),
    )


#: Node name -> what its row was made from and the row (:func:`make_rows`): read, never
#: changed, once made (a worker reads the one a document holds).
RowMemo = dict[str, tuple[tuple[Any, ...], NodeRow]]

_ABSENT = object()


def make_rows(
    nodes: Iterable[fx.Node], memo: RowMemo | None = None
) -> tuple[list[NodeRow], RowMemo]:
    """The rows of ``nodes`` (:func:`make_row`), and the memo of them to give the next call.

    A row is written from the node's name, op, target, arguments, recorded value (``val``,
    ``tensor_meta``) and module stack.  Where ``memo`` holds a row of the same name made from
    the same arguments (as written) and the very same objects for the rest -- a graph's copy
    shares them (:func:`~fxstudio.core.edits.snapshots.rebuild`) -- that row is taken: after
    an edit or a rewrite of a 20,000-node graph only the nodes it changed, or whose shapes
    it changed, are written again (0.17 -> 0.06 s for all the rows after one edit)."""
    old = memo or {}
    rows: list[NodeRow] = []
    made: RowMemo = {}
    for n in nodes:
        name, op, target, meta = n.name, n.op, n.target, n.meta
        args, kwargs = format_args(n.args), format_args(n.kwargs)
        val, tm = meta.get("val", _ABSENT), meta.get("tensor_meta")
        stack = meta.get("nn_module_stack")
        was = old.get(name)
        if was is not None:
            k = was[0]  # the very objects (a tensor is never compared by value), equal texts
            if (
                k[4] is val
                and k[5] is tm
                and k[6] is stack
                and k[2] == args
                and k[3] == kwargs
                and k[0] == op
                and (k[1] is target or (isinstance(target, str) and k[1] == target))
            ):
                made[name] = was
                rows.append(was[1])
                continue
        row = _row(n, args, kwargs)
        made[name] = ((op, target, args, kwargs, val, tm, stack), row)
        rows.append(row)
    return rows, made


def input_refs(node: fx.Node) -> list[tuple[str, fx.Node]]:
    """Each use of another node in ``node``'s arguments: ``("args[0]", producer)``..."""
    out: list[tuple[str, fx.Node]] = []

    def walk(value: Any, label: str) -> None:
        if isinstance(value, fx.Node):
            out.append((label, value))
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, f"{label}[{i}]")
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{label}[{k!r}]")
        elif isinstance(value, slice):
            walk((value.start, value.stop, value.step), f"{label}.slice")

    for i, a in enumerate(node.args):
        walk(a, f"args[{i}]")
    for k, v in node.kwargs.items():
        walk(v, k)
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, fx.Node):
        return {"node": value.name}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return {"repr": repr(value)}


def _json_shape(shape: Any) -> Any:
    if shape is None:
        return None
    if isinstance(shape, list):
        return [None if s is None else list(s) for s in shape]
    return list(shape)


_ASSIGN_RE = re.compile(
    r"^\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*,?\s*(?::\s*\"[^\"]*\"\s*)?="
)


def tidy_code(src: str) -> str:
    """Generated code as fxstudio shows it: no leading blank lines, one final newline."""
    return src.lstrip("\n").rstrip() + "\n"


def code_of(graph: fx.Graph) -> str:
    """The ``forward`` a graph generates, as fxstudio shows it (:func:`tidy_code`)."""
    return tidy_code(forward_source(graph))


def line_map(code: str, graph: fx.Graph) -> dict[str, int]:
    names = {n.name for n in graph.nodes}
    result: dict[str, int] = {}
    lines = code.splitlines()
    for i, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("def forward"):
            for n in graph.nodes:
                if n.op == "placeholder":
                    result.setdefault(n.name, i)
            continue
        if stripped.startswith("return "):
            for n in graph.nodes:
                if n.op == "output":
                    result[n.name] = i
            continue
        m = _ASSIGN_RE.match(line)
        if m:
            for target in m.group(1).split(","):
                target = target.strip()
                if target in names:
                    result[target] = i  # a later re-binding (pytree flatten) wins
    return result


def module_tree_of(graph: fx.Graph) -> ModuleGroup:
    """The module hierarchy of ``graph`` (see :meth:`GraphDocument.module_tree`)."""
    root = ModuleGroup("")
    owned: list[tuple[fx.Node, str]] = []
    for n in graph.nodes:
        group = root
        stack = n.meta.get("nn_module_stack") or {}
        if not stack and module_path(n):  # an exported get_attr: placed once the tree is built
            owned.append((n, module_path(n)))
            continue
        for path, type_ in stack.values():
            path = str(path)
            if not path:
                continue
            child = group.children.get(path)
            if child is None:
                type_name = type_ if isinstance(type_, str) else getattr(type_, "__name__", "")
                child = ModuleGroup(path, type_name.rpartition(".")[2])
                group.children[path] = child
            group = child
        group.nodes.append(n.name)
    for n, path in owned:
        # Into the innermost module that owns it (a ModuleList such as ``h`` is never on the
        # call stack, so ``h.0.attn.weight`` belongs to the group ``h.0``, not to ``h``).
        group = root
        while True:
            inner = next(
                (c for p, c in group.children.items() if path == p or path.startswith(p + ".")),
                None,
            )
            if inner is None:
                break
            group = inner
        if group.path != path:
            child = group.children.get(path)
            if child is None:
                child = group.children[path] = ModuleGroup(path)
            group = child
        group.nodes.append(n.name)
    return root


def graph_json(graph: fx.Graph, source_file: str | None = None) -> dict[str, Any]:
    """Nodes (op, target, args, kwargs, shape, dtype, module path, source line) and edges,
    JSON-ready."""
    nodes = []
    for n in graph.nodes:
        loc = stack_trace_location(n.stack_trace, source_file)
        nodes.append(
            {
                "name": n.name,
                "op": n.op,
                "target": format_target(n),
                "args": _jsonable(n.args),
                "kwargs": _jsonable(n.kwargs),
                "shape": _json_shape(node_shape(n)),
                "dtype": node_dtype(n),
                "module_path": module_path(n),
                "source": f"{loc.filename}:{loc.lineno}" if loc else None,
            }
        )
    edges = [
        {"source": src.name, "target": n.name, "arg": label}
        for n in graph.nodes
        for label, src in input_refs(n)
    ]
    return {"nodes": nodes, "edges": edges}
