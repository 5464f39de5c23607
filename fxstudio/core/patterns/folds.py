"""The folds of ``fold-conv-bn`` and ``fold-linear-bn``, in both dialects.

In a symbolically traced graph an ``nn.Conv1d/2d/3d`` (or ``nn.Linear``) module followed by an
eval-mode ``nn.BatchNorm`` becomes one module with the folded weights
(``torch.nn.utils.fusion``); the modules are matched by type.  In a graph captured with
``torch.export`` (ATen ops) an eval-mode ``aten.batch_norm`` whose input is an
``aten.conv1d/2d/3d`` (or ``aten.linear``) is folded into that call: the folded weight and
bias are computed from the tensors the graph reads (``get_attr``) and set on the model under
new names, the layer is called on them and the BatchNorm is gone.

A BatchNorm in training mode or without running statistics, a layer called elsewhere too
(torch.fx's ``fuse`` gets that one silently wrong, pytorch#104593) or whose output has other
users, and weights that are not the model's own tensors are skipped, each with the reason.

Example:
    >>> from fxstudio.core.graph.request import OpenRequest
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document(OpenRequest("examples:resnet", "export"))
    >>> from fxstudio.core.patterns.builtins import BUILTINS
    >>> jobs = BUILTINS["fold-conv-bn"].jobs(doc, "")
    >>> len(jobs[0].found.matches)
    15
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.fx as fx
from torch import nn
from torch.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
)

from fxstudio.core.edits.naming import name_base
from fxstudio.core.fxcompat import BatchNormBase, op_name
from fxstudio.core.graph.attributes import attribute
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.patterns.found import Found, Match, Skipped
from fxstudio.core.patterns.making import from_function, one_node_pattern
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.ops import argument, dialect_of, spelled, submodule
from fxstudio.core.patterns.pattern import Rules
from fxstudio.core.patterns.reasons import refusal
from fxstudio.core.patterns.replacements import (
    Job,
    MatchContext,
    Replacement,
    ReplacementGraph,
    Skip,
)

aten = torch.ops.aten
CONVS = (aten.conv1d.default, aten.conv2d.default, aten.conv3d.default)
LINEARS = (aten.linear.default,)
BATCH_NORM = aten.batch_norm.default


# --- fx graphs: nn.Conv2d + nn.BatchNorm2d modules --------------------------------------

_BY_TYPE = Rules(module="type", spelling="exact", commutative=False)


class _Pair(nn.Module):
    def __init__(self, first: nn.Module, second: nn.Module) -> None:
        super().__init__()
        self.first = first
        self.second = second

    def forward(self, x: Any) -> Any:
        return self.second(self.first(x))


def _fold(fuse: Callable[..., nn.Module], what: str) -> Replacement:
    def build(ctx: MatchContext) -> ReplacementGraph:
        layer_node = ctx.node("first")
        layer, norm = ctx.module("first"), ctx.module("second")
        others = [
            n.name
            for n in ctx.doc.graph.find_nodes(op="call_module", target=layer_node.target)
            if n is not layer_node
        ]
        if others:
            raise Skip(
                f"self.{layer_node.target} is also called by {', '.join(others)}: folding "
                "its weights would change those calls too",
                "the layer is called elsewhere too",
            )
        if not isinstance(norm, BatchNormBase):
            raise Skip(f"{type(norm).__name__} is not a BatchNorm", "not a BatchNorm")
        if norm.running_mean is None or norm.running_var is None:
            raise Skip(
                f"self.{ctx.node('second').target} keeps no running statistics",
                "no running statistics",
            )
        if norm.training or layer.training:
            raise Skip(
                "the model is in training mode: BatchNorm uses batch statistics",
                "training mode (batch statistics)",
            )
        fused = fuse(layer, norm)
        graph = fx.Graph()
        x = graph.placeholder("x")
        graph.output(graph.call_module(str(layer_node.target), (x,)))
        return ReplacementGraph(graph, {str(layer_node.target): fused})

    return Replacement(f"fold {what}", build, exact=False)


def fold_jobs(
    pairs: list[tuple[type[nn.Module], type[nn.Module]]], what: str, fuse: Callable[..., nn.Module]
) -> Callable[[GraphDocument, str], list[Job]]:
    def jobs(doc: GraphDocument, arg: str) -> list[Job]:
        out = []
        gm = doc.graph_module
        present = {type(m) for m in gm.modules()}
        for layer_type, bn_type in pairs:
            if layer_type not in present or bn_type not in present:
                continue
            layer = _sample(layer_type)
            pattern = from_function(
                _Pair(layer, bn_type(1)),
                f"{layer_type.__name__}+{bn_type.__name__}",
                rules=_BY_TYPE,
            )
            out.append(Job(pattern, _fold(fuse, what), Matcher(pattern).find(gm)))
        seen = {n for j in out if j.found for m in j.found.matches for n in m.nodes.values()}
        seen |= {n for j in out if j.found for s in j.found.skipped for n in s.nodes.values()}
        layers = dict((bn, layer) for layer, bn in pairs)
        refused = []
        for n in doc.graph.nodes:
            norm = submodule(gm, n.target) if n.op == "call_module" else None
            before = layers.get(type(norm)) if norm is not None else None
            if before is None or n.name in seen:
                continue
            x = n.args[0] if n.args else None
            text = f"its input {_said(x)} is no {before.__name__}: nothing to fold it into"
            cause = f"no {before.__name__} before it"
            refused.append(Skipped({"second": n.name}, refusal(n.name, cause, text)))
        norms = "/".join(dict.fromkeys(bn.__name__ for _, bn in pairs))
        absent = "" if out or refused else f"no {norms} in the model"
        out.append(_refusals(refused, absent))
        return out

    return jobs


def _said(x: Any) -> str:
    return f"{x.name} ({spelled(x)})" if isinstance(x, fx.Node) else repr(x)


def _refusals(refused: list[Skipped], absent: str) -> Job:
    """The candidates a built-in leaves alone before any match, as a job with no match."""
    return Job(one_node_pattern(), Replacement("none", _never), Found([], refused, absent=absent))


def _never(ctx: MatchContext) -> ReplacementGraph:
    raise Skip("nothing to replace")


def either(
    fx_jobs: Callable[[GraphDocument, str], list[Job]], layers: tuple[Any, ...], what: str
) -> Callable[[GraphDocument, str], list[Job]]:
    """A fold of the graph's dialect: modules in an fx graph, ATen calls in an export one."""

    def jobs(doc: GraphDocument, arg: str) -> list[Job]:
        if dialect_of(doc.graph) == "export":
            return [_AtenFoldJob(doc, layers, what)]
        return fx_jobs(doc, arg)

    return jobs


def _sample(layer_type: type[nn.Module]) -> nn.Module:
    if layer_type is nn.Linear:
        return nn.Linear(1, 1)
    return layer_type(1, 1, 1)


def fuse_conv(conv: nn.Module, bn: nn.Module) -> nn.Module:
    return fuse_conv_bn_eval(conv, bn)  # type: ignore[arg-type,type-var]


def fuse_linear(linear: nn.Module, bn: nn.Module) -> nn.Module:
    return fuse_linear_bn_eval(linear, bn)  # type: ignore[arg-type,type-var]


# --- ATen graphs (torch.export): aten.conv2d + aten.batch_norm calls --------------------


class _AtenFoldJob(Job):
    """Each ``layer -> batch_norm`` pair is a match of the layer, the BatchNorm and the
    tensors only they read (so those nodes go with them)."""

    def __init__(self, doc: GraphDocument, layers: tuple[Any, ...], what: str) -> None:
        matches: list[Match] = []
        refused: list[Skipped] = []
        for bn in doc.graph.find_nodes(op="call_function", target=BATCH_NORM):
            layer = bn.args[0]
            if not (isinstance(layer, fx.Node) and layer.target in layers):
                wanted = " or ".join(f"aten.{op_name(t).removeprefix('aten.')}" for t in layers)
                text = f"its input is {_said(layer)}, no {wanted} call: nothing to fold it into"
                cause = f"no {what.split('+')[0]} before it"
                refused.append(Skipped({"node": bn.name}, refusal(bn.name, cause, text)))
                continue
            reads = [a for a in (*layer.args[1:3], *bn.args[1:5]) if isinstance(a, fx.Node)]
            only = [a.name for a in reads if a.op == "get_attr" and set(a.users) <= {layer, bn}]
            nodes = {"layer": layer.name, "node": bn.name}
            nodes.update({f"tensor{i}": name for i, name in enumerate(only)})
            x = layer.args[0]
            matches.append(
                Match(
                    len(matches),
                    nodes,
                    (x.name if isinstance(x, fx.Node) else x,),
                    (isinstance(x, fx.Node),),
                    (bn.name,),
                )
            )
        replacement = Replacement(f"fold {what}", self._build, exact=False)
        absent = "" if matches or refused else "no aten.batch_norm in the graph"
        found = Found(matches, refused, absent=absent)
        super().__init__(one_node_pattern(), replacement, found, None)

    def _build(self, ctx: MatchContext) -> ReplacementGraph:
        gm = ctx.doc.graph_module
        layer, bn = ctx.node("layer"), ctx.node("node")
        others = [u.name for u in layer.users if u is not bn]
        if others:
            raise Skip(
                f"{layer.name}'s output is also used by {', '.join(others)}",
                "the layer's output is used elsewhere too",
            )
        training = argument(bn, 5, "training", False)
        if training:
            raise Skip(
                f"{bn.name} is in training mode: it uses batch statistics",
                "training mode (batch statistics)",
            )
        weight, bias = _tensor(gm, argument(layer, 1)), _tensor(gm, argument(layer, 2))
        bn_w, bn_b, mean, var = (_tensor(gm, argument(bn, i)) for i in range(1, 5))
        if weight is None or mean is None or var is None:
            raise Skip(
                f"{layer.name} or {bn.name} reads no weights or running statistics",
                "no weights or running statistics",
            )
        eps = argument(bn, 7, "eps", 1e-5)
        if bn_w is None:  # a BatchNorm without affine weights scales by one, shifts by zero
            bn_w = torch.ones_like(mean)
        if bn_b is None:
            bn_b = torch.zeros_like(mean)
        if layer.target in CONVS:
            w, b = fuse_conv_bn_weights(weight, bias, mean, var, eps, bn_w, bn_b)
        else:
            w, b = fuse_linear_bn_weights(weight, bias, mean, var, eps, bn_w, bn_b)
        root = nn.Module()
        base = name_base(str(layer.args[1].target)) if isinstance(layer.args[1], fx.Node) else "w"
        root.register_parameter(f"{base}_folded", w)
        root.register_parameter(f"{base}_bias_folded", b)
        graph = fx.Graph()
        x = graph.placeholder("x")
        w_node = graph.get_attr(f"{base}_folded")
        b_node = graph.get_attr(f"{base}_bias_folded")
        rest = layer.args[3:]
        op: Any = layer.target
        call = graph.call_function(op, (x, w_node, b_node, *rest), dict(layer.kwargs))
        graph.output(call)
        return ReplacementGraph(graph, root=root)


def _tensor(gm: nn.Module, value: Any) -> torch.Tensor | None:
    if isinstance(value, fx.Node) and value.op == "get_attr":
        found = attribute(gm, str(value.target))
        return found if isinstance(found, torch.Tensor) else None
    return None
