"""Pattern matching and replacement against torch.fx (SubgraphMatcher, replace_pattern) and
inductor's PatternMatcherPass, on the same synthetic chains in the same run."""

from __future__ import annotations

import copy
import operator
import statistics
from collections.abc import Callable
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.patterns.making import from_function
from fxstudio.core.patterns.matcher import find
from fxstudio.core.patterns.pattern import FX_RULES
from fxstudio.core.patterns.replace import rewrite
from fxstudio.core.patterns.replacements import function_replacement


def chain(nodes: int, two_outputs: bool = False) -> fx.GraphModule:
    """Blocks of matmul -> add(b) -> relu -> add(residual) (with a sigmoid of the matmul
    for the two-output pattern), built with fx.Graph directly."""
    g = fx.Graph()
    x, w, b = g.placeholder("x"), g.placeholder("w"), g.placeholder("b")
    per = 5 if two_outputs else 4
    for _ in range(nodes // per):
        m = g.call_function(torch.matmul, (x, w))
        r = g.call_function(torch.relu, (g.call_function(operator.add, (m, b)),))
        other = g.call_function(torch.sigmoid, (m,)) if two_outputs else x
        x = g.call_function(operator.add, (r, other))
    g.output(x)
    return fx.GraphModule(nn.Module(), g)


def pattern(x: Any, w: Any, b: Any) -> Any:
    return torch.relu(torch.matmul(x, w) + b)


def pattern2(x: Any, w: Any, b: Any) -> Any:
    m = torch.matmul(x, w)
    return torch.relu(m + b), torch.sigmoid(m)


def replacement(x: Any, w: Any, b: Any) -> Any:
    return torch.relu(torch.addmm(b, x, w))


def _inductor_pass() -> Any:
    try:
        from torch._inductor.pattern_matcher import (
            CallFunction,
            KeywordArg,
            Match,
            PatternMatcherPass,
            register_graph_pattern,
        )
    except Exception:  # pragma: no cover - inductor missing
        return None
    p = PatternMatcherPass()
    pat = CallFunction(
        torch.relu,
        CallFunction(
            operator.add,
            CallFunction(torch.matmul, KeywordArg("x"), KeywordArg("w")),
            KeywordArg("b"),
        ),
    )

    @register_graph_pattern(pat, pass_dict=p)  # type: ignore[misc]
    def _found(match: Match, x: Any, w: Any, b: Any) -> None:
        pass

    return p


def bench_patterns(emit: Callable[..., None], timed: Callable[..., list[float]]) -> None:
    from torch.fx.passes.utils.matcher_utils import SubgraphMatcher

    ours_pattern = from_function(pattern, rules=FX_RULES)
    fx_pattern = fx.symbolic_trace(pattern).graph
    inductor = _inductor_pass()
    slopes = []
    for nodes in (1000, 10000, 20000, 100000):
        gm = chain(nodes)
        runs = timed(lambda gm=gm: find(gm, ours_pattern), 5 if nodes <= 20000 else 3)
        record: dict[str, Any] = {
            "bench": "match",
            "nodes": nodes,
            "fxstudio_s": statistics.median(runs),
            "matches": len(find(gm, ours_pattern).matches),
        }
        slopes.append((nodes, record["fxstudio_s"]))
        if nodes <= 10000:
            fx_runs = timed(lambda gm=gm: SubgraphMatcher(fx_pattern).match(gm.graph), 1)
            record["torch_fx_s"] = statistics.median(fx_runs)
            record["speedup_vs_fx"] = record["torch_fx_s"] / record["fxstudio_s"]
        if inductor is not None and nodes <= 20000:
            copies = iter([fx.GraphModule(nn.Module(), copy.deepcopy(gm.graph)) for _ in range(3)])
            ind = timed(lambda copies=copies: inductor.apply(next(copies)), 3)
            record["inductor_s"] = statistics.median(ind)
        emit(**record)
    (n0, t0), (n1, t1) = slopes[0], slopes[-1]
    emit(bench="match_slope", us_per_node=(t1 - t0) / (n1 - n0) * 1e6, ratio_100k_to_1k=t1 / t0)
    gm2 = chain(4000, two_outputs=True)
    two = from_function(pattern2, rules=FX_RULES)
    runs = timed(lambda: find(gm2, two), 5)
    fx_two = fx.symbolic_trace(pattern2).graph
    fx_runs = timed(lambda: SubgraphMatcher(fx_two).match(gm2.graph), 1)
    emit(
        bench="match_two_outputs",
        nodes=4000,
        fxstudio_s=statistics.median(runs),
        torch_fx_s=statistics.median(fx_runs),
    )
    for nodes in (4000, 20000):
        docs = iter([GraphDocument(chain(nodes)) for _ in range(3)])
        p = from_function(pattern, rules=FX_RULES)
        r = function_replacement(replacement)
        record = {
            "bench": "replace_with_recompile",
            "nodes": nodes,
            "fxstudio_s": statistics.median(
                timed(lambda docs=docs, p=p, r=r: rewrite(next(docs), p, r), 3)
            ),
        }
        if nodes <= 4000:
            gms = iter([chain(nodes)])
            fx_runs = timed(lambda gms=gms: fx.replace_pattern(next(gms), pattern, replacement), 1)
            record["torch_fx_s"] = statistics.median(fx_runs)
        emit(**record)
