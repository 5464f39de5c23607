"""A worker's edit on a detached copy comes back as one edit, or not at all
(fxstudio.core.edits.snapshots)."""

from __future__ import annotations

import pytest

from fxstudio.core import edits
from fxstudio.core.edits import snapshots
from fxstudio.core.sessions.documents import open_document


def test_a_result_is_refused_once_the_graph_moved_on_and_the_document_stays():
    doc = open_document("examples:negrelu")
    snap = snapshots.snapshot(doc)
    work = snapshots.detached(snap)
    done = edits.set_target(work, "relu", "torch.tanh")
    edits.set_target(doc, "relu", "torch.sigmoid")  # meanwhile, on the editing thread
    code = doc.code()
    with pytest.raises(snapshots.Stale, match="changed while this ran"):
        snapshots.adopt(doc, snap, work, done)
    assert doc.code() == code and "sigmoid" in code


def test_a_result_is_never_taken_by_another_document_at_the_same_version():
    doc, other = open_document("examples:negrelu"), open_document("examples:negrelu")
    assert doc.version == other.version  # (both as opened)
    snap = snapshots.snapshot(doc)
    work = snapshots.detached(snap)
    done = edits.set_target(work, "relu", "torch.tanh")
    with pytest.raises(snapshots.Stale):
        snapshots.adopt(other, snap, work, done)
    assert "tanh" not in other.code()
    snapshots.adopt(doc, snap, work, done)
    assert "tanh" in doc.code()


def test_a_snapshot_of_the_graph_alone_names_no_module_and_cannot_be_detached(monkeypatch):
    doc = open_document("examples:resnet")
    walks = []
    real = type(doc.graph_module).named_modules

    def named_modules(module, *args, **kwargs):
        walks.append(module)
        return real(module, *args, **kwargs)

    monkeypatch.setattr(type(doc.graph_module), "named_modules", named_modules)
    alone = snapshots.snapshot(doc, modules=False)
    assert walks == [] and alone.attributes is None
    assert [n[2] for n in alone.nodes] == doc.node_names()
    with pytest.raises(ValueError, match="without its modules"):
        snapshots.detached(alone)
    whole = snapshots.snapshot(doc)
    assert walks == [doc.graph_module]
    conv = doc.graph_module.get_submodule("layer1.0.conv1")
    assert whole.attributes["layer1.0.conv1"] is conv
    assert snapshots.detached(whole).graph_module.get_submodule("layer1.0.conv1") is conv
