"""Edits that change a call are checked before they are kept: the arguments against the
signature or torch's schemas, the call run on fake tensors shaped like its inputs."""

import pytest

from fxstudio import cli
from fxstudio.core import edits
from fxstudio.core.edits import EditError, Ref
from fxstudio.core.sessions.documents import open_document
from fxstudio.core.sessions.replay import replay


def state(doc):
    return doc.code(), list(doc.history), doc.shape_problem, [r.shape for r in doc.rows()]


def test_retargeting_a_two_argument_call_to_relu_is_refused_naming_the_count():
    doc = open_document("examples:negrelu")
    before = state(doc)
    with pytest.raises(EditError) as refused:
        edits.set_target(doc, "add", "torch.relu")
    text = str(refused.value)
    assert "'add' cannot call torch.relu with 2 arguments: it takes 1 (input)" in text
    assert "Choose a function that takes 2" in text  # and what to do
    assert state(doc) == before  # no history step, the graph and its shapes as they were


def test_the_schemas_refuse_it_even_when_no_shapes_are_known():
    doc = open_document("examples:negrelu")
    doc.example_inputs = ()  # nothing to run the call on: torch's schemas alone tell
    with pytest.raises(EditError, match="with 2 arguments: it takes 1"):
        edits.set_target(doc, "add", "torch.relu")
    edits.insert(doc, "call_function", "torch.zeros", [2, 3])  # a size given as its items
    edits.insert(doc, "call_function", "torch.max", [Ref("neg"), 1])  # one of its overloads
    assert "zeros = torch.zeros(2, 3)" in doc.code() and "torch.max(neg, 1)" in doc.code()


def test_a_valid_retarget_is_kept():
    doc = open_document("examples:negrelu")
    edit = edits.set_target(doc, "add", "operator.mul")
    assert "add = neg * relu" in doc.code() and doc.history[-1] is edit.record
    assert doc.shape_problem is None and doc.row("add").shape == "4x8"
    edits.set_target(doc, "add", "torch.mul")
    assert "add = torch.mul(neg, relu)" in doc.code()


def test_a_call_whose_shapes_do_not_fit_is_refused_with_torchs_reason():
    doc = open_document("examples:negrelu")  # x, y, z: 4x8
    before = state(doc)
    with pytest.raises(EditError) as refused:
        edits.insert(doc, "call_function", "torch.matmul", [Ref("neg"), Ref("relu")])
    text = str(refused.value)
    assert "'matmul' cannot run torch.matmul on its inputs (neg: 4x8 float32, relu: 4x8" in text
    assert "mat1 and mat2 shapes cannot be multiplied (4x8 and 4x8)" in text
    assert "Give it inputs whose shapes fit" in text
    assert state(doc) == before
    with pytest.raises(EditError, match="invalid for input of size 32"):
        edits.insert(doc, "call_method", "view", [Ref("x"), 3, -1])
    edits.insert(doc, "call_method", "view", [Ref("x"), 2, -1])  # one that fits is kept
    assert doc.row("view").shape == "2x16"


def test_the_new_values_of_an_edit_feed_its_other_changed_calls():
    """A splice makes a node and rewires its user: the user runs on the new node's value."""
    doc = open_document("examples:negrelu")
    with pytest.raises(EditError, match="'add' cannot run"):
        edits.splice(doc, "neg", "add", "call_method", "t")  # add: 8x4 + 4x8
    edits.splice(doc, "neg", "add", "call_function", "torch.tanh")
    assert "add = tanh + relu" in doc.code()


def test_insert_after_a_node_takes_its_value_and_feeds_its_users():
    doc = open_document("examples:negrelu")
    edit = edits.splice(doc, "add", None, "call_method", "softmax", (), {"dim": -1})
    code = doc.code()
    assert "softmax = add.softmax(dim = -1)" in code and "mul = softmax * z" in code
    assert edit.label == "Insert softmax after add" and len(doc.history) == 1
    edit.undo()
    assert "mul = add * z" in doc.code() and not doc.history
    edit.redo()
    again = open_document("examples:negrelu")
    replay(again, doc.history)  # a session makes it again
    assert again.code() == doc.code()
    last = edits.splice(doc, "mul", None, "call_function", "torch.sigmoid")  # the output's
    assert "return sigmoid" in doc.code()
    last.undo()
    assert "return mul" in doc.code()


def test_the_command_line_inserts_after_a_node_and_refuses_a_wrong_call(capsys):
    assert cli.main(["edit", "examples:negrelu", "-e", "splice neg * torch.sigmoid"]) == 0
    assert "add = sigmoid + relu" in capsys.readouterr().out
    assert cli.main(["edit", "examples:negrelu", "-e", "target add torch.relu"]) == 2
    assert "'add' cannot call torch.relu with 2 arguments" in capsys.readouterr().err


def test_a_rename_of_a_node_marked_red_is_not_refused():
    """Only calls an edit changes are run: a node that no longer fits can still be renamed."""
    doc = open_document("examples:simple")
    edits.set_target(doc, "act", "fc2")
    assert doc.shape_problem[0] == "fc2"
    edits.rename(doc, "fc2", "head")
    assert "head = self.fc2(act)" in doc.code()
