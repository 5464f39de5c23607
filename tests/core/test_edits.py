"""Edits: each one valid or refused whole, undone exactly, replayed from a session."""

import pytest
import torch

from fxstudio.core import edits
from fxstudio.core.edits import EditError, Ref
from fxstudio.core.sessions.documents import open_document, open_session
from fxstudio.core.sessions.sessionfile import save_session


def outputs(doc):
    with torch.no_grad():
        out = doc.graph_module(*doc.example_inputs)
    return out if isinstance(out, tuple) else (out,)


def same(a, b):
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


def state(doc):
    return doc.code(), list(doc.history), sorted(dict(doc.graph_module.named_modules()))


def check_round_trip(doc, make):
    """Apply, check the graph, undo to the exact start, redo to the exact edited state."""
    before, out_before = state(doc), outputs(doc)
    edit = make(doc)
    doc.graph.lint()
    after = state(doc)
    assert after[0] != before[0]
    edit.undo()
    assert state(doc) == before
    assert same(outputs(doc), out_before)
    edit.redo()
    assert state(doc) == after
    return edit


def test_change_target_rename_and_inputs():
    doc = open_document("examples:negrelu")
    check_round_trip(doc, lambda d: edits.set_target(d, "relu", "torch.nn.functional.gelu"))
    check_round_trip(doc, lambda d: edits.rename(d, "neg", "negated"))
    assert "negated = torch.neg(x)" in doc.code()
    check_round_trip(doc, lambda d: edits.set_inputs(d, "add", [Ref("negated"), Ref("z")]))
    assert "add = negated + z" in doc.code()


def test_an_edit_leaves_the_forward_to_its_first_call_and_its_code_is_never_stale():
    doc = open_document("examples:negrelu")
    gelu = torch.nn.functional.gelu
    edits.set_target(doc, "relu", "torch.nn.functional.gelu")
    assert not doc.compiled  # nothing compiled by the edit
    assert doc.code_ready()  # a small graph's code is made when asked: no worker waited for
    assert "relu = torch._C._nn.gelu(y)" in doc.code() and not doc.compiled  # code alone
    x = doc.example_inputs
    out = outputs(doc)[0]  # a plain call compiles, then runs the edited graph
    assert doc.compiled and "gelu" in doc.graph_module.code
    assert torch.equal(out, (torch.neg(x[0]) + gelu(x[1])) * x[2])
    edits.rename(doc, "neg", "negated")
    doc.ensure_compiled()  # (before it is handed to Dynamo, export or the profiler)
    assert doc.compiled and "negated = torch.neg(x)" in doc.graph_module.code


def test_rename_carries_the_position():
    doc = open_document("examples:negrelu")
    doc.set_positions({"neg": (5.0, 6.0)})
    edit = edits.rename(doc, "neg", "negated")
    assert doc.positions == {"negated": (5.0, 6.0)}
    edit.undo()
    assert doc.positions == {"neg": (5.0, 6.0)}


def test_insert_function_and_method_nodes_next_to_their_inputs():
    doc = open_document("examples:negrelu")
    e = check_round_trip(
        doc, lambda d: edits.insert(d, "call_function", "torch.sigmoid", [Ref("neg")])
    )
    assert e.label == "Insert sigmoid"
    names = doc.node_names()
    assert names.index("sigmoid") == names.index("neg") + 1
    check_round_trip(doc, lambda d: edits.insert(d, "call_method", "abs", [Ref("relu")]))
    assert "abs_1 = relu.abs()" in doc.code()


def test_splice_onto_an_edge():
    doc = open_document("examples:negrelu")
    check_round_trip(doc, lambda d: edits.splice(d, "neg", "add", "call_function", "torch.tanh"))
    assert "tanh = torch.tanh(neg)" in doc.code() and "add = tanh + relu" in doc.code()
    check_round_trip(
        doc, lambda d: edits.splice(d, "relu", "add", "call_module", "nn.LeakyReLU(0.1)")
    )
    assert isinstance(doc.graph_module.leaky_re_lu, torch.nn.LeakyReLU)


def test_a_module_inserted_then_deleted_comes_back_with_its_weights():
    doc = open_document("examples:negrelu")
    edits.insert_module(doc, "nn.Linear(8, 8)", [Ref("neg")], name="proj")
    weight = doc.graph_module.proj.weight
    edits.set_inputs(doc, "add", [Ref("proj"), Ref("relu")])
    delete = edits.delete(doc, ["proj"])  # bypassed: add takes neg again
    assert not hasattr(doc.graph_module, "proj")
    assert "add = neg + relu" in doc.code()
    delete.undo()
    assert doc.graph_module.proj.weight is weight


def test_delete_bypasses_or_refuses():
    doc = open_document("examples:negrelu")
    check_round_trip(doc, lambda d: edits.delete(d, ["relu"]))
    assert "add = neg + y" in doc.code()
    resnet = open_document("examples:resnet")
    code = resnet.code()
    with pytest.raises(EditError, match="'fc' cannot be deleted: output use"):
        edits.delete(resnet, ["fc"])  # its input (flatten) has another shape
    assert resnet.code() == code and resnet.history == []
    check_round_trip(resnet, lambda d: edits.delete(d, ["layer1_0_relu", "layer1_0_conv2"]))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: edits.set_inputs(d, "neg", [Ref("mul")]), "comes after it"),
        (lambda d: edits.set_inputs(d, "neg", [Ref("neg")]), "cycle"),
        (lambda d: edits.rename(d, "neg", "relu"), "already a node named 'relu'"),
        (lambda d: edits.rename(d, "neg", "2x"), "not a valid name"),
        (lambda d: edits.rename(d, "neg", "list"), "Python reserves it"),
        (lambda d: edits.set_target(d, "neg", "torch.nn"), "not a function"),
        (lambda d: edits.set_target(d, "neg", "torch.no_such_thing"), "no function"),
        (
            lambda d: edits.insert(
                d, "call_function", "torch.nn.functional.dropout", [Ref("x"), 0.5, True, False, 1]
            ),
            "cannot call",
        ),
        (lambda d: edits.insert(d, "call_method", "no_such_method", [Ref("x")]), "no method"),
        (lambda d: edits.insert(d, "call_method", "softmax", []), "on nothing: select"),
        (lambda d: edits.insert(d, "call_function", "torch.sigmoid", []), "needs|without arg"),
        (lambda d: edits.set_inputs(d, "neg", [Ref("ghost")]), "no node named 'ghost'"),
        (lambda d: edits.delete(d, ["output"]), "output node cannot be deleted"),
        (lambda d: edits.delete(d, ["x"]), "input 'x' is used"),
        (lambda d: edits.insert_module(d, "os.system('true')"), "not a module constructor"),
    ],
)
def test_invalid_edits_are_refused_and_change_nothing(make, message):
    doc = open_document("examples:negrelu")
    before = state(doc)
    events = []
    doc.subscribe(events.append)
    with pytest.raises(EditError, match=message):
        make(doc)
    assert state(doc) == before and events == []
    doc.graph.lint()


@pytest.mark.parametrize(
    ("name", "target", "said"),
    [  # a function that is not there is named, with the close ones that are
        ("flatten", "torch.nonexistent_fn", "torch has no function 'nonexistent_fn'."),
        ("flatten", "torch.flaten", "torch has no function 'flaten'. Did you mean torch.flatten"),
        ("flatten", "F.rlu", "torch.nn.functional has no function 'rlu'. Did you mean "),
        ("flatten", "rleu", "There is no function 'rleu'. Did you mean torch.relu?"),
        (  # a call_module node: a missing function is still said as that, not as an fx lint
            "layer1_0_conv1",
            "torch.nonexistent_fn",
            "torch has no function 'nonexistent_fn' (layer1_0_conv1 calls a submodule: give a "
            "submodule's path, e.g. layer1.0.conv1).",
        ),
        ("layer1_0_conv1", "torch.relu", "'torch.relu' is a function, and layer1_0_conv1 calls"),
        (
            "layer1_0_conv1",
            "layer1.0.conv9",
            "The model has no submodule 'layer1.0.conv9'. Did you mean",
        ),
    ],
)
def test_a_target_that_is_not_there_is_named_with_close_names(name, target, said):
    doc = open_document("examples:resnet")
    before = state(doc)
    with pytest.raises(EditError) as refused:
        edits.set_target(doc, name, target)
    assert str(refused.value).startswith(said), str(refused.value)
    assert "nonexistent attribute" not in str(refused.value)
    assert state(doc) == before


def test_wrong_argument_count_for_a_module_is_refused():
    doc = open_document("examples:simple")
    with pytest.raises(EditError, match="cannot call fc1 that way"):
        edits.set_inputs(doc, "fc1", [Ref("x"), Ref("x")])


def test_a_call_that_cannot_run_is_refused_and_a_mismatch_after_it_is_kept():
    doc = open_document("examples:simple")
    before = state(doc)
    with pytest.raises(EditError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x16"):
        edits.set_inputs(doc, "fc2", [Ref("x")])  # fc2 takes 32 features, x has 16
    assert state(doc) == before and doc.shape_problem is None
    edit = edits.set_target(doc, "act", "fc2")  # act runs (2x32 -> 2x4); fc2 after it does not
    node, text = doc.shape_problem
    assert node == "fc2" and "mat1 and mat2 shapes cannot be multiplied (2x4 and 32x4)" in text
    assert doc.row("fc2").shape == "" and doc.row("act").shape == "2x4"  # no stale shapes
    edit.undo()
    assert doc.shape_problem is None and doc.row("fc2").shape == "2x4"


def test_inputs_and_outputs():
    doc = open_document("examples:negrelu")
    check_round_trip(doc, lambda d: edits.add_input(d, "scale", "float", 2.0))
    assert "def forward(self, x, y, z, scale : float = 2.0)" in doc.code()
    with pytest.raises(EditError, match="not a type fxstudio knows"):
        edits.add_input(doc, "other", "Widget", 1)
    check_round_trip(doc, lambda d: edits.set_inputs(d, "mul", [Ref("add"), Ref("scale")]))
    check_round_trip(doc, lambda d: edits.set_outputs(d, ["mul", "neg"]))
    assert "return (mul, neg)" in doc.code()
    with pytest.raises(EditError, match="needs a default"):
        edits.add_input(doc, "more")
    edits.set_inputs(doc, "mul", [Ref("add"), Ref("z")])
    check_round_trip(doc, lambda d: edits.delete(d, ["scale"]))


def test_events_name_what_changed():
    doc = open_document("examples:negrelu")
    events = []
    doc.subscribe(events.append)
    e = edits.insert(doc, "call_function", "torch.sigmoid", [Ref("neg")])
    assert events[-1].kind.name == "NODES_ADDED" and events[-1].names == {"sigmoid"}
    e.undo()
    assert events[-1].kind.name == "NODES_REMOVED"


def test_a_session_replays_its_edits(tmp_path):
    doc = open_document("examples:negrelu")
    edits.set_target(doc, "relu", "torch.nn.functional.gelu")
    edits.splice(doc, "neg", "add", "call_module", "nn.Linear(8, 8)")
    edits.insert(doc, "call_method", "view", [Ref("mul"), (4, 8)])
    edits.set_outputs(doc, ["view"])
    edits.rename(doc, "view", "flat")
    edits.add_input(doc, "scale", "float", 1.0)
    edits.paste(doc, ["neg"])
    edits.move_input(doc, "z", 0)
    edits.rewire(doc, "add", "args[1]", "x")
    path = tmp_path / "s.fxstudio"
    save_session(doc, path)
    again = open_session(path)
    assert again.code() == doc.code()
    assert not again.notes
    assert same(outputs(again), outputs(doc))  # same weights: the same seed


def test_an_in_place_op_moved_onto_an_input_does_not_change_the_example_inputs():
    # resnet's ReLUs are in place: rewired to read the input, the shape check's run must
    # not write into the document's example inputs (found by the stateful test).
    doc = open_document("examples:resnet")
    start = doc.example_inputs[0].clone()
    edits.set_inputs(doc, "layer1_1_relu_1", [Ref("x")])
    assert torch.equal(doc.example_inputs[0], start)


def test_edit_commands_as_text():
    doc = open_document("examples:negrelu")
    edits.run_command(doc, "insert neg torch.clamp min=0.0")
    assert "clamp = torch.clamp(neg, min = 0.0)" in doc.code()
    edits.run_command(doc, "input scale:float 2.0")
    assert "scale : float = 2.0" in doc.code()
    edits.run_command(doc, "args mul add, scale")
    assert "mul = add * scale" in doc.code()
    edits.run_command(doc, "delete clamp")
    edits.run_command(doc, "connect y add args[1]")
    assert "add = neg + y" in doc.code()
    for bad, message in [
        ("rename neg", "not a complete edit"),
        ("input more x y", "not a Python value"),
        ("args mul add, nowhere", "neither a node nor a Python value"),
        ("args mul add, =", "not arguments fxstudio can read"),
        ("args mul add,", "cannot call operator.mul that way"),
    ]:
        with pytest.raises(EditError, match=message):
            edits.run_command(doc, bad)


def test_undo_is_a_stack():
    doc = open_document("examples:negrelu")
    first = edits.rename(doc, "neg", "a")
    edits.rename(doc, "a", "b")
    with pytest.raises(EditError, match="Undo the edits made after 'Rename neg to a' first"):
        first.undo()
    assert "b = torch.neg(x)" in doc.code()


def test_paste_copies_a_selection_with_new_names():
    doc = open_document("examples:resnet")
    block = ["layer1_0_conv1", "layer1_0_bn1", "layer1_0_relu"]
    edit = check_round_trip(doc, lambda d: edits.paste(d, block))
    assert edit.label == "Paste 3 nodes"
    code = doc.code()
    # the copy reads the same outside value, and its own copies inside
    assert 'layer1_0_conv1_1 = getattr(self.layer1, "0").conv1(stem_2)' in code
    assert 'layer1_0_bn1_1 = getattr(self.layer1, "0").bn1(layer1_0_conv1_1)' in code
    names = doc.node_names()
    assert names.index("layer1_0_conv1_1") == names.index("layer1_0_relu") + 1
    with pytest.raises(EditError, match="inputs and the output cannot be pasted"):
        edits.paste(doc, ["x"])


def test_rewire_one_argument():
    doc = open_document("examples:negrelu")
    check_round_trip(doc, lambda d: edits.rewire(d, "add", "args[1]", "x"))
    assert "add = neg + x" in doc.code()
    transformer = open_document("examples:transformer")
    edits.rewire(transformer, "view_1", "args[4]", "floordiv")  # a non-tensor value works too
    assert "view_1 = getitem_1.view(size, size_1, 4, floordiv)" in transformer.code()
    with pytest.raises(EditError, match="shape '\\[16, 16, 4, 16\\]' is invalid"):
        edits.rewire(transformer, "view", "args[1]", "size_1")  # a size that does not fit
    with pytest.raises(EditError, match="has no argument args\\[5\\]"):
        edits.rewire(doc, "add", "args[5]", "x")
    with pytest.raises(EditError, match="comes after it"):
        edits.rewire(doc, "neg", "args[0]", "mul")


def test_move_an_input():
    doc = open_document("examples:negrelu")
    check_round_trip(doc, lambda d: edits.move_input(d, "z", 0))
    assert "def forward(self, z, x, y)" in doc.code()
    check_round_trip(doc, lambda d: edits.move_input(d, "z", 2))
    assert "def forward(self, x, y, z)" in doc.code()
    edits.add_input(doc, "scale", default=2.0)
    with pytest.raises(EditError, match="default value must come after"):
        edits.move_input(doc, "scale", 0)
    assert "def forward(self, x, y, z, scale = 2.0)" in doc.code()


def test_typed_arguments():
    doc = open_document("examples:negrelu")
    args, kwargs = edits.parse_arguments(doc, "(x, 2), [y, None], dtype=torch.float16")
    assert args == ((Ref("x"), 2), [Ref("y"), None]) and kwargs == {"dtype": torch.float16}
    edits.run_command(doc, "insert mul .to dtype=torch.float64")
    assert "to = mul.to(dtype = torch.float64)" in doc.code()
    with pytest.raises(EditError, match="not a dtype"):
        edits.parse_arguments(doc, "torch.relu")


def test_recorded_values_survive_json():
    import json

    record = {
        "args": ((Ref("x"), 2), [None, 1.5], torch.float16, torch.channels_last, slice(1, None)),
        "kwargs": {"dim": -1},
    }
    again = edits.decode_record(json.loads(json.dumps(edits.encode_record(record))))
    assert again == record
