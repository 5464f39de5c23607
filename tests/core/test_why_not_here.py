""" "Why not here?" is told from the node the user asked about: which pattern node it would
be, how far the pattern follows from it, and what differs where it stops (#36 item 8)."""

from __future__ import annotations

import torch
import torch.fx as fx

from fxstudio.core.patterns.explain import explain
from fxstudio.core.patterns.making import from_function, from_nodes
from fxstudio.core.patterns.pattern import DEFAULT_RULES, FX_RULES
from fxstudio.core.patterns.reasons import Failure, Why
from fxstudio.core.sessions.documents import open_document


def here(doc, nodes, at):
    pattern = from_nodes(doc, nodes, "pattern", DEFAULT_RULES)
    why = explain(doc.graph_module, pattern, at=at)
    assert isinstance(why.at, Failure)
    return why


def test_a_conv_is_told_as_the_pattern_conv_and_where_the_pattern_stops() -> None:
    doc = open_document("examples:resnet")
    # conv -> bn -> relu; layer1_0_conv2's bn feeds the residual add, not a ReLU
    why = here(doc, ["layer1_1_conv1", "layer1_1_bn1", "layer1_1_relu"], "layer1_0_conv2")
    text = why.describe().splitlines()[0]
    assert text.startswith(
        "Here: layer1_0_conv2 matches the pattern's Conv2d (layer1_1_conv1), then "
        "layer1_0_bn2 its BatchNorm2d (layer1_1_bn1); but layer1_0_bn2's user add is not "
        "the pattern's ReLU (layer1_1_relu)"
    ), text
    assert "is a Conv2d, not a ReLU" not in text  # (the matcher's backwards walk)
    at = why.at
    assert at.culprit == "add" and at.pattern_node == "layer1_1_relu"
    assert at.partial == {"layer1_1_conv1": "layer1_0_conv2", "layer1_1_bn1": "layer1_0_bn2"}
    assert at.to_json()["message"] == text.removeprefix("Here: ")


def test_a_node_like_no_node_of_the_pattern_says_what_the_pattern_has() -> None:
    doc = open_document("examples:resnet")
    why = here(doc, ["add_1", "layer1_1_relu_1"], "layer1_0_conv2")
    assert why.describe().splitlines()[0] == (
        "Here: layer1_0_conv2 is a Conv2d, and no node of the pattern is one "
        "(it has add (add_1), ReLU (layer1_1_relu_1))."
    )
    why = here(doc, ["add_1", "layer1_1_relu_1"], "x")
    assert "x is an input of the graph: it can only be one of the pattern's inputs" in (
        why.describe()
    )


def test_what_differs_past_the_node_asked_about_names_the_argument() -> None:
    def graph(x):
        return torch.relu(x + 1.0) + torch.relu(x + 2.0)

    def pattern(x):
        return torch.relu(x + 1.0)

    gm = fx.symbolic_trace(graph)
    why = explain(gm, from_function(pattern), at="add_1")
    assert why.at.why is Why.LITERAL and why.at.argument == "args[1]"
    assert why.describe().splitlines()[0] == (
        "Here: add_1 matches the pattern's add (add), then relu_1 its relu (relu); but add_1 "
        "differs in args[1]: 2.0 where the pattern has 1.0. Match this literal as any value "
        "(or bind it for the replacement)."
    )
    why = explain(gm, from_function(pattern), at="add_2")  # the sum of both: only returned
    assert "add_2 is only returned: no node uses it as the pattern's relu (relu) would" in (
        why.describe()
    )


def test_a_near_spelling_is_told_with_the_option_that_makes_it_match() -> None:
    def graph(x, y):
        return torch.neg(x) + torch.relu(y)

    def pattern(x, y):
        return torch.neg(x) + torch.nn.functional.relu(y)

    gm = fx.symbolic_trace(graph)
    why = explain(gm, from_function(pattern, rules=FX_RULES), at="relu")
    assert why.describe().splitlines()[0] == (
        "Here: relu would be the pattern's relu (relu), but target differs: torch.relu is "
        "not F.relu. Turn on 'equivalent spellings'."
    )
