"""The reversible steps every edit is made of, and named references to nodes.

A step refers to nodes by name (:class:`Ref` in arguments), never by object: an undo that
re-creates a node (a new ``fx.Node``) is still followed correctly.
"""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch import nn
from torch.fx.node import map_aggregate

from fxstudio.core.errors import EditError
from fxstudio.core.fxcompat import release_name, rename_node, set_node_inputs
from fxstudio.core.fxcompat.modules import submodule_at
from fxstudio.core.graph.document import GraphDocument


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


_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def reserved(name: str) -> bool:
    """A name generated code cannot give a value: a keyword, a builtin, ``self``, ``torch``."""
    return keyword.iskeyword(name) or hasattr(builtins, name) or name in ("self", "torch")


def check_name(doc: GraphDocument, name: str) -> None:
    if not _IDENT.match(name):
        raise EditError(
            f"'{name}' is not a valid name: use letters, digits and _, not starting with a digit."
        )
    if reserved(name):
        raise EditError(f"'{name}' cannot name a node: Python reserves it.")
    if name in doc.node_index():
        raise EditError(f"There is already a node named '{name}'.")


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
    """One reversible change; ``inverse()`` is built from the state before ``apply``.

    ``changes_modules``: it changes the module's submodules or attributes, not the graph's
    nodes.  ``prechecked``: its nodes were checked by an edit made elsewhere (a worker's).
    ``shapes_fresh``: the graph it leaves has its shapes already (none to propagate), and
    :meth:`known_views` its views (code, rows…) when they were made already."""

    changes_modules = False
    prechecked = False
    shapes_fresh = False

    def known_views(self) -> dict[str, Any] | None:
        return None

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
        names = doc.node_index()
        if s.name in names:
            raise EditError(f"There is already a node named '{s.name}'.")
        # A name is never handed out twice by fx, even after its node is erased; an undo
        # brings back the very name, so it must be free again.
        release_name(graph, s.name)
        where = (
            graph.inserting_after(names[s.after])
            if s.after is not None
            else graph.inserting_before(next(iter(graph.nodes), None))
        )
        args, kwargs = from_refs(doc, s.args) or (), from_refs(doc, s.kwargs) or {}
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):  # (as create_node)
            raise EditError(f"A node's arguments are a tuple and a dict, not {args!r}, {kwargs!r}.")
        with where:
            # made bare, then given its arguments (as snapshots.rebuild does): create_node walks
            # them with pytree only to warn of a raw SymInt (a graph's own arguments have none)
            node = graph.create_node(s.op, s.target, None, None, name=s.name, type_expr=s.type)
        if node.name != s.name:  # fx refused the name (a Python builtin or keyword)
            graph.erase_node(node)
            doc.graph_touched()
            raise EditError(f"'{s.name}' cannot name a node: Python reserves it.")
        if args or kwargs:
            set_node_inputs(node, args, kwargs)
        node.meta = dict(s.meta)
        doc.graph_touched(added=node)

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
        doc.graph_touched(removed=self.name)

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
        release_name(doc.graph, self.new)
        rename_node(node, self.new)
        if node.name != self.new:
            raise EditError(f"'{self.new}' cannot name a node: Python reserves it.")
        if self.old in doc.positions:
            doc.positions[self.new] = doc.positions.pop(self.old)
        doc.graph_touched(added=node, removed=self.old)

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
        doc.graph_touched()

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
    changes_modules = True

    def apply(self, doc: GraphDocument) -> None:
        gm = doc.graph_module
        self.old = submodule_at(gm, self.path)
        if self.module is None:
            gm.delete_submodule(self.path)
        else:
            gm.add_submodule(self.path, self.module)
        doc.modules_changed()
        doc.graph_touched()

    def inverse(self) -> Step:
        return SetSubmodule(self.path, self.old)


@dataclass
class SetAttribute(Step):
    """Add (``value``) or remove (``None``) a tensor of the model at a dotted ``path`` -- a
    parameter stays a parameter, a tensor becomes a buffer (saved with the weights), anything
    else a plain attribute; the inverse keeps the object (undo brings back the very tensor).

        >>> import torch
        >>> from fxstudio.core.sessions.documents import open_document
        >>> doc = open_document("examples:negrelu")
        >>> step = SetAttribute("scale", torch.ones(2))
        >>> step.apply(doc); "scale" in dict(doc.graph_module.named_buffers())
        True
        >>> step.inverse().apply(doc); hasattr(doc.graph_module, "scale")
        False
    """

    path: str
    value: Any
    old: Any = None
    changes_modules = True

    def apply(self, doc: GraphDocument) -> None:
        owner_path, _, name = self.path.rpartition(".")
        owner = doc.graph_module.get_submodule(owner_path) if owner_path else doc.graph_module
        self.old = getattr(owner, name, None)
        if hasattr(owner, name):
            delattr(owner, name)
        if isinstance(self.value, nn.Parameter):
            owner.register_parameter(name, self.value)
        elif isinstance(self.value, torch.Tensor):
            owner.register_buffer(name, self.value)
        elif self.value is not None:
            setattr(owner, name, self.value)
        doc.modules_changed()
        doc.graph_touched()

    def inverse(self) -> Step:
        return SetAttribute(self.path, self.old)


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
