"""The edits users make (rename, retarget, insert, splice, delete, paste, rewire, inputs and
outputs), each one :func:`~fxstudio.core.edits.engine.commit`, each declared an edit kind
(:mod:`~fxstudio.core.edits.registry`): its record holds its parameters by name."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Sequence
from typing import Any

import torch
import torch.fx as fx
from torch.fx.node import map_aggregate

from fxstudio.core.edits.engine import Edit, commit
from fxstudio.core.edits.naming import (
    attribute,
    build_module,
    module_path_of,
    new_spec,
    resolve_function,
    resolve_target,
    unique_name,
)
from fxstudio.core.edits.registry import edit_kind, recorded
from fxstudio.core.edits.steps import (
    CreateNode,
    EditError,
    EraseNode,
    MoveNode,
    NodeSpec,
    Ref,
    RenameNode,
    SetInputs,
    SetSubmodule,
    SetTarget,
    Step,
    check_name,
    node_of,
    refs_in,
    spec_of,
    to_refs,
)
from fxstudio.core.graph.document import ChangeKind, GraphDocument

# --- the edits users make ------------------------------------------------------------------------


@edit_kind()
def rename(doc: GraphDocument, name: str, new: str) -> Edit:
    """Give a node a new name (a valid identifier no other node has)."""
    node_of(doc, name)
    check_name(doc, new)
    return commit(
        doc,
        f"Rename {name} to {new}",
        [RenameNode(name, new)],
        ChangeKind.GRAPH_REPLACED,
        recorded("rename", name=name, new=new),
    )


@edit_kind()
def set_target(doc: GraphDocument, name: str, target: str) -> Edit:
    """Call another function (``call_function``), method (``call_method``) or submodule."""
    node = node_of(doc, name)
    value = resolve_target(doc, name, node.op, target.strip())
    return commit(
        doc,
        f"Change {name} to {target}",
        [SetTarget(name, value)],
        ChangeKind.NODES_CHANGED,
        recorded("set_target", name=name, target=target),
    )


@edit_kind()
def set_inputs(
    doc: GraphDocument,
    name: str,
    args: Sequence[Any] | None = None,
    kwargs: dict[str, Any] | None = None,
) -> Edit:
    """Set a node's arguments; other nodes' values are written as :class:`Ref`."""
    node = node_of(doc, name)
    new_args = tuple(args) if args is not None else to_refs(node.args)
    new_kwargs = dict(kwargs) if kwargs is not None else to_refs(dict(node.kwargs))
    if name in refs_in((new_args, new_kwargs)):
        raise EditError(f"'{name}' cannot use its own value (that would be a cycle).")
    return commit(
        doc,
        f"Set the inputs of {name}",
        [SetInputs(name, new_args, new_kwargs)],
        ChangeKind.NODES_CHANGED,
        recorded("set_inputs", name=name, args=new_args, kwargs=new_kwargs),
    )


@edit_kind()
def insert(
    doc: GraphDocument,
    op: str,
    target: str,
    args: Sequence[Any] = (),
    kwargs: dict[str, Any] | None = None,
    after: str | None = None,
    name: str | None = None,
) -> Edit:
    """A new ``call_function`` / ``call_method`` / ``get_attr`` node after ``after`` (default:
    after the last node its arguments use)."""
    if op == "call_function":
        value: Any = resolve_function(target)
        base = getattr(value, "__name__", "call")
    elif op == "call_method":
        value, base = target, target
    elif op == "get_attr":
        if attribute(doc.graph_module, target) is None:
            raise EditError(f"The model has no parameter or buffer '{target}'.")
        value, base = target, target.replace(".", "_")
    else:
        raise EditError(f"Insert a call_function, call_method or get_attr node, not {op}.")
    spec = new_spec(doc, op, value, tuple(args), dict(kwargs or {}), after, base, name)
    return commit(
        doc,
        f"Insert {spec.name}",
        [CreateNode(spec)],
        ChangeKind.NODES_ADDED,
        recorded(
            "insert",
            op=op,
            target=target,
            args=spec.args,
            kwargs=spec.kwargs,
            after=spec.after,
            name=spec.name,
        ),
    )


@edit_kind()
def insert_module(
    doc: GraphDocument,
    constructor: str,
    args: Sequence[Any] = (),
    after: str | None = None,
    name: str | None = None,
    seed: int = 0,
) -> Edit:
    """A new submodule built from ``constructor`` (``"nn.LeakyReLU(0.1)"``,
    ``"nn.Linear(16, 8)"``) under a unique name, and a ``call_module`` node calling it.
    Its weights come from ``seed``, so a replayed session builds the same ones."""
    module = build_module(constructor, seed)
    if name is not None and hasattr(doc.graph_module, name):
        raise EditError(f"The model already has an attribute '{name}'.")
    path = name or module_path_of(doc, module)
    spec = new_spec(doc, "call_module", path, tuple(args), {}, after, path, name)
    return commit(
        doc,
        f"Insert {constructor}",
        [SetSubmodule(path, module), CreateNode(spec)],
        ChangeKind.NODES_ADDED,
        recorded(
            "insert_module",
            constructor=constructor,
            args=spec.args,
            after=spec.after,
            name=path,
            seed=seed,
        ),
    )


@edit_kind()
def splice(
    doc: GraphDocument,
    producer: str,
    user: str | None,
    op: str,
    target: str,
    extra: Sequence[Any] = (),
    kwargs: dict[str, Any] | None = None,
) -> Edit:
    """Insert ``target(producer, *extra, **kwargs)`` on the edge from ``producer`` to
    ``user``: the new node takes the producer's value and the user takes the new node's.
    With ``user=None`` the new node goes right after ``producer`` and every user of the
    producer (the output too) takes the new node's value instead."""
    if user is not None and producer not in [n for _, n in doc.inputs(user)]:
        raise EditError(f"'{user}' does not use '{producer}'.")
    users = [user] if user is not None else doc.users(producer)
    kw = dict(kwargs or {})
    if op == "call_module":
        module = build_module(target, 0)
        path = module_path_of(doc, module)
        spec = new_spec(doc, op, path, (Ref(producer), *extra), kw, producer, path, path)
        pre: list[Step] = [SetSubmodule(path, module)]
    else:
        value = resolve_function(target) if op == "call_function" else target
        base = getattr(value, "__name__", str(target))
        spec = new_spec(doc, op, value, (Ref(producer), *extra), kw, producer, base)
        pre = []
    swap = lambda v: Ref(spec.name) if v == Ref(producer) else v  # noqa: E731
    rewired: list[Step] = []
    for name in users:
        node = node_of(doc, name)
        args = map_aggregate(to_refs(node.args), swap)  # type: ignore[arg-type]
        kwargs_ = map_aggregate(to_refs(dict(node.kwargs)), swap)  # type: ignore[arg-type]
        rewired.append(SetInputs(name, args, kwargs_))
    where = f"between {producer} and {user}" if user is not None else f"after {producer}"
    record = recorded(
        "splice", producer=producer, user=user, op=op, target=target, extra=tuple(extra)
    )
    if kw:
        record["kwargs"] = kw
    return commit(
        doc,
        f"Insert {spec.name} {where}",
        [*pre, CreateNode(spec), *rewired],
        ChangeKind.NODES_ADDED,
        record,
    )


@edit_kind()
def delete(doc: GraphDocument, names: Iterable[str]) -> Edit:
    """Delete nodes.  A node whose value is still used by a node outside the selection is
    bypassed (its users take its first input) when that input is a value of the same kind,
    else the deletion is refused.  A submodule no node calls any more goes with it (and
    comes back with its weights on undo)."""
    chosen = list(dict.fromkeys(names))
    for name in chosen:
        node = node_of(doc, name)
        if node.op == "output":
            raise EditError("The output node cannot be deleted; choose what the graph returns.")
        if node.op == "placeholder" and node.users:
            raise EditError(f"The input '{name}' is used; remove its uses first.")
    order = {n: i for i, n in enumerate(doc.node_names())}
    chosen.sort(key=order.__getitem__)
    gone = set(chosen)
    steps: list[Step] = []
    replaced: dict[str, Any] = {}  # deleted node -> what its users use instead
    for name in chosen:
        node = doc.node(name)
        source = _bypass_source(node, replaced, gone)
        if source is not None:
            replaced[name] = source
            continue
        outside = [u for u in node.users if u.name not in gone]
        if outside:
            users = ", ".join(u.name for u in outside)
            raise EditError(
                f"'{name}' cannot be deleted: {users} use its value, and it has no input "
                "of the same kind to pass on in its place. Delete or rewire those first."
            )
    users_done: set[str] = set()
    for name in chosen:
        for user in doc.node(name).users:
            if user.name in gone or user.name in users_done:
                continue
            users_done.add(user.name)

            def swap(v: Any) -> Any:
                while isinstance(v, Ref) and v.name in replaced:
                    v = replaced[v.name]
                return v

            steps.append(
                SetInputs(
                    user.name,
                    map_aggregate(to_refs(user.args), swap),
                    map_aggregate(to_refs(dict(user.kwargs)), swap),
                )
            )
    steps += [EraseNode(name) for name in reversed(chosen)]
    calls = {n.target for n in doc.graph.nodes if n.op == "call_module" and n.name not in gone}
    for name in chosen:
        node = doc.node(name)
        if node.op == "call_module" and node.target not in calls:
            steps.append(SetSubmodule(str(node.target), None))
            calls.add(node.target)
    label = f"Delete {chosen[0]}" if len(chosen) == 1 else f"Delete {len(chosen)} nodes"
    return commit(doc, label, steps, ChangeKind.NODES_REMOVED, recorded("delete", names=chosen))


def _bypass_source(node: fx.Node, replaced: dict[str, Any], gone: set[str]) -> Any:
    """The input that can stand in for ``node``: its first node argument (not deleted with
    it, or itself replaced) when it has the node's shape and dtype (or both are unknown)."""
    for arg in node.all_input_nodes:
        if arg.op == "get_attr" or (arg.name in gone and arg.name not in replaced):
            continue
        mine, theirs = node.meta.get("val"), arg.meta.get("val")
        if isinstance(mine, torch.Tensor) and isinstance(theirs, torch.Tensor):
            if mine.shape != theirs.shape or mine.dtype != theirs.dtype:
                return None
        elif (mine is None) != (theirs is None) or type(mine) is not type(theirs):
            return None
        return replaced.get(arg.name, Ref(arg.name))
    return None


@edit_kind()
def paste(doc: GraphDocument, names: Sequence[str]) -> Edit:
    """Copies of the named nodes (new unique names), placed after the last of them.  Inside
    the copy, arguments point at the copies; values from outside stay shared.  A copied
    ``call_module`` calls the same submodule (the same weights)."""
    order = {n: i for i, n in enumerate(doc.node_names())}
    chosen = sorted(dict.fromkeys(names), key=lambda n: order.get(n, -1))
    if not chosen:
        raise EditError("Copy some nodes first.")
    for name in chosen:
        node = node_of(doc, name)
        if node.op in ("placeholder", "output"):
            raise EditError(
                f"'{name}' is an {'input' if node.op == 'placeholder' else 'output'}; "
                "inputs and the output cannot be pasted."
            )
    renamed: dict[str, str] = {}
    steps: list[Step] = []
    after = chosen[-1]
    for name in chosen:
        spec = spec_of(doc.node(name))
        new = unique_name(doc, re.sub(r"_\d+$", "", name), set(renamed.values()))
        renamed[name] = new

        def swap(v: Any) -> Any:
            return Ref(renamed[v.name]) if isinstance(v, Ref) and v.name in renamed else v

        meta = {k: v for k, v in spec.meta.items() if k in ("nn_module_stack", "stack_trace")}
        steps.append(
            CreateNode(
                NodeSpec(
                    new,
                    spec.op,
                    spec.target,
                    map_aggregate(spec.args, swap),
                    map_aggregate(spec.kwargs, swap),
                    spec.type,
                    meta,
                    after,
                )
            )
        )
        after = new
    label = f"Paste {len(chosen)} node{'s' if len(chosen) > 1 else ''}"
    return commit(doc, label, steps, ChangeKind.NODES_ADDED, recorded("paste", names=chosen))


#: Type annotations an input can have, by the name a user writes.
INPUT_TYPES: dict[str, Any] = {
    "Tensor": torch.Tensor,
    "torch.Tensor": torch.Tensor,
    "int": int,
    "float": float,
    "bool": bool,
    "str": str,
}


@edit_kind(type_expr="type")
def add_input(
    doc: GraphDocument, name: str, type_expr: Any = None, default: Any = inspect.Signature.empty
) -> Edit:
    """A new placeholder after the others (``Graph.placeholder(name, type_expr, default)``);
    ``type_expr`` may be a type or its name (``"Tensor"``, ``"int"``, ``"float"``...)."""
    check_name(doc, name)
    if isinstance(type_expr, str):
        if type_expr not in INPUT_TYPES:
            raise EditError(
                f"'{type_expr}' is not a type fxstudio knows; use {', '.join(INPUT_TYPES)}."
            )
        type_expr = INPUT_TYPES[type_expr]
    last = [n for n in doc.graph.nodes if n.op == "placeholder"]
    args = () if default is inspect.Signature.empty else (default,)
    required_after = [n for n in last if not n.args]
    if args == () and len(required_after) != len(last):
        raise EditError(f"'{name}' needs a default value: the inputs before it have defaults.")
    spec = NodeSpec(
        name, "placeholder", name, args, {}, type_expr, {}, last[-1].name if last else None
    )
    record = recorded("add_input", name=name)
    if args:
        record["default"] = default
    if type_expr is not None:
        record["type"] = getattr(type_expr, "__name__", str(type_expr))
    return commit(doc, f"Add input {name}", [CreateNode(spec)], ChangeKind.NODES_ADDED, record)


@edit_kind()
def rewire(doc: GraphDocument, user: str, label: str, source: str) -> Edit:
    """Make the argument ``label`` of ``user`` (``"args[1]"``, ``"dim"``, ``"args[0][2]"``,
    as the inspector's inputs list them) the value of ``source``.  A node that uses no other
    node's value yet takes ``source`` as its first argument."""
    node = node_of(doc, user)
    node_of(doc, source)
    args, kwargs = to_refs(node.args), to_refs(dict(node.kwargs))
    found = [False]

    def walk(value: Any, here: str) -> Any:
        if here == label:
            found[0] = True
            return Ref(source)
        if isinstance(value, (list, tuple)):
            items = [walk(v, f"{here}[{i}]") for i, v in enumerate(value)]
            return type(value)(items) if isinstance(value, list) else tuple(items)
        if isinstance(value, dict):
            return {k: walk(v, f"{here}[{k!r}]") for k, v in value.items()}
        return value

    new_args = tuple(walk(a, f"args[{i}]") for i, a in enumerate(args))
    new_kwargs = {k: walk(v, k) for k, v in kwargs.items()}
    if not found[0]:
        if label != "args[0]":
            raise EditError(f"'{user}' has no argument {label}.")
        new_args = (Ref(source), *new_args[1:])
    return commit(
        doc,
        f"Connect {source} to {user}.{label}",
        [SetInputs(user, new_args, new_kwargs)],
        ChangeKind.NODES_CHANGED,
        recorded("rewire", user=user, label=label, source=source),
    )


@edit_kind()
def move_input(doc: GraphDocument, name: str, position: int) -> Edit:
    """Put the input ``name`` at ``position`` among the inputs (0: first)."""
    node = node_of(doc, name)
    if node.op != "placeholder":
        raise EditError(f"'{name}' is not an input of the graph.")
    others = [n.name for n in doc.graph.nodes if n.op == "placeholder" and n.name != name]
    if not 0 <= position <= len(others):
        raise EditError(f"There is no input position {position}; there are {len(others) + 1}.")
    after = others[position - 1] if position > 0 else None
    order = [*others[:position], name, *others[position:]]
    defaults = [bool(doc.node(n).args) for n in order]
    if any(d and not later for i, d in enumerate(defaults) for later in defaults[i + 1 :]):
        raise EditError("Inputs with a default value must come after those without one.")
    return commit(
        doc,
        f"Move input {name} to position {position + 1}",
        [MoveNode(name, after)],
        ChangeKind.NODES_CHANGED,
        recorded("move_input", name=name, position=position),
    )


@edit_kind()
def set_outputs(doc: GraphDocument, names: Sequence[str]) -> Edit:
    """Choose what the graph returns: one value, or a tuple of several."""
    out = next(n for n in doc.graph.nodes if n.op == "output")
    for n in names:
        node_of(doc, n)
    value: Any = Ref(names[0]) if len(names) == 1 else tuple(Ref(n) for n in names)
    return commit(
        doc,
        "Return " + ", ".join(names),
        [SetInputs(out.name, (value,), {})],
        ChangeKind.NODES_CHANGED,
        recorded("set_outputs", names=list(names)),
    )
