"""Models by name: factories with literal arguments, hf: (transformers from configs) and
timm:, with defaults that make capture work; known capture failures name their cause."""

import importlib.util

import pytest
import torch

from fxstudio.core.errors import CaptureError, LoadError
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.model.loading import load_model
from fxstudio.core.model.modelspec import parse_spec
from fxstudio.core.saving.export import export
from fxstudio.core.saving.verify import verify_standalone
from fxstudio.core.sessions.documents import open_document
from tests.conftest import SIZE_BRANCH

needs_transformers = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None, reason="transformers is not installed"
)


def test_a_factory_with_literal_arguments(write_model):
    path = write_model(
        "import torch\n"
        "def make(width, depth=1, act='relu'):\n"
        "    layers = [torch.nn.Linear(width, width) for _ in range(depth)]\n"
        "    return torch.nn.Sequential(*layers)\n"
    )
    loaded = load_model(f"{path}:make(8, depth=3)", inputs=["2x8"])
    assert len(loaded.module) == 3 and loaded.module[0].in_features == 8
    assert parse_spec("torch.nn:Linear(4, 8, bias=False)").args == (4, 8)
    assert load_model("torch.nn:Linear(4, 8, bias=False)").module.bias is None


@pytest.mark.parametrize(
    "spec, message",
    [
        ("torch.nn:Linear(os.getcwd())", "must be Python literals"),
        ("torch.nn:Linear(4,, 8)", "not valid Python"),
        ("torch.nn:Linear(*sizes)", r"no \*args"),
        ("torch.nn:Linear", r"Calling Linear\(\) failed.*Give the arguments in the spec"),
        ("hf:", "names no model"),
    ],
)
def test_bad_arguments_are_refused_with_what_to_write(spec, message):
    with pytest.raises(LoadError, match=message):
        load_model(spec)


def test_fx_failure_offers_the_export_frontend_when_it_works(write_model):
    path = write_model(SIZE_BRANCH)
    with pytest.raises(CaptureError) as info:
        open_document(OpenRequest(f"{path}:Net", "fx"))
    assert info.value.alternative == OpenRequest(f"{path}:Net", "export")
    assert f"fxstudio show {path}:Net --frontend export" in str(info.value)
    assert len(open_document(info.value.alternative).rows()) > 2
    with pytest.raises(CaptureError) as branchy:  # export cannot follow it either: no offer
        open_document(OpenRequest("examples:branchy", "fx"))
    assert branchy.value.alternative is None and "--frontend export\n" not in str(branchy.value)


# --- transformers, from configs ----------------------------------------------------------------

TINY = {
    "llama": "num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, "
    "num_key_value_heads=2, vocab_size=1000",
    "gpt2": "n_layer=2, n_embd=64, n_head=4, vocab_size=1000",
    "bert": "num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4, "
    "vocab_size=1000",
    "t5": "num_layers=2, d_model=64, d_ff=128, num_heads=4, d_kv=16, vocab_size=1000",
}


@needs_transformers
@pytest.mark.parametrize("kind", sorted(TINY))
def test_hf_models_open_show_shapes_and_round_trip(kind, tmp_path):
    doc = open_document(f"hf:{kind}({TINY[kind]})")
    assert doc.request.frontend == "export"  # chosen for the user
    note = doc.notes[0]
    assert note.startswith(f"hf:{kind}: ") and "random weights" in note
    assert "input_ids 1x16:int64" in note and "export frontend" in note
    if kind != "bert":  # BERT has no cache
        assert "use_cache=False" in note
    if kind == "t5":
        assert "encoder" in note
    shaped = [r for r in doc.rows() if r.shape]
    assert len(shaped) > 30 and any(r.shape == "1x16x64" for r in doc.rows())
    out = tmp_path / f"{kind}.py"
    export(doc, out)
    check = verify_standalone(out, doc)
    assert check.ok, check


@needs_transformers
def test_hf_names_that_are_not_models_say_what_is():
    with pytest.raises(LoadError, match="Did you mean: llama"):
        load_model("hf:lama")


@needs_transformers
def test_hf_model_too_big_for_this_machine_opens_structure_only_instead():
    """Sized on the meta device first: its weights (hundreds of GB) are never allocated, and
    it opens without them, saying so (issue 38; it used to be refused)."""
    loaded = load_model("hf:llama(num_hidden_layers=400, hidden_size=8192)")
    assert all(p.is_meta for p in loaded.module.parameters())
    assert "no weights: structure only" in loaded.notes[0]
    assert "would not fit in the" in loaded.notes[0]


@needs_transformers
def test_a_cache_in_the_outputs_names_the_cause_and_the_fix(write_model):
    path = write_model(
        "import torch\n"
        "from transformers import LlamaConfig, LlamaModel\n"
        "def make():\n"
        "    c = LlamaConfig(num_hidden_layers=1, hidden_size=32, intermediate_size=64,\n"
        "                    num_attention_heads=4, num_key_value_heads=2, vocab_size=100)\n"
        "    return LlamaModel(c).eval()\n"
        "def example_inputs():\n    return (torch.randint(0, 10, (1, 8)),)\n"
    )
    with pytest.raises(CaptureError) as info:
        open_document(OpenRequest(f"{path}:make", "export"))
    text = str(info.value)
    assert "transformers cache object (DynamicCache)" in text and "use_cache=False" in text
    assert "--input" not in text.split("\n", 2)[-1]  # no advice that does not apply


# --- timm ------------------------------------------------------------------------------------


def _timm_imports() -> bool:
    try:
        import timm  # noqa: F401
    except Exception:
        return False
    return True


needs_timm = pytest.mark.skipif(
    not _timm_imports(), reason="timm does not import (it needs a torchvision built for this torch)"
)


@needs_timm
@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["vit_tiny_patch16_224", "convnext_atto", "efficientnet_b0", "swin_tiny_patch4_window7_224"],
)
def test_timm_models_open_show_shapes_and_round_trip(name, tmp_path):
    doc = open_document(f"timm:{name}")
    assert doc.notes[0].startswith(f"timm:{name}: ") and "pretrained=False" in doc.notes[0]
    assert doc.example_inputs[0].shape == (1, 3, 224, 224)
    assert len([r for r in doc.rows() if r.shape]) > 20
    with torch.no_grad():
        assert doc.graph_module(*doc.example_inputs).shape == (1, 1000)
    out = tmp_path / "m.py"
    export(doc, out)
    assert verify_standalone(out, doc).ok


@needs_timm
def test_timm_arguments_and_unknown_names():
    doc = open_document("timm:convnext_atto(num_classes=10)")
    with torch.no_grad():
        assert doc.graph_module(*doc.example_inputs).shape == (1, 10)
    with pytest.raises(LoadError, match="Did you mean: convnext_atto"):
        load_model("timm:convnext_atoo")


@needs_timm
@pytest.mark.slow
def test_timm_same_padding_branch_offers_export():
    with pytest.raises(CaptureError) as info:
        open_document(OpenRequest("timm:tf_efficientnetv2_b0", "fx"))
    assert info.value.alternative is not None
    assert "fxstudio show timm:tf_efficientnetv2_b0 --frontend export" in str(info.value)


def test_timm_missing_or_broken_says_what_to_install(monkeypatch):
    import fxstudio.core.model.zoo as zoo

    real = zoo.importlib.import_module

    def torchvision_broken(name, *args, **kwargs):
        if name == "timm":  # as timm fails beside a torch its torchvision was not built for
            raise ImportError("operator torchvision::nms does not exist", name="torchvision")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(zoo.importlib, "import_module", torchvision_broken)
    with pytest.raises(LoadError, match="torch==2.14.1 torchvision==0.29.1"):
        load_model("timm:convnext_atto")


@needs_transformers
def test_a_misspelt_override_names_the_key_it_meant():
    """``hf:gpt2(n_layers=2)`` opened the whole 12-layer GPT-2 without a word (#54):
    transformers keeps a setting it does not know as an attribute nothing reads."""
    with pytest.raises(LoadError) as refused:
        load_model("hf:gpt2(n_layers=2)")
    said = str(refused.value)
    assert said.startswith("'hf:gpt2(n_layers=2)': GPT2Config has no setting 'n_layers'.")
    assert "Did you mean n_layer" in said
    # the settings a config takes besides its fields, and its aliases, are known
    loaded = load_model('hf:gpt2(num_hidden_layers=1, attn_implementation="eager")')
    assert len(loaded.module.h) == 1
