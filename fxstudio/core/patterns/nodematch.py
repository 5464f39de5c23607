"""Comparing one pattern node with one graph node: the op (by its spelling, or its family),
the submodule (by name, type or attributes), the recorded shape and dtype, and the ways to
pair their arguments (as written, normalised by signature, or commuted).  Each refusal comes
with its reason, for the explanations.

:class:`NodeComparison` is the part of the matcher that knows these rules; the matcher
(:mod:`~fxstudio.core.patterns.matcher`) walks the graph with it.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

import torch
import torch.fx as fx
from torch.fx.node import Node
from torch.fx.operator_schemas import get_signature_for_torch_op

from fxstudio.core.fxcompat import OpOverload, op_schema_arguments
from fxstudio.core.graph.attributes import attribute
from fxstudio.core.graph.shapes import node_dtype, node_shape
from fxstudio.core.graph.signatures import builtin_signature, signature
from fxstudio.core.patterns.attempt import ARG_LABELS, ORDER, MatchState, same_literal
from fxstudio.core.patterns.ops import (
    COMMUTATIVE,
    IN_PLACE_FLAGS,
    family,
    is_aten,
    schema_arguments,
    schema_defaults,
    spelled,
    strict_key,
    submodule,
)
from fxstudio.core.patterns.pattern import Rules
from fxstudio.core.patterns.reasons import Why

_UNKNOWN = object()


class NodeComparison:
    """What the matcher knows about single nodes (it sets these attributes)."""

    rules: dict[Node, Rules]
    pgm: fx.GraphModule
    gm: Any
    pfam: dict[Node, str | None]
    gfam: dict[Node, str | None]
    gschema: dict[Node, list[tuple[str, Any]] | None]  # graph node -> its ATen arguments

    def by_schema(self, pn: Node) -> bool:
        """``pn``'s arguments are compared as its ATen schema reads them (every argument, a
        default spelled out or left out alike), not as they are written."""
        return self.rules[pn].arguments == "normalize" and _schema_call(pn)

    def _schema_pairs(self, pn: Node, gn: Node) -> list[tuple[Node, Any, Any, str]] | None:
        """The arguments of two calls of one ATen op, paired by name (``None`` when the
        graph node calls another op or does not fit its schema)."""
        if gn.op != "call_function" or gn.target != pn.target:
            return None
        if gn in self.gschema:
            theirs = self.gschema[gn]
        else:
            theirs = self.gschema[gn] = schema_arguments(gn.target, gn.args, dict(gn.kwargs))
        ours = schema_arguments(pn.target, pn.args, dict(pn.kwargs))
        if ours is None or theirs is None:
            return None
        return [(pn, a, b, name) for (name, a), (_, b) in zip(ours, theirs, strict=True)]

    def _gf(self, gn: Node) -> str | None:
        fam = self.gfam.get(gn, _UNKNOWN)
        if fam is _UNKNOWN:
            fam = self.gfam[gn] = family(gn, self.gm)
        return fam  # type: ignore[return-value]

    # --- the fast path: no alternatives tried, no reasons kept ------------------------------

    def _key(self, pn: Node, gm: Any) -> Any:
        rule = self.rules[pn]
        if rule.spelling == "equivalent":
            fam = family(pn, gm)
            if fam is not None:
                return ("family", fam)
        return strict_key(pn, gm, rule.module != "name")

    def key_of(self, gn: Node, rule: Rules) -> Any:
        if rule.spelling == "equivalent":
            fam = family(gn, self.gm)
            if fam is not None:
                return ("family", fam)
        return strict_key(gn, self.gm, rule.module != "name")

    def differs(self, pn: Node, gn: Node) -> tuple[Why, str, str] | None:
        """``None`` when ``gn`` computes what ``pn`` does (arguments aside), else (the
        reason, its words, what would make it match)."""
        return self._same(pn, gn)

    def _same(self, pn: Node, gn: Node) -> tuple[Why, str, str] | None:
        """``None`` when ``gn`` computes what ``pn`` does (arguments aside), else the reason."""
        rule = self.rules[pn]
        if pn.op == "placeholder":
            return None
        if pn.op == gn.op and pn.target == gn.target and pn.op in ("call_function", "call_method"):
            return self._constraints(pn, gn, rule) if rule.same_shape or rule.same_dtype else None
        pf = self.pfam[pn]
        gf = self._gf(gn)
        if rule.spelling == "equivalent" and pf is not None and pf == gf:
            return self._constraints(pn, gn, rule)
        if pn.op != gn.op:
            hint = "turn on 'equivalent spellings'" if pf is not None and pf == gf else ""
            return (
                Why.OP,
                f"{spelled(gn)} is a {gn.op}, the pattern's {spelled(pn)} a {pn.op}",
                hint,
            )
        if pn.op == "call_module":
            return self._module(pn, gn, rule) or self._constraints(pn, gn, rule)
        if pn.op == "get_attr":
            pv, gv = attribute(self.pgm, str(pn.target)), attribute(self.gm, str(gn.target))
            if type(pv) is not type(gv):
                return (
                    Why.TARGET,
                    f"{gn.target} is a {type(gv).__name__}, not a {type(pv).__name__}",
                    "",
                )
            return None
        if pn.target != gn.target:
            if pn.op == "call_function" and is_aten(pn.target) != is_aten(gn.target):
                side = "an ATen op (torch.export)" if is_aten(gn.target) else "a torch function"
                return (
                    Why.DIALECT,
                    f"the graph calls {side}: {spelled(gn)} vs the pattern's {spelled(pn)}",
                    "trace the pattern in the graph's dialect",
                )
            hint = "turn on 'equivalent spellings'" if pf is not None and pf == gf else ""
            return Why.TARGET, f"{spelled(gn)} is not {spelled(pn)}", hint
        return self._constraints(pn, gn, rule)

    def _module(self, pn: Node, gn: Node, rule: Rules) -> tuple[Why, str, str] | None:
        pm, gm_ = submodule(self.pgm, pn.target), submodule(self.gm, gn.target)
        if rule.module == "name":
            if pn.target == gn.target:
                return None
            if type(pm) is type(gm_):
                return (
                    Why.MODULE_NAME,
                    f"self.{gn.target} is not self.{pn.target}",
                    f"match the {type(pm).__name__} by type",
                )
            return Why.TARGET, f"self.{gn.target} is not self.{pn.target}", ""
        if type(pm) is not type(gm_):
            return (
                Why.TARGET,
                f"self.{gn.target} is a {type(gm_).__name__}, not a {type(pm).__name__}",
                "",
            )
        if rule.module == "attrs":
            for attr in rule.attrs:
                a, b = getattr(pm, attr, None), getattr(gm_, attr, None)
                if a != b:
                    return (
                        Why.MODULE_ATTRS,
                        f"{gn.target}.{attr} is {b!r}, the pattern's {a!r}",
                        f"stop comparing {attr}",
                    )
        return None

    def _constraints(self, pn: Node, gn: Node, rule: Rules) -> tuple[Why, str, str] | None:
        if rule.same_shape and node_shape(pn) != node_shape(gn):
            return Why.SHAPE, f"shape {node_shape(gn)}, the pattern's {node_shape(pn)}", ""
        if rule.same_dtype and node_dtype(pn) != node_dtype(gn):
            return Why.DTYPE, f"dtype {node_dtype(gn)}, the pattern's {node_dtype(pn)}", ""
        return None

    def _plans(self, pn: Node, gn: Node, st: MatchState) -> list[list[tuple[Node, Any, Any, str]]]:
        """The ways to pair ``pn``'s arguments with ``gn``'s: one, or two for a commuted op."""
        rule = self.rules[pn]
        if self.by_schema(pn):
            paired = self._schema_pairs(pn, gn)
            if paired is not None:
                return [paired]
        if not pn.kwargs and not gn.kwargs and len(pn.args) == len(gn.args):
            n = len(pn.args)
            plans = [list(zip([pn] * n, pn.args, gn.args, ARG_LABELS[:n], strict=True))]
            if n == 2 and self.pfam[pn] in COMMUTATIVE:
                swapped = [
                    (pn, pn.args[0], gn.args[1], "args[1]"),
                    (pn, pn.args[1], gn.args[0], "args[0]"),
                ]
                if rule.commutative:
                    plans.append(swapped)
                elif st.explain:  # would the other order match?  Then that is the reason
                    plans.append([*swapped, (pn, ORDER, None, "args")])  # type: ignore[list-item]
            return plans
        pargs, pkw = list(pn.args), dict(pn.kwargs)
        gargs, gkw = list(gn.args), dict(gn.kwargs)
        if st.tolerated is not None and st.tolerated.pattern_node == pn.name:
            # explaining past this node's other op: pair its arguments as loosely as can be
            rule = replace(rule, spelling="equivalent", arguments="normalize")
        if rule.spelling == "equivalent" and (pn.op != gn.op or pn.target != gn.target):
            for kw in (pkw, gkw):
                for flag in IN_PLACE_FLAGS:
                    kw.pop(flag, None)
        if rule.arguments == "exact":
            if (len(pargs) != len(gargs) or list(pkw) != list(gkw)) and _schema_call(pn):
                p_all, g_all = (
                    _schema_args(pn.target, pargs, pkw),
                    _schema_args(pn.target, gargs, gkw),
                )
                return [_pairs(pn, p_all, g_all, [f"args[{i}]" for i in range(len(p_all))])]
            if len(pargs) != len(gargs) or list(pkw) != list(gkw):
                self._fail_arguments(pn, gn, pargs, pkw, gargs, gkw, st)
                return []
            labels = [f"args[{i}]" for i in range(len(pargs))] + list(pkw)
            return [_pairs(pn, pargs + list(pkw.values()), gargs + list(gkw.values()), labels)]
        if len(pargs) != len(gargs) or set(pkw) != set(gkw):
            norm = _normalized(pn, self.pgm, pargs, pkw), _normalized(gn, self.gm, gargs, gkw)
            if norm[0] is not None and norm[1] is not None and set(norm[0]) == set(norm[1]):
                keys = list(norm[0])
                return [_pairs(pn, [norm[0][k] for k in keys], [norm[1][k] for k in keys], keys)]
            self._fail_arguments(pn, gn, pargs, pkw, gargs, gkw, st)
            return []
        keys = list(pkw)
        labels = [f"args[{i}]" for i in range(len(pargs))] + keys
        plan = _pairs(pn, pargs + [pkw[k] for k in keys], gargs + [gkw[k] for k in keys], labels)
        plans = [plan]
        if len(pargs) == 2 and not pkw and self.pfam[pn] in COMMUTATIVE:
            swapped = _pairs(pn, pargs, [gargs[1], gargs[0]], ["args[1]", "args[0]"])
            if rule.commutative:
                plans.append(swapped)
            elif st.explain:  # would the other order match?  Then that is the reason
                plans.append([*swapped, (pn, ORDER, None, "args")])  # type: ignore[list-item]
        return plans

    def _fail_arguments(
        self,
        pn: Node,
        gn: Node,
        pargs: list[Any],
        pkw: dict[str, Any],
        gargs: list[Any],
        gkw: dict[str, Any],
        st: MatchState,
    ) -> None:
        if not st.explain:
            return
        pn_norm = _normalized(pn, self.pgm, pargs, pkw)
        gn_norm = _normalized(gn, self.gm, gargs, gkw)
        if pn_norm is not None and gn_norm is not None and set(pn_norm) == set(gn_norm):
            moved = sorted(set(pkw) ^ set(gkw)) or ["?"]
            st.fail(
                Why.KEYWORD,
                pn,
                gn,
                moved[0],
                f"{spelled(gn)} passes {', '.join(moved)} "
                f"{'by keyword' if set(gkw) - set(pkw) else 'by position'}, the pattern "
                f"{'by position' if set(gkw) - set(pkw) else 'by keyword'}",
                "treat keyword and positional arguments as one",
            )
            return
        st.fail(
            Why.ARGUMENTS,
            pn,
            gn,
            "",
            f"{spelled(gn)} has {len(gargs)} positional and {len(gkw)} keyword arguments, "
            f"the pattern {len(pargs)} and {len(pkw)}",
        )

    # --- the checks of a whole match -------------------------------------------------------


def _pairs(
    owner: Node, pa: list[Any], ga: list[Any], labels: list[str]
) -> list[tuple[Node, Any, Any, str]]:
    return [(owner, a, b, lab) for a, b, lab in zip(pa, ga, labels, strict=True)]


def _schema_call(pn: Node) -> bool:
    return pn.op == "call_function" and isinstance(pn.target, OpOverload)


def _schema_args(target: Any, args: list[Any], kwargs: dict[str, Any]) -> list[Any]:
    """torch.fx's own filling of an ATen call's arguments from its schema."""
    out = []
    for i, a in enumerate(op_schema_arguments(target)):
        if a.name in kwargs:
            out.append(kwargs[a.name])
        elif not a.kwarg_only and i < len(args):
            out.append(args[i])
        else:
            out.append(a.default_value)
    return out


def _by_schema(op: Any, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """An ATen call's arguments by name, those at their default left out; ``None`` if the
    call does not fit the schema.

    >>> mp = torch.ops.aten.max_pool2d.default
    >>> _by_schema(mp, ["x", [2, 2]], {"stride": [2, 2], "padding": (0, 0), "dilation": 1})
    {'self': 'x', 'kernel_size': [2, 2], 'stride': [2, 2]}
    """
    full = schema_arguments(op, args, kwargs)
    if full is None:
        return None
    defaults = schema_defaults(op)
    return {
        name: value
        for name, value in full
        if not (name in defaults and same_literal(value, defaults[name]))
    }


def _signatures(fn: Any) -> list[inspect.Signature]:
    """torch's schemas of a builtin as signatures, once per builtin ([] for other functions)."""
    try:
        if fn in _SIGNATURES:
            return _SIGNATURES[fn]
    except TypeError:  # unhashable
        return []
    try:
        found = get_signature_for_torch_op(fn) or []
    except Exception:  # noqa: BLE001 - not a torch op: no overloads to look at
        found = []
    _SIGNATURES[fn] = found
    return found


_SIGNATURES: dict[Any, list[inspect.Signature]] = {}


def _overload(fn: Any, args: list[Any], kwargs: dict[str, Any]) -> inspect.Signature | None:
    """The one overload of a torch builtin (``torch.sum``: by dim or not, with ``out`` or
    not) that the call fits, from torch's own schemas; ``None`` if none or several do."""
    fits = []
    for sig in _signatures(fn):
        try:
            sig.bind(*args, **kwargs)
        except TypeError:
            continue
        fits.append(sig)
    return fits[0] if len(fits) == 1 else None


def _normalized(
    node: Node, gm: Any, args: list[Any], kwargs: dict[str, Any]
) -> dict[str, Any] | None:
    """Every argument by name, defaults filled in -- ``None`` when no signature is known."""

    fn: Any
    if node.op == "call_function":
        fn = node.target
    elif node.op == "call_method":
        fn = getattr(torch, str(node.target), None)
    elif node.op == "call_module":
        mod = submodule(gm, node.target)
        fn = type(mod).forward if mod is not None else None
        args = [mod, *args]
    else:
        return None
    if fn is None:
        return None
    if isinstance(fn, OpOverload):  # an ATen op: by its schema (its signature is *args)
        return _by_schema(fn, args, kwargs)
    sig = _overload(fn, args, kwargs) or signature(fn) or builtin_signature(fn)
    if sig is None:
        return None
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    out = dict(bound.arguments)
    for name, param in sig.parameters.items():  # a default given or left out: the same call
        if name in out and param.default is not inspect.Parameter.empty:
            if same_literal(out[name], param.default):
                del out[name]
    if node.op == "call_module":
        out.pop(next(iter(sig.parameters)), None)  # self
    for flag in IN_PLACE_FLAGS:
        out.pop(flag, None)
    return out
