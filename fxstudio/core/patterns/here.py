""" "Why not here?" told from the user's side: the graph node asked about first, which node
of the pattern it would be, how far the pattern follows from it, and what differs where it
stops -- not the matcher's own walk (which starts at the pattern's output and reads
backwards, so asking about a conv said "the conv is not a ReLU").

Example (the pattern conv -> bn -> relu; asked about a conv whose bn feeds an add):
    layer1_0_conv2 matches the pattern's Conv2d (conv), then layer1_0_bn2 its BatchNorm2d
    (bn); but layer1_0_bn2's user add is not the pattern's ReLU (relu): operator.add
    is a call_function, the pattern's self.relu a call_module.
"""

from __future__ import annotations

from dataclasses import replace

import torch.fx as fx
from torch.fx.node import Node

from fxstudio.core.patterns.found import Match
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.ops import submodule
from fxstudio.core.patterns.reasons import Failure, Why

# a pattern node the asked node is all but: told as "would be the pattern's X, but ..."
NEAR = {Why.MODULE_NAME, Why.MODULE_ATTRS, Why.SHAPE, Why.DTYPE, Why.DIALECT}
WHOLE = {Why.OUTSIDE_USER, Why.CYCLE, Why.OVERLAP}  # their text is a sentence of its own


def kind(node: Node, gm: fx.GraphModule | None) -> str:
    """What a node computes, in a word: its module's class, or its function's name."""
    if node.op == "call_module":
        module = submodule(gm, node.target)
        return type(module).__name__ if module is not None else str(node.target)
    if node.op == "call_function":
        return str(getattr(node.target, "__name__", node.target))
    if node.op == "call_method":
        return f".{node.target}()"
    if node.op == "get_attr":
        return f"attribute {node.target}"
    return "an input" if node.op == "placeholder" else node.op


def a(word: str) -> str:
    """``word`` with its article: "a ReLU", "an add"."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def _role(matcher: Matcher, pn: Node) -> str:
    return f"{kind(pn, matcher.pgm)} ({pn.name})"


def _forward(
    matcher: Matcher, role: Node, at: Node
) -> tuple[list[tuple[Node, Node]], tuple[Node, list[Node]] | None]:
    """From ``at`` as the pattern node ``role``, the pattern's users followed in the graph:
    the pairs matched, and where it stops (the pattern node wanted, the graph users it is
    not) -- ``None`` when it reaches the pattern's output."""
    pairs = [(role, at)]
    pn, gn = role, at
    while True:
        wanted = [u for u in pn.users if u.op != "output"]
        if not wanted:
            return pairs, None
        pu = wanted[0]
        users = [u for u in gn.users if u.op != "output"]
        good = [u for u in users if matcher.differs(pu, u) is None]
        if not good:
            return pairs, (pu, users)
        pn, gn = pu, good[0]
        pairs.append((pn, gn))


def _chain(matcher: Matcher, pairs: list[tuple[Node, Node]]) -> str:
    (p0, g0), rest = pairs[0], pairs[1:]
    words = f"{g0.name} matches the pattern's {_role(matcher, p0)}"
    for i, (p, g) in enumerate(rest):
        joint = ", then " if i == 0 else ", "
        words += f"{joint}{g.name} its {_role(matcher, p)}"
    return words


def _stopped(
    matcher: Matcher, pairs: list[tuple[Node, Node]], wanted: Node, users: list[Node]
) -> Failure:
    last = pairs[-1][1]
    whose = "its" if len(pairs) == 1 else f"{last.name}'s"
    role = _role(matcher, wanted)
    why, text, hint = Why.OP, "", ""
    culprit = last.name
    if not users:
        said = f"{last.name} is only returned: no node uses it as the pattern's {role} would"
    elif len(users) == 1:
        culprit = users[0].name
        why, text, hint = matcher.differs(wanted, users[0]) or (Why.OP, "", "")
        said = f"{whose} user {culprit} is not the pattern's {role}"
    else:
        named = ", ".join(u.name for u in users)
        said = f"none of {whose} users ({named}) is the pattern's {role}"
    said = f"{_chain(matcher, pairs)}; but {said}"
    said += f": {text}." if text else "."
    said += f" {hint[0].upper()}{hint[1:]}." if hint else ""
    partial = {p.name: g.name for p, g in pairs}
    return Failure(why, wanted.name, culprit, "", text, hint, len(pairs), partial, said=said)


def _failure_words(matcher: Matcher, f: Failure, chained: set[str]) -> str:
    hint = f" {f.hint[0].upper()}{f.hint[1:]}." if f.hint else ""
    if f.why in WHOLE or not f.pattern_node:
        return f"{f.text}.{hint}"
    if f.culprit in chained:  # its role is said: what differs
        where = f" in {f.argument}" if f.argument else ""
        return f"{f.culprit} differs{where}: {f.text}.{hint}"
    pn = matcher.pattern_node(f.pattern_node)
    role = _role(matcher, pn) if pn is not None else f.pattern_node
    if f.argument:
        return f"{f.culprit}, the pattern's {role}, differs in {f.argument}: {f.text}.{hint}"
    return f"{f.culprit} is not the pattern's {role}: {f.text}.{hint}"


def here(
    gm: fx.GraphModule, matcher: Matcher, at: Node, taken: dict[Node, int]
) -> Failure | Match | None:
    """Why ``at`` is not in a match, in words that start from it (``Failure.said``); a
    ``Match`` when it would match after all; ``None`` when the pattern has several outputs
    (told the matcher's way)."""
    tried = matcher.attempt(gm, at, taken)  # (reads the graph for the comparisons below)
    if isinstance(tried, Match) or len(matcher.anchors) != 1:
        return tried if isinstance(tried, Match) else None
    compute = matcher.compute
    if at.op == "placeholder":
        said = (
            f"{at.name} is an input of the graph: it can only be one of the pattern's inputs, "
            f"never one of its nodes ({', '.join(_role(matcher, p) for p in compute)})."
        )
        return Failure(Why.OP, "", at.name, "", "an input of the graph", said=said)
    reasons = {p: matcher.differs(p, at) for p in compute}
    roles = [p for p, r in reasons.items() if r is None]
    if not roles:
        near = [(p, r) for p, r in reasons.items() if r is not None and (r[2] or r[0] in NEAR)]
        if near:
            p, (why, text, hint) = near[0]
            tail = f" {hint[0].upper()}{hint[1:]}." if hint else ""
            said = (
                f"{at.name} would be the pattern's {_role(matcher, p)}, but {why.value}: "
                f"{text}.{tail}"
            )
            return Failure(why, p.name, at.name, "", text, hint, 0, {}, said=said)
        said = (
            f"{at.name} is {a(kind(at, matcher.gm))}, and no node of the pattern is one "
            f"(it has {', '.join(_role(matcher, p) for p in compute)})."
        )
        return Failure(Why.TARGET, "", at.name, "", said, said=said)
    walks = [_forward(matcher, p, at) for p in roles]
    pairs, stop = max(walks, key=lambda w: (w[1] is None, len(w[0])))
    if stop is not None:
        return _stopped(matcher, pairs, *stop)
    if pairs[-1][0] is not matcher.anchors[0]:  # another output of the pattern
        return None
    end = pairs[-1][1]
    result = tried if end is at else matcher.attempt(gm, end, taken)
    if isinstance(result, Match):
        return result
    chained = {g.name for _p, g in pairs}
    said = f"{_chain(matcher, pairs)}; but {_failure_words(matcher, result, chained)}"
    return replace(result, said=said)
