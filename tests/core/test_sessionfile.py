import json
import shutil

import pytest

from fxstudio import cli
from fxstudio.core.edits import rename
from fxstudio.core.errors import LoadError
from fxstudio.core.graph.document import PatternBox
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.patterns.builtins import run_builtin
from fxstudio.core.sessions.documents import open_document, open_session
from fxstudio.core.sessions.sessionfile import read_session, save_session


def test_session_restores_model_inputs_and_view(tmp_path):
    doc = open_document(OpenRequest("examples:simple", "export", ("3x16",), 5))
    doc.set_positions({"output": (1.5, -2.0)})
    doc.set_collapsed("fc1", True)
    names = tuple(doc.node_names()[1:3])
    doc.pattern_boxes.append(PatternBox("pair", names))
    path = tmp_path / "work.fxstudio"
    save_session(doc, path)
    again = open_session(path)
    assert again.request.spec == "examples:simple"
    assert (again.request.frontend, again.request.inputs, again.request.seed) == (
        "export",
        ("3x16",),
        5,
    )
    assert again.code() == doc.code()
    assert again.positions == {"output": (1.5, -2.0)}
    assert again.collapsed == {"fc1"}
    assert again.pattern_boxes == [PatternBox("pair", names)]
    assert not again.notes
    assert open_document(str(path)).positions == again.positions  # open_document takes sessions


def test_a_session_gives_back_its_edits_to_undo(tmp_path):
    """The edits a session replays are real edits: undoing the last gives the graph before it."""
    doc = open_document("examples:resnet")
    first = doc.code()
    rename(doc, "pool", "avgpool")
    renamed = doc.code()
    run_builtin(doc, "fold-conv-bn")
    path = tmp_path / "folded.fxstudio"
    save_session(doc, path)
    again = open_session(path)
    assert again.code() == doc.code() and len(again) == len(doc)
    assert [e.label for e in again.replayed] == [
        "Rename pool to avgpool",
        "fold-conv-bn (15 matches)",
    ]
    again.replayed[1].undo()  # the fold undone: the BatchNorms are back
    assert again.code() == renamed and "bn1" in again.code()
    again.replayed[0].undo()
    assert again.code() == first and again.history == []


def test_session_with_model_file_moves_with_its_folder(tmp_path, write_model):
    model = write_model(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.relu(x)\n",
        name="net.py",
    )
    doc = open_document(OpenRequest(f"{model}:Net", inputs=("2x2",)))
    save_session(doc, tmp_path / "s.fxstudio")
    stored = json.loads((tmp_path / "s.fxstudio").read_text())
    assert stored["model"]["spec"] == "net.py:Net"  # relative to the session file
    moved = tmp_path.parent / (tmp_path.name + "_moved")
    shutil.copytree(tmp_path, moved)
    again = open_session(moved / "s.fxstudio")
    assert again.source_file == str(moved / "net.py")
    # A model file that changed since is reopened, with a note saying so.
    (moved / "net.py").write_text(
        "import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
        "        return torch.sigmoid(x)\n"
    )
    changed = open_session(moved / "s.fxstudio")
    assert any("changed since" in n for n in changed.notes)


@pytest.mark.parametrize(
    "text, message",
    [
        ("not json", "not a readable fxstudio session"),
        ('{"format": "something-else"}', "not an fxstudio session"),
        ('{"format": "fxstudio-session", "version": 99, "model": {}}', "newer fxstudio"),
        ('{"format": "fxstudio-session", "version": 1}', "damaged"),
    ],
)
def test_bad_session_files(tmp_path, text, message):
    path = tmp_path / "bad.fxstudio"
    path.write_text(text)
    with pytest.raises(LoadError, match=message):
        read_session(path)


def test_cli_shows_a_session(tmp_path, capsys):
    save_session(open_document("examples:negrelu"), tmp_path / "n.fxstudio")
    assert cli.main(["show", str(tmp_path / "n.fxstudio"), "--format", "code"]) == 0
    assert "neg = torch.neg(x)" in capsys.readouterr().out
