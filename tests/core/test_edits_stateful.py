"""Random sequences of edits, undos and redos keep the graph valid, and undoing everything
gives back exactly the original code and outputs."""

import pytest
import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from fxstudio.core import edits
from fxstudio.core.edits import EditError, Ref, catchup, snapshots
from fxstudio.core.graph.graphviews import make_row, tidy_code
from fxstudio.core.sessions.documents import open_document

UNARY = ["torch.relu", "torch.tanh", "torch.sigmoid", "torch.nn.functional.gelu"]
MODULES = ["nn.Identity()", "nn.ReLU()", "nn.Dropout(0.0)"]


def outputs(doc):
    with torch.no_grad():
        out = doc.graph_module(*doc.example_inputs)
    return out if isinstance(out, tuple) else (out,)


class EditMachine(RuleBasedStateMachine):
    spec = "examples:resnet"

    def __init__(self):
        super().__init__()
        self.doc = open_document(self.spec)
        self.start_code = self.doc.code()
        self.start_out = outputs(self.doc)
        self.done: list[edits.Edit] = []
        self.undone: list[edits.Edit] = []
        self.counter = 0

    # --- helpers -------------------------------------------------------------------------

    def tensors(self):
        return [
            n.name
            for n in self.doc.graph.nodes
            if n.op not in ("output", "get_attr") and isinstance(n.meta.get("val"), torch.Tensor)
        ]

    def attempt(self, make):
        before = (self.doc.code(), list(self.doc.history))
        try:
            edit = make()
        except EditError:
            assert (self.doc.code(), list(self.doc.history)) == before  # refused: unchanged
            return
        self.done.append(edit)
        self.undone.clear()

    # --- rules -----------------------------------------------------------------------------

    @rule(data=st.data(), fn=st.sampled_from(UNARY))
    def insert_unary(self, data, fn):
        node = data.draw(st.sampled_from(self.tensors()))
        self.attempt(lambda: edits.insert(self.doc, "call_function", fn, [Ref(node)]))

    @rule(data=st.data(), fn=st.sampled_from(UNARY + MODULES))
    def splice(self, data, fn):
        pairs = [(s, t) for s, t, _ in self.doc.edges() if s in set(self.tensors())]
        producer, user = data.draw(st.sampled_from(pairs))
        op = "call_module" if fn.startswith("nn.") else "call_function"
        self.attempt(lambda: edits.splice(self.doc, producer, user, op, fn))

    @rule(data=st.data())
    def rename(self, data):
        names = [n for n in self.doc.node_names() if n != "output"]
        name = data.draw(st.sampled_from(names))
        self.counter += 1
        new = data.draw(st.sampled_from([f"renamed_{self.counter}", names[0], "2bad"]))
        self.attempt(lambda: edits.rename(self.doc, name, new))

    @rule(data=st.data(), fn=st.sampled_from(UNARY))
    def change_target(self, data, fn):
        unary = [
            n.name
            for n in self.doc.graph.nodes
            if n.op == "call_function" and len(n.args) == 1 and not n.kwargs
        ]
        if unary:
            name = data.draw(st.sampled_from(unary))
            self.attempt(lambda: edits.set_target(self.doc, name, fn))

    @rule(data=st.data())
    def delete(self, data):
        names = [n for n in self.doc.node_names() if n != "output"]
        chosen = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=3))
        self.attempt(lambda: edits.delete(self.doc, chosen))

    @rule(data=st.data())
    def rewire(self, data):
        names = self.tensors()
        user = data.draw(st.sampled_from([n for n in names if self.doc.inputs(n)] or names))
        source = data.draw(st.sampled_from(names))
        node = self.doc.node(user)
        if node.args:
            args = list(edits.to_refs(node.args))
            args[0] = Ref(source)
            self.attempt(lambda: edits.set_inputs(self.doc, user, args))

    @precondition(lambda self: self.done)
    @rule()
    def undo(self):
        edit = self.done.pop()
        edit.undo()
        self.undone.append(edit)

    @precondition(lambda self: self.undone)
    @rule()
    def redo(self):
        edit = self.undone.pop()
        edit.redo()
        self.done.append(edit)

    # --- what always holds ------------------------------------------------------------------

    @invariant()
    def graph_is_valid(self):
        self.doc.graph.lint()
        assert self.doc.graph_module.code.strip() == self.doc.code().strip()
        assert len(self.doc.history) == len(self.done)

    def teardown(self):
        while self.done:
            self.done.pop().undo()
        assert self.doc.code() == self.start_code
        out = outputs(self.doc)
        assert len(out) == len(self.start_out)
        assert all(torch.equal(a, b) for a, b in zip(out, self.start_out, strict=True))


class TransformerEdits(EditMachine):
    spec = "examples:transformer"


class DeferredEdits(EditMachine):
    """A big graph's way: edits leave code and shapes to fxstudio.core.edits.catchup, whose
    snapshots are worked on and applied (or dropped, when the graph moved on) between the edits."""

    def __init__(self):
        super().__init__()
        self.doc.defer_heavy = True
        self.pending: list[snapshots.Snapshot] = []

    @rule()
    def snapshot(self):
        if catchup.needed(self.doc):
            self.pending.append(snapshots.snapshot(self.doc))

    @precondition(lambda self: self.pending)
    @rule(newest=st.booleans())
    def catch_up(self, newest):
        snap = self.pending.pop(-1 if newest else 0)
        current = snap.version == self.doc.version
        assert catchup.apply(self.doc, catchup.compute(snap)) == current  # else dropped

    @invariant()
    def graph_is_valid(self):
        doc = self.doc
        doc.graph.lint()
        assert len(doc.history) == len(self.done)
        if doc.code_ready():  # what a catch-up brought is that of the graph as it is
            assert doc.code() == tidy_code(doc.graph.python_code("self").src)
        if doc.code_ready() and not doc.shapes_stale:
            assert doc.rows() == [make_row(n) for n in doc.graph.nodes]

    def teardown(self):
        while self.done:
            self.done.pop().undo()
        catchup.catch_up(self.doc)
        assert self.doc.code() == self.start_code
        self.doc.ensure_compiled()
        out = outputs(self.doc)
        assert all(torch.equal(a, b) for a, b in zip(out, self.start_out, strict=True))


SETTINGS = settings(
    max_examples=25,
    stateful_step_count=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@pytest.mark.parametrize(
    "machine",
    [EditMachine, TransformerEdits, DeferredEdits],
    ids=["resnet", "transformer", "resnet-deferred"],
)
def test_random_edits_undos_and_redos(machine):
    machine.TestCase.settings = SETTINGS
    machine.TestCase().runTest()
