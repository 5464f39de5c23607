"""RecentModels: the list of lately opened models, and which of them still exist."""

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.saving.recent import RecentModels


def test_a_deleted_file_leaves_the_list_whatever_its_spec_form(tmp_path):
    bare = tmp_path / "bare.py"
    named = tmp_path / "named.py"
    for f in (bare, named):
        f.write_text("import torch\nclass Net(torch.nn.Module):\n    pass\n")
    recent = RecentModels(tmp_path / "recent.json")
    for spec in (str(bare), f"{named}:Net", "examples:resnet"):
        recent.add(OpenRequest(spec))
    assert len(recent.existing()) == 3

    bare.unlink()
    named.unlink()

    assert [r.spec for r in recent.existing()] == ["examples:resnet"]
    assert len(recent.load()) == 3  # forgetting is for the list shown, not the file
