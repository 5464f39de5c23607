"""The built-in rewrites, each one edit (one undo step) however many places it changes.

``fold-conv-bn`` and ``fold-linear-bn`` fold an eval-mode BatchNorm into the layer before it,
in symbolically traced graphs (modules matched by type) and in ``torch.export`` ones (ATen
calls): :mod:`fxstudio.core.patterns.folds`.  Each built-in lists the dialects it reads.

Example:
    >>> sorted(BUILTINS)[:3]
    ['dce', 'drop-dropout', 'fold-conv-bn']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.edits.naming import resolve_function
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.shapes import node_dtype, node_shape
from fxstudio.core.patterns.folds import CONVS, LINEARS, either, fold_jobs, fuse_conv, fuse_linear
from fxstudio.core.patterns.found import Found, Match, Skipped
from fxstudio.core.patterns.fuse_attention import attention_jobs, flex_attention_jobs
from fxstudio.core.patterns.making import from_function, one_node_pattern
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.ops import (
    dialect_of,
    family,
    is_dropout,
    passes_through,
    spelled,
    submodule,
)
from fxstudio.core.patterns.pattern import PatternError
from fxstudio.core.patterns.reasons import refusal
from fxstudio.core.patterns.replace import Rewritten, rewrite_jobs
from fxstudio.core.patterns.replacements import (
    Job,
    MatchContext,
    Replacement,
    ReplacementGraph,
    function_replacement,
)


@dataclass(frozen=True)
class Builtin:
    name: str
    summary: str
    exact: bool  # computes the very same values (else: a fold, within a relative tolerance)
    jobs: Callable[[GraphDocument, str], list[Job]]  # (document, argument) -> the work
    dialects: tuple[str, ...] = ("fx",)  # the captures whose graphs it knows how to read
    changes_values: bool = False  # meant to compute something else (the check informs)
    title: str = ""  # as a menu names it ("Fold conv + BatchNorm")
    argument: str = ""  # an example of the argument it takes (NAME:ARGUMENT), if it takes one
    done: str = "replaced"  # what it does to a place, as "none ..." says ("fused", "folded")


def builtin_for(doc: GraphDocument, spec: str) -> Builtin:
    """The built-in ``spec`` names, if it can read this document's graph (else why not)."""
    name = spec.partition(":")[0]
    builtin = BUILTINS.get(name)
    if builtin is None:
        raise PatternError(f"There is no built-in rewrite '{name}'. They are:\n{listing()}")
    if dialect_of(doc.graph) not in builtin.dialects:
        raise PatternError(
            f"{name} rewrites symbolically traced graphs (torch functions and submodules); "
            "this model was captured with torch.export (ATen ops). Open it with --frontend fx "
            "(or the fx frontend in the Open dialog) and rewrite again."
        )
    return builtin


def run_builtin(doc: GraphDocument, spec: str) -> Rewritten:
    """Run ``NAME`` or ``NAME:ARGUMENT`` (``swap-activation:relu:gelu``) as one edit."""
    builtin = builtin_for(doc, spec)
    arg = spec.partition(":")[2]
    jobs = builtin.jobs(doc, arg)
    label = builtin.name if not arg else f"{builtin.name} {arg}"
    return rewrite_jobs(doc, jobs, label, {"edit": "rewrite", "builtin": spec})


def listing() -> str:
    return "\n".join(f"  {b.name:<18} {b.summary}" for b in BUILTINS.values())


# --- node-by-node rewrites (bypass or retarget single nodes) ---------------------------------


Select = Callable[[fx.Node, GraphDocument, str, set[fx.Node]], Any]


@dataclass(frozen=True)
class Refuse:
    """What a selection returns for a candidate it leaves alone: the cause in a few words
    (the same for every place left for it), then this place's particulars."""

    cause: str
    text: str


def _single(
    select: Select,
    name: str,
    absent: Callable[[GraphDocument, str], str],
    reverse: bool = False,
) -> Callable[[GraphDocument, str], list[Job]]:
    """A rewrite of single nodes chosen by ``select(node, doc, argument)``: it returns
    ``"bypass"`` (users take the node's first input), a function to call on that input
    instead, a :class:`Refuse` (a candidate left alone, and why) or ``None`` (no candidate);
    ``absent(doc, argument)`` says what it looked for, when there is no candidate."""

    def jobs(doc: GraphDocument, arg: str) -> list[Job]:
        return [_SingleJob(doc, select, name, arg, reverse, absent)]

    return jobs


class _SingleJob(Job):
    """Each chosen node is a one-node pattern instance (so it flows through the same
    replacement engine, meta and provenance included)."""

    def __init__(
        self,
        doc: GraphDocument,
        select: Select,
        name: str,
        arg: str,
        reverse: bool,
        absent: Callable[[GraphDocument, str], str],
    ) -> None:
        chosen: list[tuple[fx.Node, Any]] = []
        refused: list[Skipped] = []
        memo: set[fx.Node] = set()  # what the selection has chosen so far
        for n in reversed(doc.graph.nodes) if reverse else doc.graph.nodes:
            what = select(n, doc, arg, memo)
            if isinstance(what, Refuse):
                refused.append(Skipped({"node": n.name}, refusal(n.name, what.cause, what.text)))
            elif what is not None:
                chosen.append((n, what))
        if reverse:
            refused.reverse()
        matches = []
        for i, (n, _) in enumerate(chosen):
            first = n.args[0] if n.args else None
            inputs: tuple[Any, ...] = (first.name,) if isinstance(first, fx.Node) else (first,)
            matches.append(
                Match(i, {"node": n.name}, inputs, (isinstance(first, fx.Node),), (n.name,))
            )
        self._what = {m.anchor: w for m, (_, w) in zip(matches, chosen, strict=True)}
        self._graphs: dict[Any, fx.Graph] = {}
        found = Found(matches, refused, absent="" if matches or refused else absent(doc, arg))
        super().__init__(one_node_pattern(), Replacement(name, self._build), found, None)

    def _build(self, ctx: MatchContext) -> ReplacementGraph:
        what = self._what[ctx.match.anchor]
        graph = self._graphs.get(what)
        if graph is None:  # one graph per kind of replacement, not one per node
            graph = self._graphs[what] = fx.Graph()
            x = graph.placeholder("x")
            graph.output(x if what == "bypass" else graph.call_function(what, (x,)))
        return ReplacementGraph(graph)


def _dropout(node: fx.Node, doc: GraphDocument, arg: str, memo: set[fx.Node]) -> Any:
    gm = doc.graph_module
    if not is_dropout(node, gm):
        return None
    if passes_through(node, gm):
        return "bypass"
    if node.op == "call_module":
        return Refuse(
            "dropout in training mode",
            f"self.{node.target} is in training mode: it drops values (model.eval(), or open "
            "the model without --train, to remove it)",
        )
    return Refuse(
        "a dropout call with training=True (F.dropout's default)",
        f"{node.name} calls {spelled(node)} with training=True, so it drops in eval mode too "
        "(pass training=self.training)",
    )


def _is_noop(node: fx.Node, doc: GraphDocument, arg: str, memo: set[fx.Node]) -> Any:
    """``x * 1``, ``x + 0``, ``x - 0``, ``x / 1``, ``nn.Identity``, ``.contiguous()`` /
    ``.to()`` / ``.float()`` that change nothing -- judged on the recorded shapes and
    dtypes where they matter."""
    if not node.args or not isinstance(node.args[0], fx.Node):
        return None
    src = node.args[0]
    same = (
        node_shape(node) is not None
        and node_shape(node) == node_shape(src)
        and node_dtype(node) == node_dtype(src)
    )
    if node.op == "call_module":
        return (
            "bypass" if isinstance(submodule(doc.graph_module, node.target), nn.Identity) else None
        )
    changes = _changes(node, src)
    fam = (family(node, doc.graph_module) or "").removeprefix("aten.")  # (export graphs too)
    if fam in ("mul", "div", "add", "sub") and len(node.args) == 2 and not node.kwargs:
        other = node.args[1]
        unit = 1 if fam in ("mul", "div") else 0
        if type(other) in (int, float) and other == unit:
            return "bypass" if same else changes
        return None
    contiguous_call = node.op == "call_method" and node.target == "contiguous"
    if (contiguous_call and len(node.args) == 1) or (
        node.op == "call_function" and fam in ("contiguous", "alias")
    ):
        val = src.meta.get("val")
        if fam != "alias" and not isinstance(val, torch.Tensor):
            return Refuse("no recorded layout", f"{src.name}'s layout is not recorded")
        if fam == "alias" or (isinstance(val, torch.Tensor) and val.is_contiguous()):
            return "bypass" if same else changes
        return Refuse(
            "copies a tensor that is not contiguous",
            f"{src.name} is not contiguous: {node.name} lays it out anew",
        )
    aten_to = node.op == "call_function" and fam in ("to", "_to_copy")
    if aten_to or (
        node.op == "call_method" and node.target in ("to", "float", "type_as", "double", "half")
    ):
        val, out = src.meta.get("val"), node.meta.get("val")
        if not (isinstance(val, torch.Tensor) and isinstance(out, torch.Tensor)):
            return Refuse("no recorded dtype", f"the dtypes of {src.name} and {node.name}")
        if node.kwargs.get("copy", False):
            return Refuse("copies (copy=True)", f"{node.name} is asked to copy")
        if same and val.device == out.device:
            return "bypass"
        return changes or Refuse(
            "moves to another device", f"{node.name} moves {val.device} to {out.device}"
        )
    return None


def _changes(node: fx.Node, src: fx.Node) -> Refuse:
    """How ``node`` is not ``src`` passed on: its shape or dtype (or none recorded)."""
    before = (node_shape(src), node_dtype(src))
    after = (node_shape(node), node_dtype(node))
    if before[0] is None or after[0] is None:
        return Refuse("no recorded shape", f"the shapes of {src.name} and {node.name}")
    if before[1] != after[1]:
        return Refuse(
            "changes the dtype", f"{node.name} makes {before[1]} of {src.name} {after[1]}"
        )
    if before[0] != after[0]:
        return Refuse(
            "changes the shape (broadcasts)",
            f"{node.name} makes {src.name}'s {list(before[0])} {list(after[0])}",
        )
    return Refuse("changes the device", f"{node.name} moves {src.name}")


_ACTIVATIONS = {
    "relu",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "mish",
    "hardswish",
    "relu6",
    "elu",
    "leaky_relu",
    "softplus",
}


def _swap(node: fx.Node, doc: GraphDocument, arg: str, memo: set[fx.Node]) -> Any:
    old, _, new = arg.partition(":")
    if not old or not new:
        raise PatternError(
            "Say what to swap: swap-activation:FROM:TO, e.g. swap-activation:relu:gelu"
        )
    if new not in _ACTIVATIONS:
        raise PatternError(
            f"'{new}' is not an activation fxstudio knows: {', '.join(sorted(_ACTIVATIONS))}."
        )
    fam = family(node, doc.graph_module)
    if fam != old:
        return None
    return resolve_function(f"torch.nn.functional.{new}")  # on the input alone


def _no_activation(doc: GraphDocument, arg: str) -> str:
    old = arg.partition(":")[0]
    gm = doc.graph_module
    present: dict[str, int] = {}
    for n in doc.graph.nodes:
        fam = (family(n, gm) or "").removeprefix("aten.")
        if fam in _ACTIVATIONS:
            present[fam] = present.get(fam, 0) + 1
    has = ", ".join(f"{k} ×{v}" for k, v in present.items()) or "none fxstudio knows"
    return f"no {old} in the graph (its activations: {has})"


def _dead(node: fx.Node, doc: GraphDocument, arg: str, memo: set[fx.Node]) -> Any:
    """Nodes whose value nothing uses, with the nodes only they use (asked last to first)."""
    if node.op in ("placeholder", "output") or not all(u in memo for u in node.users):
        return None
    if node.is_impure():
        return Refuse(
            "does more than compute a value (an assert, a write)",
            f"nothing uses {node.name} ({spelled(node)}), but running it does something",
        )
    memo.add(node)
    return "bypass"


def _no_noops(doc: GraphDocument, arg: str) -> str:
    return "no x*1, x+0, x-0, x/1, nn.Identity, .contiguous() or .to() in the graph to look at"


def _negrelu(x: Any, y: Any) -> Any:
    return torch.neg(x) + torch.relu(y)


def _negrelu_replacement(x: Any, y: Any) -> Any:
    return torch.relu(x)


def _negrelu_jobs(doc: GraphDocument, arg: str) -> list[Job]:
    pattern = from_function(_negrelu, "neg(x) + relu(y)")
    found = Matcher(pattern).find(doc.graph_module)
    if not found.matches and not found.skipped:
        found.absent = "no neg(x) + relu(y) in the graph"
    return [Job(pattern, function_replacement(_negrelu_replacement, "relu(x)"), found)]


BUILTINS: dict[str, Builtin] = {
    b.name: b
    for b in [
        Builtin(
            "fold-conv-bn",
            "fold eval-mode BatchNorm into the Conv1d/2d/3d before it",
            False,
            either(
                fold_jobs(
                    [
                        (nn.Conv1d, nn.BatchNorm1d),
                        (nn.Conv2d, nn.BatchNorm2d),
                        (nn.Conv3d, nn.BatchNorm3d),
                    ],
                    "conv+bn",
                    fuse_conv,
                ),
                CONVS,
                "conv+bn",
            ),
            ("fx", "export"),
            title="Fold conv + BatchNorm",
            done="folded",
        ),
        Builtin(
            "fold-linear-bn",
            "fold eval-mode BatchNorm1d into the Linear before it",
            False,
            either(
                fold_jobs([(nn.Linear, nn.BatchNorm1d)], "linear+bn", fuse_linear),
                LINEARS,
                "linear+bn",
            ),
            ("fx", "export"),
            title="Fold linear + BatchNorm",
            done="folded",
        ),
        Builtin(
            "drop-dropout",
            "remove Dropout (eval mode: it passes its input through)",
            True,
            _single(_dropout, "drop dropout", lambda d, a: "no dropout in the graph"),
            ("fx", "export"),
            title="Drop dropout",
            done="removed",
        ),
        Builtin(
            "remove-noops",
            "remove x*1, x+0, nn.Identity, .contiguous()/.to() that change nothing",
            True,
            _single(_is_noop, "remove no-op", _no_noops),
            ("fx", "export"),
            title="Remove no-ops",
            done="removed",
        ),
        Builtin(
            "dce",
            "remove nodes whose values nothing uses",
            True,
            _single(_dead, "dead code", lambda d, a: "every value is used", reverse=True),
            ("fx", "export"),
            title="Remove dead code",
            done="removed",
        ),
        Builtin(
            "swap-activation",
            "swap-activation:FROM:TO, e.g. relu:gelu (every spelling)",
            False,
            _single(_swap, "swap activation", _no_activation),
            changes_values=True,
            title="Swap an activation",
            argument="relu:gelu",
            done="swapped",
        ),
        Builtin(
            "fuse-attention",
            "matmul -> scale -> (mask) -> softmax -> (dropout) -> matmul into "
            "F.scaled_dot_product_attention",
            False,
            attention_jobs,
            ("fx", "export"),
            title="Fuse attention into scaled_dot_product_attention",
            done="fused",
        ),
        Builtin(
            "fuse-attention-flex",
            "as fuse-attention, and a tanh soft-capped attention (Gemma 2) into flex_attention "
            "with a score_mod (one kernel under torch.compile; eager, slower)",
            False,
            flex_attention_jobs,
            ("fx", "export"),
            title="Fuse attention, soft-capped into flex_attention",
            done="fused",
        ),
        Builtin(
            "negrelu",
            "the torch.fx demo: neg(x) + relu(y) -> relu(x)",
            False,
            _negrelu_jobs,
            title="The torch.fx demo: neg + relu",
            changes_values=True,  # (a demo of rewriting: relu(x) is not neg(x) + relu(y))
        ),
    ]
}
