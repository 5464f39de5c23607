"""Every model family of 2026 opens, saves and rewrites out of the box (issue 35).

Each family of :mod:`tests.models.zoo_families` -- decoders, mixtures of experts, state-space
models, encoders, encoder-decoders (their encoder), vision, video and audio models as the
``hf:TYPE(overrides)`` spec a user types, and diffusers' DiT, SD3 and Flux transformers -- at
a tiny size (2 layers, hidden 32-64, random weights):

* opens as ``fxstudio show`` opens it (:func:`open_document`), with the default input of its
  modality (the note says which) and a shape on nearly every node;
* saves as a standalone ``.py`` that computes the editor's outputs bit for bit.  A fresh
  Python process costs 4-5 s (importing torch), so one or two of each kind (``Family.fresh``:
  gpt2, llama, mixtral, qwen3_moe, mamba, t5, whisper, vit, dinov2, wav2vec2, dit) are checked
  as ``fxstudio export --verify`` checks them (:func:`verify_standalone`: a fresh process that
  cannot import fxstudio, on one thread and on all); the others are imported into this
  process and run on one thread;
* ``fuse-attention`` (as the window and ``fxstudio rewrite`` run it) fuses one attention per
  layer with the numerical check passing, or its report says why not: no attention (0
  matches), or attention SDPA cannot compute the same (fused already, soft-capped).

About 2 minutes on 2 cores.
"""

import importlib.util
import sys

import pytest
import torch

from fxstudio.core.fxcompat import tree_leaves
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.model.hfinputs import example_input
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.saving.export import export
from fxstudio.core.saving.verify import (
    compare_outputs,
    one_thread,
    reference_outputs,
    verify_standalone,
)
from fxstudio.core.sessions.documents import open_document
from tests.models.zoo_families import FAMILIES, Family

needs = {
    lib: pytest.mark.skipif(importlib.util.find_spec(lib) is None, reason=f"needs {lib}")
    for lib in ("transformers", "diffusers")
}


def _param(family: Family):
    lib = "transformers" if family.spec.startswith("hf:") else "diffusers"
    return pytest.param(family, id=family.name, marks=needs[lib])


@pytest.mark.parametrize("family", [_param(f) for f in FAMILIES])
def test_family_opens_saves_and_fuses_attention(family, tmp_path):
    doc = open_document(OpenRequest(family.spec, family.frontend))
    rows = doc.rows()
    shaped = [r for r in rows if r.shape]
    assert len(rows) > 50 and len(shaped) >= 0.85 * len(rows), f"{len(shaped)}/{len(rows)}"
    if family.main_input:
        assert f", {family.main_input} (" in doc.notes[0], doc.notes[0]

    out = tmp_path / f"{family.name}.py"
    export(doc, out)
    if family.fresh:
        saved = verify_standalone(out, doc)
        assert saved.ok, saved
    else:
        compared = compare_outputs(_run_saved(out, doc.example_inputs), reference_outputs(doc))
        assert compared.bitwise_equal, compared.describe()

    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    lines = report.describe()
    text = "\n".join(lines)
    fused, found = len(report.result.replaced), report.result.found
    if family.fuses:
        assert fused == family.fuses, text
        assert report.check is not None and report.check.ok, text
    elif family.fuses == 0:  # no attention written out: no candidate, and what was looked for
        assert fused == 0 and not found.matches and found.absent, text
        assert found.absent in lines[0], text
    else:  # attention left as it is, each with its reason: skipped, or fused already
        assert fused == 0 and (report.result.skipped or found.skipped or found.warnings), text


def _run_saved(path, inputs) -> list[torch.Tensor]:
    """The saved module imported into this process, run on one thread."""
    name = f"saved_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        model = module.load()
        with torch.no_grad(), one_thread():
            out = model(*inputs)
    finally:
        del sys.modules[name]
    return [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]


# --- the default input of each modality, from the config (nothing built) ---------------------


@needs["transformers"]
@pytest.mark.parametrize(
    "model_type, overrides, name, shape",
    [
        ("whisper", {}, "input_features", (1, 80, 3000)),  # 30 s of 10 ms mel frames
        ("whisper", {"num_mel_bins": 128}, "input_features", (1, 128, 3000)),  # large-v3
        ("speech_to_text", {}, "input_features", (1, 98, 80)),  # frames x mel bins
        (
            "audio-spectrogram-transformer",
            {"max_length": 64, "num_mel_bins": 32},
            "input_values",
            (1, 64, 32),
        ),
        ("wav2vec2", {}, "input_values", (1, 16000)),  # one second of raw audio
        ("vit", {"image_size": 96, "num_channels": 1}, "pixel_values", (1, 1, 96, 96)),
        ("timesformer", {}, "pixel_values", (1, 8, 3, 224, 224)),  # 8 frames
        ("vjepa2", {}, "pixel_values_videos", (1, 64, 3, 256, 256)),
        ("llama", {"max_position_embeddings": 8}, "input_ids", (1, 8)),
    ],
)
def test_the_default_input_follows_the_modality_and_the_config(model_type, overrides, name, shape):
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_MAPPING

    config = AutoConfig.for_model(model_type, **overrides)
    model_class = MODEL_MAPPING[type(config)]  # main_input_name is a class attribute
    main, spec, why = example_input(model_class, config)
    assert (main, spec.shape) == (name, shape), why
