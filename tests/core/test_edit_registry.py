"""The edit set is declared once (core.edits.registry): every edit users make is a kind whose
records hold its parameters, replayed from the record alone; every text form names a kind."""

import inspect

from fxstudio.core import edits
from fxstudio.core.edits import EDIT_KINDS, TEXT_FORMS, Ref
from fxstudio.core.edits import user as user_edits
from fxstudio.core.model.opening import open_model
from fxstudio.core.sessions.replay import replay


def test_every_edit_users_make_is_declared_and_every_text_form_is_listed():
    public = {
        name
        for name, fn in inspect.getmembers(user_edits, inspect.isfunction)
        if fn.__module__ == user_edits.__name__ and not name.startswith("_")
    }
    assert set(EDIT_KINDS) == public
    assert all(EDIT_KINDS[name].function is getattr(edits, name) for name in public)
    assert [f.verb for f in TEXT_FORMS.values()] == [
        line.split()[0] for line in edits.COMMANDS.splitlines() if not line.startswith(" ")
    ]
    assert {k.text.verb for k in EDIT_KINDS.values() if k.text} == set(TEXT_FORMS)


def test_records_hold_the_declared_fields_and_make_the_edit_again():
    doc = open_model("examples:negrelu")
    edits.rename(doc, "neg", "negated")
    edits.set_target(doc, "relu", "torch.tanh")
    edits.add_input(doc, "scale", "float", 2.0)
    edits.splice(doc, "relu", "add", "call_function", "torch.clamp", (), {"min": 0.0})
    edits.insert(doc, "call_function", "torch.mul", [Ref("add"), Ref("scale")])
    edits.run_command(doc, "connect x mul")
    for record in doc.history:
        assert set(record) - {"edit"} <= set(EDIT_KINDS[record["edit"]].fields)
    again = open_model("examples:negrelu")
    replay(again, doc.history)
    assert again.code() == doc.code()
