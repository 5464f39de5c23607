"""Every change to the graph: each edit all-or-nothing, undoable, and recorded.

An edit is a list of small reversible steps (create a node, erase one, set a node's inputs,
its target or its name, add or drop a submodule).  :func:`commit` applies them, then checks
the result -- ``Graph.lint()``, the targets, the argument counts, ``recompile()`` -- and puts
everything back if any step or check fails, raising :class:`EditError` with a message for the
user.  The returned :class:`Edit` undoes and redoes exactly (the generated code comes back
character for character), re-propagates shapes, and emits one document event.

Nodes are named, never held: steps refer to nodes by name and arguments use :class:`Ref`, so
an undo that re-creates a node (a new ``fx.Node`` object) is still followed correctly.

Example:
    >>> from fxstudio.core.session import open_document
    >>> doc = open_document("examples:negrelu")
    >>> e = set_target(doc, "relu", "torch.nn.functional.gelu")
    >>> "gelu" in doc.code(), e.label
    (True, 'Change relu to torch.nn.functional.gelu')
    >>> e.undo(); "gelu" in doc.code()
    False
    >>> set_inputs(doc, "neg", [Ref("mul")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fxstudio.core.edits.EditError: 'neg' would use 'mul', which comes after it in the graph ...
"""

from __future__ import annotations

import ast
import builtins
import importlib
import inspect
import keyword
import operator
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch import nn
from torch.fx.node import map_aggregate

from fxstudio.core.catchup import repropagate
from fxstudio.core.document import ChangeKind, GraphDocument, format_target
from fxstudio.core.errors import UserError


class EditError(UserError):
    """An edit that would make the graph invalid.  Nothing was changed."""


@dataclass(frozen=True)
class Ref:
    """An argument that is another node's value, by name."""

    name: str

    def __repr__(self) -> str:
        return f"%{self.name}"


@dataclass(frozen=True)
class NodeSpec:
    """Everything needed to create a node again exactly."""

    name: str
    op: str
    target: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    type: Any = None
    meta: dict[str, Any] = field(default_factory=dict)
    after: str | None = None  # the node it comes after (None: first in the graph)


def node_of(doc: GraphDocument, name: str) -> fx.Node:
    try:
        return doc.node(name)
    except KeyError:
        raise EditError(f"There is no node named '{name}'.") from None


# --- converting between fx arguments and named references ---------------------------------------


def to_refs(value: Any) -> Any:
    """``fx.Node`` objects inside ``value`` replaced by :class:`Ref`."""
    # (map_aggregate's callback may return any value; torch types it as returning an Argument)
    refs = map_aggregate(value, lambda v: Ref(v.name) if isinstance(v, fx.Node) else v)  # type: ignore[arg-type,return-value]
    return refs


def from_refs(doc: GraphDocument, value: Any) -> Any:
    """:class:`Ref` objects inside ``value`` replaced by the document's nodes."""

    def resolve(v: Any) -> Any:
        if isinstance(v, Ref):
            try:
                return doc.node(v.name)
            except KeyError:
                raise EditError(f"There is no node named '{v.name}'.") from None
        return v

    return map_aggregate(value, resolve)


def refs_in(value: Any) -> list[str]:
    found: list[str] = []
    map_aggregate(value, lambda v: found.append(v.name) if isinstance(v, Ref) else v)
    return found


# --- the reversible steps ----------------------------------------------------------------------


class Step:
    """One reversible change; ``inverse()`` is built from the state before ``apply``."""

    def apply(self, doc: GraphDocument) -> None:
        raise NotImplementedError

    def inverse(self) -> Step:
        raise NotImplementedError

    def touched(self) -> set[str]:
        return set()


@dataclass
class CreateNode(Step):
    spec: NodeSpec

    def apply(self, doc: GraphDocument) -> None:
        graph, s = doc.graph, self.spec
        names = doc._node_index()
        if s.name in names:
            raise EditError(f"There is already a node named '{s.name}'.")
        # A name is never handed out twice by fx, even after its node is erased; an undo
        # brings back the very name, so it must be free again.
        graph._graph_namespace._used_names.discard(s.name)
        where = (
            graph.inserting_after(names[s.after])
            if s.after is not None
            else graph.inserting_before(next(iter(graph.nodes), None))
        )
        with where:
            node = graph.create_node(
                s.op,
                s.target,
                from_refs(doc, s.args),
                from_refs(doc, s.kwargs),
                name=s.name,
                type_expr=s.type,
            )
        node.meta = dict(s.meta)
        doc._cache.clear()
        if node.name != s.name:  # fx refused the name (a Python builtin or keyword)
            raise EditError(f"'{s.name}' cannot name a node: Python reserves it.")

    def inverse(self) -> Step:
        return EraseNode(self.spec.name, self.spec)

    def touched(self) -> set[str]:
        return {self.spec.name}


@dataclass
class EraseNode(Step):
    name: str
    spec: NodeSpec | None = None  # filled in on apply, for the inverse

    def apply(self, doc: GraphDocument) -> None:
        node = doc.node(self.name)
        if node.users:
            users = ", ".join(u.name for u in node.users)
            raise EditError(f"'{self.name}' is still used by {users}.")
        self.spec = spec_of(node)
        doc.graph.erase_node(node)
        doc._cache.clear()

    def inverse(self) -> Step:
        assert self.spec is not None
        return CreateNode(self.spec)


@dataclass
class SetInputs(Step):
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    old: tuple[tuple[Any, ...], dict[str, Any]] | None = None

    def apply(self, doc: GraphDocument) -> None:
        node = doc.node(self.name)
        self.old = (to_refs(node.args), to_refs(dict(node.kwargs)))
        node.args = from_refs(doc, tuple(self.args))
        node.kwargs = from_refs(doc, dict(self.kwargs))

    def inverse(self) -> Step:
        assert self.old is not None
        return SetInputs(self.name, self.old[0], self.old[1])

    def touched(self) -> set[str]:
        return {self.name}


@dataclass
class SetTarget(Step):
    name: str
    target: Any
    old: Any = None

    def apply(self, doc: GraphDocument) -> None:
        node = doc.node(self.name)
        self.old = node.target
        node.target = self.target

    def inverse(self) -> Step:
        return SetTarget(self.name, self.old)

    def touched(self) -> set[str]:
        return {self.name}


@dataclass
class RenameNode(Step):
    old: str
    new: str

    def apply(self, doc: GraphDocument) -> None:
        check_name(doc, self.new)
        node = doc.node(self.old)
        doc.graph._graph_namespace._used_names.discard(self.new)
        node._rename(self.new)
        if node.name != self.new:
            raise EditError(f"'{self.new}' cannot name a node: Python reserves it.")
        if self.old in doc.positions:
            doc.positions[self.new] = doc.positions.pop(self.old)
        doc._cache.clear()

    def inverse(self) -> Step:
        return RenameNode(self.new, self.old)

    def touched(self) -> set[str]:
        return {self.new}


@dataclass
class MoveNode(Step):
    """Move a node to just after another (``None``: to the front)."""

    name: str
    after: str | None
    old: str | None = None

    def apply(self, doc: GraphDocument) -> None:
        node = doc.node(self.name)
        self.old = node.prev.name if node.prev.op != "root" else None
        if self.after is None:
            next(iter(doc.graph.nodes)).prepend(node)
        else:
            doc.node(self.after).append(node)
        doc._cache.clear()

    def inverse(self) -> Step:
        return MoveNode(self.name, self.old)

    def touched(self) -> set[str]:
        return {self.name}


@dataclass
class SetSubmodule(Step):
    """Add (``module``) or remove (``None``) a submodule; the inverse keeps the object, so an
    undo brings back the very weights."""

    path: str
    module: nn.Module | None
    old: nn.Module | None = None

    def apply(self, doc: GraphDocument) -> None:
        gm = doc.graph_module
        self.old = _get_submodule(gm, self.path)
        if self.module is None:
            gm.delete_submodule(self.path)
        else:
            gm.add_submodule(self.path, self.module)
        doc._cache.clear()

    def inverse(self) -> Step:
        return SetSubmodule(self.path, self.old)


def _get_submodule(gm: nn.Module, path: str) -> nn.Module | None:
    try:
        return gm.get_submodule(path)
    except AttributeError:
        return None


def spec_of(node: fx.Node) -> NodeSpec:
    return NodeSpec(
        name=node.name,
        op=node.op,
        target=node.target,
        args=to_refs(node.args),
        kwargs=to_refs(dict(node.kwargs)),
        type=node.type,
        meta=dict(node.meta),
        after=node.prev.name if node.prev.op != "root" else None,
    )


# --- edits ---------------------------------------------------------------------------------------


@dataclass
class Edit:
    """Applied steps that can be undone and redone; ``record`` says how to replay them."""

    doc: GraphDocument
    label: str
    steps: list[Step]
    kind: ChangeKind
    names: set[str]
    record: dict[str, Any] = field(default_factory=dict)

    def undo(self) -> None:
        """Undo this edit, which must be the last one made (undo is a stack)."""
        if not self.doc.history or self.doc.history[-1] is not self.record:
            raise EditError(f"Undo the edits made after '{self.label}' first.")
        inverses = [s.inverse() for s in reversed(self.steps)]
        _run(self.doc, inverses, self.label)
        self.doc.history.pop()
        _finish(self.doc, _undo_kind(self.kind), self.names)

    def redo(self) -> None:
        _run(self.doc, self.steps, self.label)  # each step notes the state it replaces again
        self.doc.history.append(self.record)
        _finish(self.doc, self.kind, self.names)


def _undo_kind(kind: ChangeKind) -> ChangeKind:
    return {
        ChangeKind.NODES_ADDED: ChangeKind.NODES_REMOVED,
        ChangeKind.NODES_REMOVED: ChangeKind.NODES_ADDED,
    }.get(kind, kind)


def commit(
    doc: GraphDocument,
    label: str,
    steps: Sequence[Step],
    kind: ChangeKind,
    record: dict[str, Any] | None = None,
) -> Edit:
    """Apply ``steps`` as one edit, or none of them (raising :class:`EditError`)."""
    steps = list(steps)
    _run(doc, steps, label)
    names = set().union(*(s.touched() for s in steps)) if steps else set()
    edit = Edit(doc, label, steps, kind, names, record or {})
    doc.history.append(edit.record)
    _finish(doc, kind, names)
    return edit


def _run(doc: GraphDocument, steps: list[Step], label: str) -> None:
    done: list[Step] = []
    try:
        for step in steps:
            step.apply(doc)
            done.append(step)
        _validate(doc, set().union(*(s.touched() for s in steps)) if steps else set())
    except Exception as exc:
        for step in reversed(done):
            step.inverse().apply(doc)
        doc._cache.clear()
        _recompile(doc)
        if isinstance(exc, EditError):
            raise
        raise EditError(f"{label} was refused: {type(exc).__name__}: {exc}") from exc


def _validate(doc: GraphDocument, touched: set[str]) -> None:
    """The checks every edit passes before it is kept."""
    graph = doc.graph
    try:
        graph.lint()
    except RuntimeError as exc:
        text = str(exc)
        m = re.search(r"Argument '(\w+)' of Node '(\w+)' was used before it has been defined", text)
        if m:
            raise EditError(
                f"'{m.group(2)}' would use '{m.group(1)}', which comes after it in the graph "
                "(a value must be computed before it is used, and no cycle is possible)."
            ) from None
        raise EditError(f"The graph would not be valid: {text}") from None
    names = doc._node_index()
    for name in touched:
        node = names.get(name)
        if node is not None:
            check_call(doc, node)
    _recompile(doc)


def _recompile(doc: GraphDocument) -> None:
    if doc.defer_heavy:
        doc.compiled = False  # the code comes from fxstudio.core.catchup; run: ensure_compiled
    else:
        doc.graph_module.recompile()
        doc.compiled = True


def check_call(doc: GraphDocument, node: fx.Node) -> None:
    """Refuse a non-callable target or arguments its signature cannot take."""
    if node.op == "call_function":
        if not callable(node.target):
            raise EditError(f"'{node.target}' is not a function: '{node.name}' cannot call it.")
        fn = node.target
    elif node.op == "call_method":
        if not isinstance(node.target, str) or not hasattr(torch.Tensor, node.target):
            raise EditError(f"Tensors have no method '{node.target}'.")
        if not node.args:
            raise EditError(
                f"'{node.name}' calls .{node.target}() on nothing: select the node whose value "
                "it is called on (or give it as the first argument)."
            )
        return
    elif node.op == "call_module":
        module = _get_submodule(doc.graph_module, str(node.target))
        if module is None:
            raise EditError(f"The model has no submodule '{node.target}'.")
        fn = module.forward
    else:
        return
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        # A builtin (torch.sigmoid): torch lists one signature for each, but not its
        # overloads (torch.max(x) and torch.max(x, 1)), so only a call without any argument
        # is checked against it; shapes tell about the rest.
        override = torch.overrides.get_testing_overrides().get(fn)
        if override is None or node.args or node.kwargs:
            return
        sig = inspect.signature(override)
    try:
        sig.bind(*node.args, **node.kwargs)
    except TypeError as exc:
        if not node.args and not node.kwargs:
            raise EditError(
                f"'{node.name}' calls {format_target(node)} without arguments ({exc}): select "
                "the node it should take, or give its arguments."
            ) from None
        raise EditError(
            f"'{node.name}' cannot call {format_target(node)} that way: {exc}."
        ) from None


def _finish(doc: GraphDocument, kind: ChangeKind, names: set[str]) -> None:
    reshaped: set[str] = set()
    if doc.defer_heavy:
        doc.shapes_stale = True  # see fxstudio.core.catchup
    else:
        old = doc.shape_problem
        reshaped = recheck_shapes(doc)
        names = names | {p[0] for p in (old, doc.shape_problem) if p}
    doc.emit(kind, names, reshaped=reshaped)


def recheck_shapes(doc: GraphDocument) -> set[str]:
    """Propagate shapes again; a node that no longer fits is recorded, not refused.  Returns
    the nodes whose shape or dtype changed (their labels must be drawn again)."""
    doc.shape_problem, changed = repropagate(
        doc.graph_module, doc.graph, doc.example_inputs, doc.source.source_file
    )
    return changed


# --- names and targets ---------------------------------------------------------------------------

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_name(doc: GraphDocument, name: str) -> None:
    if not _IDENT.match(name):
        raise EditError(
            f"'{name}' is not a valid name: use letters, digits and _, not starting with a digit."
        )
    if keyword.iskeyword(name) or hasattr(builtins, name) or name in ("self", "torch"):
        raise EditError(f"'{name}' cannot name a node: Python reserves it.")
    if name in doc._node_index():
        raise EditError(f"There is already a node named '{name}'.")


def unique_name(
    doc: GraphDocument, base: str, also: set[str] | frozenset[str] = frozenset()
) -> str:
    """``base``, or ``base_N``: a name no node has (nor had: fx never reuses one), nor ``also``."""
    base = re.sub(r"\W", "_", base).strip("_") or "node"
    if base[0].isdigit():
        base = f"_{base}"
    taken = set(doc._node_index()) | doc.graph._graph_namespace._used_names | set(also)
    if base not in taken and not keyword.iskeyword(base) and not hasattr(builtins, base):
        return base
    i = 1
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"


def resolve_function(text: str) -> Callable[..., Any]:
    """``"torch.relu"``, ``"torch.nn.functional.gelu"``, ``"operator.add"`` -> the callable."""
    text = text.strip()
    if text.startswith("F."):
        text = "torch.nn.functional." + text[2:]
    parts = text.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        if callable(obj):
            return obj  # type: ignore[no-any-return]
        raise EditError(f"'{text}' is not a function.")
    if len(parts) == 1 and hasattr(operator, text):
        return getattr(operator, text)  # type: ignore[no-any-return]
    raise EditError(
        f"There is no function '{text}'. Write its full name, e.g. torch.relu, "
        "torch.nn.functional.gelu or operator.add."
    )


# --- the edits users make ------------------------------------------------------------------------


def rename(doc: GraphDocument, name: str, new: str) -> Edit:
    """Give a node a new name (a valid identifier no other node has)."""
    node_of(doc, name)
    check_name(doc, new)
    return commit(
        doc,
        f"Rename {name} to {new}",
        [RenameNode(name, new)],
        ChangeKind.GRAPH_REPLACED,
        {"edit": "rename", "name": name, "new": new},
    )


def set_target(doc: GraphDocument, name: str, target: str) -> Edit:
    """Call another function (``call_function``), method (``call_method``) or submodule."""
    node = node_of(doc, name)
    if node.op == "call_function":
        value: Any = resolve_function(target)
    elif node.op in ("call_method", "call_module", "get_attr"):
        value = target
    else:
        raise EditError(f"A {node.op} node has no target to change.")
    return commit(
        doc,
        f"Change {name} to {target}",
        [SetTarget(name, value)],
        ChangeKind.NODES_CHANGED,
        {"edit": "set_target", "name": name, "target": target},
    )


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
        {"edit": "set_inputs", "name": name, "args": new_args, "kwargs": new_kwargs},
    )


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
        if _get_attr(doc.graph_module, target) is None:
            raise EditError(f"The model has no parameter or buffer '{target}'.")
        value, base = target, target.replace(".", "_")
    else:
        raise EditError(f"Insert a call_function, call_method or get_attr node, not {op}.")
    spec = _new_spec(doc, op, value, tuple(args), dict(kwargs or {}), after, base, name)
    return commit(
        doc,
        f"Insert {spec.name}",
        [CreateNode(spec)],
        ChangeKind.NODES_ADDED,
        {
            "edit": "insert",
            "op": op,
            "target": target,
            "args": spec.args,
            "kwargs": spec.kwargs,
            "after": spec.after,
            "name": spec.name,
        },
    )


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
    path = name or _module_path(doc, module)
    spec = _new_spec(doc, "call_module", path, tuple(args), {}, after, path, name)
    return commit(
        doc,
        f"Insert {constructor}",
        [SetSubmodule(path, module), CreateNode(spec)],
        ChangeKind.NODES_ADDED,
        {
            "edit": "insert_module",
            "constructor": constructor,
            "args": spec.args,
            "after": spec.after,
            "name": path,
            "seed": seed,
        },
    )


def splice(
    doc: GraphDocument, producer: str, user: str, op: str, target: str, extra: Sequence[Any] = ()
) -> Edit:
    """Insert ``target(producer, *extra)`` on the edge from ``producer`` to ``user``: the new
    node takes the producer's value and the user takes the new node's."""
    if producer not in [n for _, n in doc.inputs(user)]:
        raise EditError(f"'{user}' does not use '{producer}'.")
    if op == "call_module":
        module = build_module(target, 0)
        path = _module_path(doc, module)
        spec = _new_spec(doc, op, path, (Ref(producer), *extra), {}, producer, path, path)
        pre: list[Step] = [SetSubmodule(path, module)]
    else:
        value = resolve_function(target) if op == "call_function" else target
        base = getattr(value, "__name__", str(target))
        spec = _new_spec(doc, op, value, (Ref(producer), *extra), {}, producer, base)
        pre = []
    node = node_of(doc, user)
    swap = lambda v: Ref(spec.name) if v == Ref(producer) else v  # noqa: E731
    args = map_aggregate(to_refs(node.args), swap)  # type: ignore[arg-type]
    kwargs = map_aggregate(to_refs(dict(node.kwargs)), swap)  # type: ignore[arg-type]
    return commit(
        doc,
        f"Insert {spec.name} between {producer} and {user}",
        [*pre, CreateNode(spec), SetInputs(user, args, kwargs)],
        ChangeKind.NODES_ADDED,
        {
            "edit": "splice",
            "producer": producer,
            "user": user,
            "op": op,
            "target": target,
            "extra": tuple(extra),
        },
    )


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
    return commit(doc, label, steps, ChangeKind.NODES_REMOVED, {"edit": "delete", "names": chosen})


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
    return commit(doc, label, steps, ChangeKind.NODES_ADDED, {"edit": "paste", "names": chosen})


#: Type annotations an input can have, by the name a user writes.
INPUT_TYPES: dict[str, Any] = {
    "Tensor": torch.Tensor,
    "torch.Tensor": torch.Tensor,
    "int": int,
    "float": float,
    "bool": bool,
    "str": str,
}


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
    record: dict[str, Any] = {"edit": "add_input", "name": name}
    if args:
        record["default"] = default
    if type_expr is not None:
        record["type"] = getattr(type_expr, "__name__", str(type_expr))
    return commit(doc, f"Add input {name}", [CreateNode(spec)], ChangeKind.NODES_ADDED, record)


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
        {"edit": "rewire", "user": user, "label": label, "source": source},
    )


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
        {"edit": "move_input", "name": name, "position": position},
    )


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
        {"edit": "set_outputs", "names": list(names)},
    )


# --- helpers ------------------------------------------------------------------------------------


def _snake(name: str) -> str:
    """``Linear`` -> ``linear``, ``BatchNorm2d`` -> ``batch_norm2d``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _get_attr(gm: nn.Module, path: str) -> Any:
    obj: Any = gm
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _module_path(doc: GraphDocument, module: nn.Module) -> str:
    """A new submodule's name, from its class (``Linear`` -> ``linear``), free both as an
    attribute of the model and as a node name (its call_module node takes the same name)."""
    return _unique_attr(doc.graph_module, unique_name(doc, _snake(type(module).__name__)))


def _unique_attr(gm: nn.Module, base: str) -> str:
    base = re.sub(r"\W", "_", base) or "module"
    if not hasattr(gm, base):
        return base
    i = 1
    while hasattr(gm, f"{base}_{i}"):
        i += 1
    return f"{base}_{i}"


def _new_spec(
    doc: GraphDocument,
    op: str,
    target: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    after: str | None,
    base: str,
    name: str | None = None,
) -> NodeSpec:
    """A node to create; ``name`` is taken as given (checked), else made from ``base``."""
    if name is not None:
        check_name(doc, name)
    used = refs_in((args, kwargs))
    for ref in used:
        node_of(doc, ref)
    if after is None:
        order = {n: i for i, n in enumerate(doc.node_names())}
        after = max(used, key=order.__getitem__) if used else _last_placeholder(doc)
    if after is None:
        raise EditError("The graph has no inputs to place a new node after: add an input first.")
    anchor = node_of(doc, after)
    if anchor.op == "output":
        raise EditError("Nothing can come after the output node.")
    meta = {}
    stack = dict(anchor.meta.get("nn_module_stack") or {})
    if anchor.op == "call_module" and stack:  # not inside the module the anchor calls
        last = next(reversed(stack))
        if str(stack[last][0]) == str(anchor.target):
            del stack[last]
    if stack:  # drawn in the same module as the node it follows
        meta["nn_module_stack"] = stack
    return NodeSpec(name or unique_name(doc, base), op, target, args, kwargs, None, meta, after)


def _last_placeholder(doc: GraphDocument) -> str | None:
    last = None
    for n in doc.graph.nodes:
        if n.op == "placeholder":
            last = n.name
    return last


_MODULE_SCOPE = {"nn": nn, "torch": torch}


def build_module(constructor: str, seed: int = 0) -> nn.Module:
    """``"nn.Linear(16, 8)"`` -> a module, its weights drawn from ``seed``."""
    text = constructor.strip()
    if not re.match(r"^(nn|torch\.nn)\.[A-Za-z_][\w.]*\(.*\)$", text, re.S):
        raise EditError(
            f"'{constructor}' is not a module constructor. Write e.g. nn.LeakyReLU(0.1) or "
            "nn.Linear(16, 8)."
        )
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            module = eval(text, {"__builtins__": {}}, dict(_MODULE_SCOPE))  # noqa: S307
    except Exception as exc:
        raise EditError(f"{constructor} failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(module, nn.Module):
        raise EditError(f"{constructor} is not an nn.Module.")
    return module


def parse_arguments(doc: GraphDocument, text: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``"1, dim=-1, x"`` -> ``((1, Ref("x")), {"dim": -1})``: Python literals, tuples and
    lists, ``torch.float16``-style dtypes, None, and node names for other nodes' values."""
    text = text.strip()
    if not text:
        return (), {}
    try:
        call = ast.parse(f"f({text})", mode="eval").body
        assert isinstance(call, ast.Call)

        def value(node: ast.expr) -> Any:
            if isinstance(node, ast.Name):
                if node.id in doc._node_index():
                    return Ref(node.id)
                if node.id in ("None", "True", "False"):
                    return ast.literal_eval(node)
                raise EditError(f"'{node.id}' is neither a node nor a Python value.")
            if isinstance(node, (ast.Tuple, ast.List)):  # may hold node names
                items = [value(e) for e in node.elts]
                return tuple(items) if isinstance(node, ast.Tuple) else items
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "torch"
            ):
                found = getattr(torch, node.attr, None)
                if isinstance(found, (torch.dtype, torch.memory_format, torch.layout)):
                    return found  # torch.float16, torch.channels_last...
                raise EditError(f"torch.{node.attr} is not a dtype, layout or memory format.")
            return ast.literal_eval(node)

        return tuple(value(a) for a in call.args), {
            k.arg: value(k.value) for k in call.keywords if k.arg is not None
        }
    except (SyntaxError, ValueError, AssertionError) as exc:
        raise EditError(
            f"'{text}' are not arguments fxstudio can read: write Python values and node "
            f"names separated by commas, e.g. 1, dim=-1 ({type(exc).__name__})."
        ) from None


def parse_kwargs(doc: GraphDocument, text: str) -> dict[str, Any]:
    """``"dim=-1, keepdim=True"`` or ``"{'dim': -1}"`` -> ``{"dim": -1, ...}``."""
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        try:
            tree = ast.parse(text, mode="eval").body
        except SyntaxError:
            raise EditError(f"'{text}' is not a dictionary fxstudio can read.") from None
        if not isinstance(tree, ast.Dict) or not all(
            isinstance(k, ast.Constant) for k in tree.keys
        ):
            raise EditError(f"'{text}' is not a dictionary of names to values.")
        text = ", ".join(
            f"{k.value}={ast.get_source_segment(text, v)}"  # type: ignore[union-attr]
            for k, v in zip(tree.keys, tree.values, strict=True)
        )
    args, kwargs = parse_arguments(doc, text)
    if args:
        raise EditError("Write keyword arguments as name=value, e.g. dim=-1.")
    return kwargs


COMMANDS = """\
delete NODE [NODE ...]            delete (users take the node's input when it fits)
rename NODE NEW                   give a node a new name
target NODE TARGET                call another function / method / submodule
args NODE ARGUMENTS               set the arguments, e.g.: args add x, 2.0
insert NODE TARGET [ARGUMENTS]    a new node fed by NODE: torch.sigmoid, .softmax dim=-1,
                                  nn.Linear(16, 8), or a weight such as fc1.weight
splice PRODUCER USER TARGET       insert TARGET on the edge from PRODUCER to USER
connect SOURCE USER [ARGUMENT]    USER's argument (args[1], dim; args[0] by default) takes
                                  SOURCE's value
input NAME[:TYPE] [DEFAULT]       a new input, e.g.: input scale:float 1.0
outputs NODE [NODE ...]           what the graph returns
paste NODE [NODE ...]             copies of the nodes (new names), after the last of them"""


def run_command(doc: GraphDocument, text: str) -> Edit:
    """One edit written as a line of text (the command line's ``fxstudio edit -e``); the
    forms are listed in :data:`COMMANDS`."""
    words = text.split(None, 3)
    if not words:
        raise EditError("An empty edit command.")
    verb, rest = words[0], words[1:]

    def need(n: int) -> None:
        if len(rest) < n:
            raise EditError(f"'{text}' is not a complete edit. The edits are:\n{COMMANDS}")

    if verb == "delete":
        need(1)
        return delete(doc, text.split()[1:])
    if verb == "rename":
        need(2)
        return rename(doc, rest[0], rest[1])
    if verb == "target":
        need(2)
        return set_target(doc, rest[0], rest[1])
    if verb == "args":
        need(2)
        args, kwargs = parse_arguments(doc, text.split(None, 2)[2])
        return set_inputs(doc, rest[0], args, kwargs)
    if verb == "insert":
        need(2)
        node, target = rest[0], rest[1]
        extra = text.split(None, 3)[3] if len(rest) > 2 else ""
        if target.startswith("nn."):
            return insert_module(doc, target, [Ref(node)], after=node)
        if target.startswith("."):
            args, kwargs = parse_arguments(doc, extra)
            return insert(doc, "call_method", target[1:], [Ref(node), *args], kwargs)
        if _get_attr(doc.graph_module, target) is not None and not extra:
            return insert(doc, "get_attr", target)
        args, kwargs = parse_arguments(doc, extra)
        return insert(doc, "call_function", target, [Ref(node), *args], kwargs)
    if verb == "splice":
        need(3)
        target = text.split(None, 3)[3]
        op = "call_module" if target.startswith("nn.") else "call_function"
        if target.startswith("."):
            op, target = "call_method", target[1:]
        return splice(doc, rest[0], rest[1], op, target)
    if verb == "input":
        need(1)
        name, _, type_name = rest[0].partition(":")
        annotation = type_name or None
        if len(rest) > 1:
            try:
                default = ast.literal_eval(text.split(None, 2)[2])
            except (ValueError, SyntaxError):
                raise EditError(f"'{text.split(None, 2)[2]}' is not a Python value.") from None
            return add_input(doc, name, annotation, default)
        return add_input(doc, name, annotation)
    if verb == "connect":
        need(2)
        return rewire(doc, rest[1], rest[2] if len(rest) > 2 else "args[0]", rest[0])
    if verb == "paste":
        need(1)
        return paste(doc, text.split()[1:])
    if verb == "outputs":
        need(1)
        return set_outputs(doc, text.split()[1:])
    raise EditError(f"Unknown edit '{verb}'. The edits are:\n{COMMANDS}")


# --- replay (sessions) ---------------------------------------------------------------------------


def replay(doc: GraphDocument, records: Iterable[dict[str, Any]]) -> None:
    """Apply recorded edits again (opening a session)."""
    for rec in records:
        kind = rec.get("edit")
        fn = _REPLAY.get(str(kind))
        if fn is None:
            raise EditError(f"Unknown edit '{kind}' in the session.")
        fn(doc, rec)


_REPLAY: dict[str, Callable[[GraphDocument, dict[str, Any]], Any]] = {
    "rename": lambda d, r: rename(d, r["name"], r["new"]),
    "set_target": lambda d, r: set_target(d, r["name"], r["target"]),
    "set_inputs": lambda d, r: set_inputs(d, r["name"], r["args"], r["kwargs"]),
    "insert": lambda d, r: insert(
        d, r["op"], r["target"], r["args"], r["kwargs"], r["after"], r["name"]
    ),
    "insert_module": lambda d, r: insert_module(
        d, r["constructor"], r["args"], r["after"], r["name"], r["seed"]
    ),
    "splice": lambda d, r: splice(d, r["producer"], r["user"], r["op"], r["target"], r["extra"]),
    "delete": lambda d, r: delete(d, r["names"]),
    "move_input": lambda d, r: move_input(d, r["name"], r["position"]),
    "rewire": lambda d, r: rewire(d, r["user"], r["label"], r["source"]),
    "paste": lambda d, r: paste(d, r["names"]),
    "add_input": lambda d, r: add_input(
        d, r["name"], r.get("type"), r.get("default", inspect.Signature.empty)
    ),
    "set_outputs": lambda d, r: set_outputs(d, r["names"]),
}


def encode_record(record: dict[str, Any]) -> dict[str, Any]:
    return {k: encode(v) for k, v in record.items()}


def decode_record(record: dict[str, Any]) -> dict[str, Any]:
    return {k: decode(v) for k, v in record.items()}


def encode(value: Any) -> Any:
    """A recorded edit as JSON (tuples, refs and dtypes kept apart from lists and strings)."""
    if isinstance(value, Ref):
        return {"ref": value.name}
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"dict": {k: encode(v) for k, v in value.items()}}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, (torch.memory_format, torch.layout)):
        return {"torch": str(value).removeprefix("torch.")}
    if isinstance(value, slice):
        return {"slice": [encode(value.start), encode(value.stop), encode(value.step)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise EditError(f"A value of type {type(value).__name__} cannot be saved in a session.")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "ref" in value:
            return Ref(value["ref"])
        if "tuple" in value:
            return tuple(decode(v) for v in value["tuple"])
        if "dict" in value:
            return {k: decode(v) for k, v in value["dict"].items()}
        if "dtype" in value:
            return getattr(torch, value["dtype"])
        if "torch" in value:
            return getattr(torch, value["torch"])
        if "slice" in value:
            return slice(*(decode(v) for v in value["slice"]))
        if "ellipsis" in value:
            return Ellipsis
    return value
