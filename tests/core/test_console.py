"""The console's session: edits.* calls are undo steps, a direct change of the graph is
noticed and becomes one checked 'Console edit' (or is refused and put back), blocks work,
and a session file replays what the console did."""

from fxstudio.core.console import ConsoleSession
from fxstudio.core.sessions.documents import open_document
from fxstudio.core.sessions.sessionfile import save_session


def test_edits_calls_are_undo_steps_and_output_is_captured() -> None:
    doc = open_document("examples:negrelu")
    c = ConsoleSession(doc)
    r = c.push('edits.set_target("relu", "torch.sigmoid")')
    assert [e.label for e in r.edits] == ["Change relu to torch.sigmoid"]
    assert (
        "torch.sigmoid(y)" in doc.code() and r.output == "<Edit 'Change relu to torch.sigmoid'>\n"
    )
    r.edits[0].undo()
    assert "torch.relu(y)" in doc.code()
    assert c.push("print(len(graph.nodes))").output == "8\n"
    assert "has no 'nope'" in c.push("edits.nope").output  # a traceback, not a crash


def test_a_direct_change_becomes_one_console_edit_that_undoes_exactly() -> None:
    doc = open_document("examples:negrelu")
    before = doc.code()
    c = ConsoleSession(doc)
    assert c.push("for n in graph.nodes:").more
    assert c.push("    if n.target is torch.neg: n.target = torch.abs").more
    r = c.push("")
    assert not r.more and [e.label for e in r.edits] == ["Console edit"]
    assert "torch.abs(x)" in doc.code() and doc.history[-1]["edit"] == "console"
    r.edits[0].undo()
    assert doc.code() == before  # byte for byte
    r.edits[0].redo()
    assert "torch.abs(x)" in doc.code()
    assert c.push("graph is doc.graph and gm is doc.graph_module").output == "True\n"


def test_an_invalid_direct_change_is_refused_and_put_back() -> None:
    doc = open_document("examples:negrelu")
    before = doc.code()
    c = ConsoleSession(doc)
    c.push("nodes = {n.name: n for n in graph.nodes}")
    r = c.push("nodes['add'].args = (nodes['mul'], nodes['relu'])")  # a cycle
    assert r.edits == [] and "refused and undone" in r.refused
    assert "'add' would use 'mul', which comes after it" in r.output
    assert doc.code() == before and doc.history == []
    assert doc.graph_module(*doc.example_inputs) is not None  # still runs


def test_a_session_replays_the_console(tmp_path) -> None:
    doc = open_document("examples:negrelu")
    c = ConsoleSession(doc)
    c.push("next(n for n in graph.nodes if n.name == 'add').target = operator.sub")
    c.push('edits.rename("relu", "rectified")')
    path = tmp_path / "c.fxstudio"
    save_session(doc, path)
    again = open_document(str(path))
    assert again.code() == doc.code() and "neg - rectified" in again.code()
    assert not again.notes
