"""Shapes after an edit (issue 38): only the nodes an edit touched run again, on fake tensors
made from the shapes their inputs have, and their users only while a shape changes -- with
the same shapes as propagating the whole graph, and the whole graph still run when a node no
longer fits (to say which)."""

import pytest

from fxstudio.core import edits
from fxstudio.core.edits import Ref
from fxstudio.core.flows import OpenRequest, open_document
from fxstudio.core.graph.document import ChangeKind
from fxstudio.core.graph.propagation import propagate_shapes


def shapes(doc):
    return [(r.name, r.shape, r.dtype) for r in doc.rows()]


def propagated_again(doc):
    """The document's shapes worked out from scratch (the whole graph run)."""
    for node in doc.graph.nodes:
        node.meta.pop("val", None)
    propagate_shapes(doc.graph_module, doc.example_inputs, graph=doc.graph)
    doc.emit(ChangeKind.SHAPES_CHANGED)
    return shapes(doc)


@pytest.mark.parametrize("weights", [True, False])
def test_an_edit_runs_only_what_it_touched(weights):
    doc = open_document(OpenRequest("examples:simple", "export", weights=weights))
    vals = {n.name: n.meta.get("val") for n in doc.graph.nodes}
    edits.set_target(doc, "relu", "torch.ops.aten.gelu.default")
    kept = [n.name for n in doc.graph.nodes if n.meta.get("val") is vals[n.name]]
    assert "relu" not in kept and "linear_1" in kept and "linear" in kept  # not run again
    assert doc.row("relu").shape == "2x32" and doc.shape_problem is None


def test_a_changed_shape_goes_on_to_the_users_and_matches_a_whole_run():
    doc = open_document(OpenRequest("examples:simple", "export", ("6x16",), weights=False))
    # a new node that doubles the batch: every shape after it changes
    edits.insert(doc, "call_function", "torch.ops.aten.cat.default", [[Ref("x"), Ref("x")]])
    cat = next(r.name for r in doc.rows() if r.target.endswith("cat.default"))
    edits.set_inputs(doc, "linear", [Ref(cat), Ref("fc1_weight"), Ref("fc1_bias")])
    assert doc.row("linear_1").shape == "12x4" and doc.shape_problem is None
    assert shapes(doc) == propagated_again(doc)


def test_a_node_that_no_longer_fits_is_named_as_before():
    doc = open_document(OpenRequest("examples:simple", "export"))
    edits.set_target(doc, "relu", "torch.ops.aten.t.default")  # 2x32 -> 32x2: linear_1 fails
    assert doc.shape_problem is not None and doc.shape_problem[0] == "linear_1"
    edits.set_target(doc, "relu", "torch.ops.aten.relu.default")  # fixed: all shapes back
    assert doc.shape_problem is None and doc.row("linear_1").shape == "2x4"


def test_a_call_s_key_is_the_same_whether_its_tensors_were_signed_before_or_not():
    """Downstream shapes sign each fake tensor once (edited.signature's ``signed``): a key
    taken from what was signed is the key read afresh, and a tensor of another layout, or
    one signed in another call, is never given a key it does not have."""
    import torch
    import torch.fx as fx

    from fxstudio.core.graph.edited import call_key, signature

    gm = fx.symbolic_trace(lambda x, y: torch.add(x, y, alpha=2))
    x, y = (n for n in gm.graph.nodes if n.op == "placeholder")
    add = next(n for n in gm.graph.nodes if n.op == "call_function")
    a, b = torch.empty(2, 3), torch.empty(3, 2).t()
    signed = {}
    first = call_key(add, {x: a, y: a}, signed)
    assert first == call_key(add, {x: a, y: a}) and set(signed) == {id(a)}
    assert signed[id(a)][0] is a  # (held: no other tensor takes its id meanwhile)
    other = call_key(add, {x: a, y: b}, signed)
    assert other == call_key(add, {x: a, y: b}) != first  # (the same shape, other strides)
    assert signature([a, {"k": b}, slice(1, None)], signed) == signature(
        [a, {"k": b}, slice(1, None)]
    )
