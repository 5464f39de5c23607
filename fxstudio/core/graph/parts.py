"""Run the part that fits: one module of a document -- a decoder layer, an expert, an
attention block -- taken out of its graph as a document of its own, at its real width, so it
can be run, profiled and compared like any model while the whole model (a 70B's weights)
would not fit.

The part is the document's own graph (rewrites included), cut at the module's boundary: the
values flowing in become its inputs (made with the shapes and dtypes the document recorded),
the values used after it its outputs, and the weights it reads come with it -- the document's
own when it has them; for a structure-only document of a checkpoint folder (``hf:FOLDER``,
``doc.checkpoint``) or of a ``.pt2`` program, the module's own tensors read from its
safetensors files or the archive by name (those alone, memory-mapped:
:mod:`fxstudio.core.graph.checkpoints`); else made up at their real
shapes (random, as a model built from a config is).  Timing one part of many alike says
what one costs: a whole-model figure made from it (:meth:`Part.estimate`) is an
extrapolation, not a measurement.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> from fxstudio.core.graph.request import OpenRequest
    >>> doc = open_document(OpenRequest("examples:resnet", weights=False))
    >>> part = part_of(doc, "layer1")
    >>> part.document.weights, [r.shape for r in part.document.rows()][-2:]
    (True, ['1x16x32x32', ''])
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.errors import UserError
from fxstudio.core.fxcompat import tree_map
from fxstudio.core.graph.attributes import attribute
from fxstudio.core.graph.checkpoints import find_checkpoint
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import ModuleGroup
from fxstudio.core.graph.propagation import propagate_shapes

__all__ = ["Part", "part_of"]


@dataclass
class Part:
    """A module of a document as a document of its own (``document``), and how many modules
    like it the model has (``alike``: siblings of the same type, itself included)."""

    path: str
    document: GraphDocument
    alike: int
    made_up: bool  # its weights were made up (the document had none)
    checkpoint: str | None = None  # the checkpoint folder its weights were read from

    def describe(self) -> str:
        """What was taken, in one line."""
        weights = "random weights at their real shapes" if self.made_up else "the model's weights"
        if self.checkpoint is not None:
            weights = f"weights from {self.checkpoint}"
            if not self.checkpoint.endswith(".pt2"):
                weights = f"weights from the checkpoint {self.checkpoint}"
        n = len(self.document)
        return f"the module {self.path} alone ({n} nodes, {weights}; 1 of {self.alike} alike)"

    def estimate(self, time_s: float) -> str:
        """A whole-model figure from one part's time, said as what it is."""
        if self.alike <= 1:
            return ""
        return (
            f"x{self.alike} modules alike ~ {seconds(time_s * self.alike)} for all of "
            "them: an extrapolation of one module, not a measurement of the model"
        )


def part_of(doc: GraphDocument, path: str, seed: int = 0) -> Part:
    """The module at ``path`` of ``doc`` (a group of its module tree, or one ``call_module``
    node) as a :class:`Part`; a :class:`~fxstudio.core.errors.UserError` names the modules
    there are when there is none at ``path``."""
    tree = doc.module_tree()
    group = next((g for g in tree.walk() if g.path == path), None)
    if group is not None:
        names = set(group.all_nodes())
    elif any(n.op == "call_module" and n.target == path for n in doc.graph.nodes):
        names = {n.name for n in doc.graph.nodes if n.op == "call_module" and n.target == path}
    else:
        raise UserError(_no_module(tree, path))
    inside = [n for n in doc.graph.nodes if n.name in names and n.op not in ("output",)]
    read = doc.checkpoint if not doc.weights else None
    gm, inputs = _cut(doc, inside, seed, read)
    part = GraphDocument(gm, doc.request, inputs, [], doc.source_file)
    propagate_shapes(gm, inputs, doc.source_file)
    made_up = not doc.weights and read is None
    return Part(path, part, _alike(doc, tree, path, group), made_up, read)


def _no_module(tree: ModuleGroup, path: str) -> str:
    paths = [g.path for g in tree.walk() if g.path]
    close = [p for p in paths if p.startswith(path) or path.startswith(p)][:5] or paths[:5]
    return (
        f"The model has no module '{path}'. Give the path of one of its modules (as the "
        f"canvas's groups and the table's module column name them), e.g. {', '.join(close)}."
    )


def _alike(doc: GraphDocument, tree: ModuleGroup, path: str, group: ModuleGroup | None) -> int:
    """How many siblings of ``path`` are alike -- the same type, and nodes of the same ops,
    targets and shapes in the same order (layers.0 to layers.79, not layer1 to layer4) --
    itself included."""
    parent = next((g for g in tree.walk() if path in g.children), None)
    if group is None or parent is None:
        return 1
    mine = _signature(doc, group)
    return sum(
        1
        for c in parent.children.values()
        if c.type_name == group.type_name and _signature(doc, c) == mine
    )


def _signature(doc: GraphDocument, group: ModuleGroup) -> tuple[tuple[str, str, str], ...]:
    def target(name: str) -> str:
        node = doc.node(name)
        text = node.target if isinstance(node.target, str) else str(node.target)
        return text.removeprefix(group.path + ".")

    return tuple((doc.node(n).op, target(n), doc.row(n).shape) for n in group.all_nodes())


Fill = Callable[[str, Any], Any]  # (a weight's name, its tensor) -> the tensor with values


def _cut(
    doc: GraphDocument, inside: Sequence[fx.Node], seed: int, checkpoint: str | None = None
) -> tuple[fx.GraphModule, tuple]:
    """A graph of ``inside``'s nodes: what flows in from outside becomes placeholders (the
    weights and constants it reads come along as attributes, from ``checkpoint`` when
    given), what is used after it the output."""
    member = set(inside)
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    inputs: list[Any] = []
    attrs: dict[str, Any] = {}
    gen = torch.Generator().manual_seed(seed)
    made_up = not doc.weights
    read = _from_checkpoint(doc.graph_module, inside, checkpoint) if checkpoint else {}

    def fill(name: str, v: Any) -> Any:
        real = read[name] if name in read and v.is_meta else _real(v, gen, made_up)
        if isinstance(v, nn.Parameter) and not isinstance(real, nn.Parameter):
            return nn.Parameter(real, requires_grad=v.requires_grad)  # a weight stays one
        return real

    def outer(node: fx.Node) -> fx.Node:
        if node not in env:
            if node.op == "get_attr":
                target = str(node.target)
                value = attribute(doc.graph_module, target)
                attrs[target] = tree_map(lambda v: fill(target, v), value)
                env[node] = graph.get_attr(target)
            else:
                env[node] = graph.placeholder(node.name)
                inputs.append(tree_map(lambda v: _example(v, gen), node.meta.get("val")))
            env[node].meta = dict(node.meta)
        return env[node]

    for node in inside:
        for arg in node.all_input_nodes:
            if arg not in member:
                outer(arg)
        if node.op in ("call_module", "get_attr"):
            target = str(node.target)
            attrs[target] = _module_copy(attribute(doc.graph_module, target), target, fill)
        env[node] = graph.node_copy(node, lambda n: env[n])
    used_after = [n for n in inside if any(u not in member for u in n.users)]
    graph.output(env[used_after[0]] if len(used_after) == 1 else tuple(env[n] for n in used_after))
    gm = fx.GraphModule(attrs, graph, f"{type(doc.graph_module).__name__}Part")
    return gm, tuple(inputs)


def _module_copy(value: Any, target: str, fill: Fill) -> Any:
    """A submodule or tensor the part calls (at ``target``), with real tensors."""
    if isinstance(value, nn.Module):
        module = copy.deepcopy(value)
        for path, sub in module.named_modules():
            owner = ".".join(p for p in (target, path) if p)
            for name, p in list(sub.named_parameters(recurse=False)):
                real = fill(f"{owner}.{name}", p)
                setattr(sub, name, nn.Parameter(real, p.requires_grad))
            for name, b in list(sub.named_buffers(recurse=False)):
                setattr(sub, name, fill(f"{owner}.{name}", b))
        return module
    return tree_map(lambda v: fill(target, v), value)


def _from_checkpoint(
    root: nn.Module, inside: Sequence[fx.Node], folder: str
) -> dict[str, torch.Tensor]:
    """The weights ``inside``'s nodes read, by their names in ``root``, from the checkpoint
    in ``folder`` -- those alone.  Non-persistent buffers (a rotary embedding's ``inv_freq``:
    computed by the model, never saved) are not asked for; a weight it lacks or holds at
    another shape is a :class:`~fxstudio.core.errors.LoadError` naming it."""
    checkpoint = find_checkpoint(folder)
    if checkpoint is None:
        where = f"checkpoint folder {folder} holds no safetensors files"
        if folder.endswith(".pt2"):
            where = f"program {folder} is not there"
        raise UserError(f"The {where} any more. Put it back, or open the model again.")
    wanted: dict[str, torch.Tensor] = {}
    read = dict.fromkeys(
        [*inside, *(a for n in inside for a in n.all_input_nodes if a.op == "get_attr")]
    )
    for node in read:
        target = str(node.target)
        if node.op == "call_module":
            module = root.get_submodule(target)
            saved = module.state_dict(prefix=f"{target}.", keep_vars=True)
        elif node.op == "get_attr":
            value = attribute(root, target)
            owner = target.rpartition(".")[0]
            held = root.get_submodule(owner)
            persistent = isinstance(value, nn.Parameter) or target.rpartition(".")[2] in (
                held.state_dict(keep_vars=True)
            )
            saved = {target: value} if persistent else {}
        else:
            continue
        wanted.update({k: v for k, v in saved.items() if isinstance(v, torch.Tensor) and v.is_meta})
    return checkpoint.read(wanted) if wanted else {}


def _real(v: Any, gen: torch.Generator, made_up: bool) -> Any:
    """A weight with values: itself when it has them; else random at its shape and dtype --
    N(0, 0.02) for a matrix, ones for a scale (a norm's weight), zeros for integers."""
    if not isinstance(v, torch.Tensor) or not v.is_meta:
        return v
    if not v.dtype.is_floating_point:
        return torch.zeros(v.shape, dtype=v.dtype)
    if v.dim() <= 1:
        return torch.ones(v.shape, dtype=v.dtype)
    return (torch.randn(v.shape, generator=gen) * 0.02).to(v.dtype)


def _example(v: Any, gen: torch.Generator) -> Any:
    """An input made with a recorded value's shape and dtype: random floats, zeros for
    integers (positions, token ids), True for masks."""
    if not isinstance(v, torch.Tensor):
        return v
    if v.dtype == torch.bool:
        return torch.ones(v.shape, dtype=torch.bool)
    if not v.dtype.is_floating_point:
        return torch.zeros(v.shape, dtype=v.dtype)
    return torch.randn(tuple(v.shape), generator=gen).to(v.dtype)


def seconds(s: float | None) -> str:
    """A time in words: ``1.234 ms``."""
    if s is None:
        return "–"
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.1f} µs"
