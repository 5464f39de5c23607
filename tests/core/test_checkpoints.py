"""A real checkpoint folder (issue 38): ``hf:FOLDER`` in the Hugging Face layout -- config.json
and safetensors shards with their index -- opens with the checkpoint's weights when they fit,
structure only without reading a shard when asked, one module's weights read from it
(``--module``), and a saved ``.py`` loads from the same folder.  The folders are written here
(a small Llama with random weights, sharded); nothing is downloaded."""

import importlib.util
import json
import os
import shutil
import stat

import pytest
import torch
from safetensors.torch import load_file, save_file

from fxstudio import cli
from fxstudio.core.errors import UserError
from fxstudio.core.flows import OpenRequest, open_document
from fxstudio.core.flows.run import part_of
from fxstudio.core.graph.checkpoints import INDEX
from fxstudio.core.model import zoo
from fxstudio.core.saving.export import export

transformers = pytest.importorskip("transformers")

SMALL = {
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "vocab_size": 128,
    "attn_implementation": "eager",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A LlamaForCausalLM checkpoint (random weights) saved in shards with their index."""
    path = tmp_path_factory.mktemp("llama") / "checkpoint"
    torch.manual_seed(7)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**SMALL)).eval()
    model.save_pretrained(path, max_shard_size="100KB")
    return path


@pytest.fixture(scope="module")
def reference(folder):
    """The base model as transformers itself loads the checkpoint."""
    return transformers.LlamaModel.from_pretrained(folder).eval()


def shards(folder):
    return sorted(p for p in os.listdir(folder) if p.endswith(".safetensors"))


def output(doc, inputs=None):
    with torch.no_grad():
        out = doc.graph_module(*(inputs or doc.example_inputs))
    return out["last_hidden_state"] if isinstance(out, dict) else out[0]


def test_the_folder_is_sharded_with_an_index(folder):
    assert len(shards(folder)) > 2 and (folder / INDEX).is_file()


def test_a_checkpoint_folder_opens_with_its_weights(folder, reference):
    doc = open_document(OpenRequest(f"hf:{folder}"))
    assert doc.weights and doc.checkpoint == str(folder)
    note = doc.notes[0]
    assert f"weights from {folder} ({len(shards(folder))} shards)" in note, note
    assert "lm_head.weight" in note  # the head the base model leaves out, said
    with torch.no_grad():
        expected = reference(*doc.example_inputs).last_hidden_state
    assert torch.equal(output(doc), expected)


def test_without_weights_no_shard_is_read(folder, tmp_path):
    bare = tmp_path / "bare"
    shutil.copytree(folder, bare)
    for name in shards(bare):  # unreadable: any read of a shard would fail
        (bare / name).write_bytes(b"not a safetensors file")
        os.chmod(bare / name, 0)
    try:
        doc = open_document(OpenRequest(f"hf:{bare}", weights=False))
    finally:
        for name in shards(bare):
            os.chmod(bare / name, stat.S_IRUSR | stat.S_IWUSR)
    assert not doc.weights and doc.checkpoint == str(bare)
    assert "structure only" in doc.notes[0]


def broken(folder, tmp_path, change):
    """A copy of the checkpoint with ``change(tensors)`` made to the shard that holds
    layers.0's q_proj (the index follows what the shard then holds)."""
    copy = tmp_path / "broken"
    shutil.copytree(folder, copy)
    index = json.loads((copy / INDEX).read_text())
    name = "model.layers.0.self_attn.q_proj.weight"
    shard = copy / index["weight_map"][name]
    tensors = load_file(shard)
    change(tensors, name)
    save_file(tensors, shard, metadata={"format": "pt"})
    index["weight_map"] = {
        k: v for k, v in index["weight_map"].items() if k in tensors or v != shard.name
    }
    (copy / INDEX).write_text(json.dumps(index))
    return copy


def test_a_tensor_of_another_shape_is_named(folder, tmp_path):
    def reshape(tensors, name):
        tensors[name] = torch.zeros(3, 5)

    with pytest.raises(UserError) as caught:
        open_document(OpenRequest(f"hf:{broken(folder, tmp_path, reshape)}"))
    text = str(caught.value)
    assert "layers.0.self_attn.q_proj.weight (3, 5) instead of (64, 64)" in text, text
    assert "save_pretrained" in text


def test_a_missing_tensor_is_named(folder, tmp_path):
    def drop(tensors, name):
        del tensors[name]

    with pytest.raises(UserError) as caught:
        open_document(OpenRequest(f"hf:{broken(folder, tmp_path, drop)}"))
    text = str(caught.value)
    assert "has no layers.0.self_attn.q_proj.weight" in text, text
    assert "--no-weights" in text


def test_a_module_of_the_structure_only_folder_runs_with_the_checkpoints_weights(folder):
    """--module on a structure-only document of the folder: layers.0 alone, its weights read
    from the checkpoint -- the same values, so the same output as the layer of the model
    opened with its weights (bit for bit: the same ops on the same inputs)."""
    bare = open_document(OpenRequest(f"hf:{folder}", weights=False))
    part = part_of(bare, "layers.0")
    assert part.document.weights and not part.made_up
    assert f"weights from the checkpoint {folder}" in part.describe(), part.describe()
    full = part_of(open_document(OpenRequest(f"hf:{folder}")), "layers.0")
    state = part.document.graph_module.state_dict()
    assert state.keys() == full.document.graph_module.state_dict().keys()
    for name, value in full.document.graph_module.state_dict().items():
        assert torch.equal(state[name], value), name
    with torch.no_grad():
        got = part.document.graph_module(*full.document.example_inputs)
        expected = full.document.graph_module(*full.document.example_inputs)
    assert torch.equal(got, expected)


def test_a_module_whose_tensor_the_checkpoint_lacks_is_named(folder, tmp_path):
    def drop(tensors, name):
        del tensors[name]

    bare = open_document(OpenRequest(f"hf:{broken(folder, tmp_path, drop)}", weights=False))
    part_of(bare, "layers.1")  # what it lacks is layers.0's
    with pytest.raises(UserError, match="has no tensor layers.0.self_attn.q_proj.weight"):
        part_of(bare, "layers.0")


def test_the_saved_py_loads_from_the_same_folder(folder, tmp_path):
    """The standalone module of a model opened from a checkpoint folder loads from that
    folder (the 'model.' prefix dropped, lm_head left out, the rotary inv_freq it does not
    hold taken from the .py's own weights file) and computes what the editor's model does."""
    doc = open_document(OpenRequest(f"hf:{folder}"))
    out = tmp_path / "llama_saved.py"
    export(doc, out)
    module = run_module(out)
    index = json.loads((folder / INDEX).read_text())["weight_map"]
    assert all(n.startswith(("model.", "lm_head.")) for n in index)  # the prefix to map
    assert "rotary_emb.inv_freq" in load_file(out.with_suffix(".safetensors"))
    assert not any("inv_freq" in n for n in index)  # taken from the .py's own file
    model = module.load(str(folder))
    with torch.no_grad():
        got = model(*doc.example_inputs)
    got = got["last_hidden_state"] if isinstance(got, dict) else got[0]
    assert torch.equal(got, output(doc))
    assert torch.equal(
        model.get_parameter("layers.0.mlp.up_proj.weight"),
        doc.graph_module.get_parameter("layers.0.mlp.up_proj.weight"),
    )


def test_a_py_saved_without_weights_loads_them_from_the_checkpoint(folder, tmp_path):
    """Structure only (no shard read), saved as a standalone .py: its own weights file holds
    only what the model computes (inv_freq), its load(FOLDER) gives the model with the
    checkpoint's weights -- what the document opened with them computes."""
    bare = open_document(OpenRequest(f"hf:{folder}", weights=False))
    full = open_document(OpenRequest(f"hf:{folder}"))
    out = tmp_path / "bare_saved.py"
    result = export(bare, out)
    assert any(f"load('{folder}')" in note for note in result.notes)
    assert f"load('{folder}')" in out.read_text()  # said in the module's docstring
    own = load_file(out.with_suffix(".safetensors"))
    assert all("inv_freq" in name for name in own) and own  # no weight, the computed buffer
    model = run_module(out).load(str(folder))
    with torch.no_grad():
        got = model(*full.example_inputs)
    got = got["last_hidden_state"] if isinstance(got, dict) else got[0]
    assert torch.equal(got, output(full))
    with pytest.raises(ValueError, match="missing"):
        run_module(out).load()  # its own file alone: the weights are missing, and named


def test_the_saved_py_names_a_folder_that_does_not_match(folder, tmp_path):
    doc = open_document(OpenRequest(f"hf:{folder}"))
    out = tmp_path / "llama_saved.py"
    export(doc, out)
    other = tmp_path / "other"
    other.mkdir()
    save_file({"model.layers.0.mlp.up_proj.weight": torch.zeros(2, 2)}, other / "model.safetensors")
    with pytest.raises(ValueError, match="layers.0.mlp.up_proj.weight.*another shape"):
        run_module(out).load(str(other))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="holds no .safetensors files"):
        run_module(out).load(str(empty))


def run_module(path):
    spec = importlib.util.spec_from_file_location(f"saved_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_checkpoint_too_large_for_memory_opens_structure_only_without_reading_it(
    folder, tmp_path, monkeypatch
):
    """Weights asked for, but they would not fit: the folder's structure only, its shards
    unread (garbage here), the folder kept for --module."""
    bare = tmp_path / "big"
    shutil.copytree(folder, bare)
    for name in shards(bare):
        (bare / name).write_bytes(b"not a safetensors file")
    monkeypatch.setattr(zoo, "too_big_for_memory", lambda _m: "its weights would not fit")
    doc = open_document(OpenRequest(f"hf:{bare}"))
    assert not doc.weights and doc.checkpoint == str(bare)
    assert "would not fit" in doc.notes[0] and "structure only" in doc.notes[0]


def test_profile_a_module_of_the_folder_on_the_command_line(folder, capsys):
    args = ["profile", f"hf:{folder}", "--no-weights", "--module", "layers.1"]
    assert cli.main([*args, "--min-time", "0.05"]) == 0
    out = capsys.readouterr().out
    assert "the module layers.1 alone" in out and f"weights from the checkpoint {folder}" in out


def test_a_detached_copy_keeps_the_checkpoint_folder(folder):
    """A worker's copy (the window's runs) reads a module's weights from the same folder."""
    from fxstudio.core.edits.snapshots import detached, snapshot

    bare = open_document(OpenRequest(f"hf:{folder}", weights=False))
    assert detached(snapshot(bare)).checkpoint == bare.checkpoint == str(folder)


def test_a_bfloat16_checkpoint_without_a_dtype_in_its_config_opens_in_bfloat16(tmp_path):
    """A checkpoint whose config.json names no dtype (older ones) opens in the dtype its
    tensors are stored in -- structure only too, as transformers' from_pretrained does with
    its weights -- so that its sizes are the checkpoint's, not float32's twice as many."""
    path = tmp_path / "bf16"
    torch.manual_seed(7)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**SMALL)).to(torch.bfloat16)
    model.save_pretrained(path)
    config = json.loads((path / "config.json").read_text())
    for key in ("dtype", "torch_dtype"):
        config.pop(key, None)
    (path / "config.json").write_text(json.dumps(config))
    full = open_document(OpenRequest(f"hf:{path}"))
    bare = open_document(OpenRequest(f"hf:{path}", weights=False))
    dtypes = [{p.dtype for p in d.graph_module.parameters()} for d in (full, bare)]
    assert dtypes == [{torch.bfloat16}, {torch.bfloat16}]
    assert [r.dtype for r in bare.rows()] == [r.dtype for r in full.rows()]


def test_a_hub_id_whose_weights_are_in_the_local_cache_opens_with_them(
    folder, reference, tmp_path, monkeypatch
):
    """``hf:ORG/NAME`` whose snapshot in the Hugging Face cache holds safetensors (laid out
    as huggingface_hub lays it: refs/main naming the snapshot) opens with those weights, not
    random ones; structure only, it remembers the snapshot to read a module's weights from."""
    import huggingface_hub

    snapshot = tmp_path / "hub" / "models--acme--tiny-llama" / "snapshots" / "0123abcd"
    shutil.copytree(folder, snapshot)
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("0123abcd")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    doc = open_document(OpenRequest("hf:acme/tiny-llama"))
    assert doc.checkpoint == str(snapshot), doc.notes
    with torch.no_grad():
        expected = reference(*doc.example_inputs).last_hidden_state
    assert torch.equal(output(doc), expected)
    bare = open_document(OpenRequest("hf:acme/tiny-llama", weights=False))
    assert not bare.weights and bare.checkpoint == str(snapshot)
