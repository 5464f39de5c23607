"""The models people have by name: ``timm:NAME`` and ``hf:NAME``, with random weights.

``timm:NAME(args)``
    any ``timm.list_models()`` name, built with ``timm.create_model(NAME, pretrained=False,
    **args)``; the example input is one image of the model's default input size.
``hf:NAME(overrides)``
    a transformers model: a model type (``hf:gpt2``, ``hf:llama``, ``hf:bert``, ``hf:t5``:
    ``AutoConfig.for_model``), a local folder or ``config.json``, or a hub id whose config is
    in the local cache (nothing is downloaded).  ``overrides`` change the config
    (``hf:llama(num_hidden_layers=2, hidden_size=256)``).  The base model is built
    (``AutoModel.from_config``; the encoder of an encoder-decoder such as T5) with defaults
    that make capture work: ``use_cache=False`` (no cache object in the outputs), plain tuple
    outputs, the export frontend, and ``input_ids`` of 16 tokens (or an image / a second of
    audio for vision and audio models).  The model's one note says what was chosen.

``torchvision.models:NAME`` builds as any factory does; without ``--input`` its example is
what the builder's weights were trained on (:func:`torchvision_input`).

Weights are random (``torch.manual_seed(seed)`` first): a graph editor needs the
architecture, and this machine may reach no hub.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import torch
from torch import nn

from fxstudio.core.errors import LoadError
from fxstudio.core.guard import SMALLER_MODEL, available_memory, out_of_memory, user_error
from fxstudio.core.modelspec import InputSpec, LoadedModel, ModelSpec, make_inputs

HF_SEQUENCE = 16  # example input_ids length (shorter where the model allows fewer positions)


def load(ms: ModelSpec, inputs: Sequence[str], seed: int) -> LoadedModel:
    """Build a ``timm:`` or ``hf:`` model and its example inputs."""
    return _load_timm(ms, inputs, seed) if ms.kind == "timm" else _load_hf(ms, inputs, seed)


def _import(name: str, install: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if exc.name == name:
            raise LoadError(f"{name} is not installed. Install it: {install}") from exc
        raise LoadError(
            f"{name} is installed but does not import: {exc}. {install}"
            + (
                " timm imports torchvision, which must be built for this very torch: install "
                "a pair that match, e.g. pip install torch==2.14.1 torchvision==0.29.1."
                if name == "timm"
                else ""
            )
        ) from exc
    except Exception as exc:
        raise LoadError(f"{name} does not import: {type(exc).__name__}: {exc}") from exc


# --- timm ------------------------------------------------------------------------------------


def timm_names() -> list[str]:
    """Every ``timm:`` name, or ``[]`` when timm does not import."""
    try:
        import timm

        return list(timm.list_models())
    except Exception:  # not installed, or broken (no torchvision for this torch)
        return []


def _load_timm(ms: ModelSpec, inputs: Sequence[str], seed: int) -> LoadedModel:
    timm = _import("timm", "pip install timm.")
    name = ms.location
    base = name.split(".", 1)[0]  # "vit_small_patch16_224.augreg_in21k": a pretrained tag
    known = timm.list_models()
    if base not in known:
        close = difflib.get_close_matches(base, known, n=5)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise LoadError(
            f"timm has no model '{name}'.{hint} timm.list_models() lists them "
            f"({len(known)} here), e.g. timm:convnext_atto."
        )
    if ms.args:
        raise LoadError(
            f"'{ms.text}': give timm's options by name, e.g. timm:{name}(num_classes=10)."
        )
    torch.manual_seed(seed)
    try:
        model = timm.create_model(name, pretrained=False, **dict(ms.kwargs))
    except BaseException as exc:
        raise user_error(f"Building timm:{name}", exc, oom_hint=SMALLER_MODEL) from exc
    model.eval()
    if inputs:
        example = make_inputs(inputs, seed)
        chosen = ""
    else:
        cfg = getattr(model, "pretrained_cfg", None) or getattr(model, "default_cfg", {}) or {}
        size = tuple(cfg.get("input_size", (3, 224, 224)))
        example = make_inputs([InputSpec((1, *size))], seed)
        chosen = f"; input 1x{'x'.join(map(str, size))} (its default size)"
    note = f"timm:{name}: {type(model).__name__}, random weights (pretrained=False){chosen}"
    return LoadedModel(ms, model, example, seed=seed, notes=[note])


# --- transformers ----------------------------------------------------------------------------


def hf_model_types() -> list[str]:
    """Every ``hf:`` model type, or ``[]`` when transformers does not import."""
    try:
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    except Exception:
        return []
    return sorted(CONFIG_MAPPING.keys())


def _config(ms: ModelSpec) -> tuple[Any, str]:
    """The config a ``hf:`` spec names, and where it came from (for the note)."""
    _import("transformers", "pip install transformers.")
    from transformers import AutoConfig

    if ms.args:
        raise LoadError(f"'{ms.text}': give config overrides by name, e.g. hf:gpt2(n_layer=2).")
    name, overrides = ms.location, dict(ms.kwargs)
    path = os.path.expanduser(name)
    try:
        if os.path.isdir(path) or (path.endswith(".json") and os.path.isfile(path)):
            folder = os.path.dirname(path) if os.path.isfile(path) else path
            if os.path.isfile(path) and os.path.basename(path) != "config.json":
                return AutoConfig.from_pretrained(path, **overrides), path
            return AutoConfig.from_pretrained(folder, local_files_only=True, **overrides), folder
        types = hf_model_types()
        if name in types:
            return AutoConfig.for_model(name, **overrides), f"a default {name} config"
        try:
            return AutoConfig.from_pretrained(name, local_files_only=True, **overrides), name
        except OSError as exc:
            close = difflib.get_close_matches(name, types, n=5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise LoadError(
                f"'{name}' is not a transformers model type, a local folder or config.json, "
                f"or a hub id whose config is in the local cache.{hint} Model types: gpt2, "
                "llama, bert, t5, ... (transformers' CONFIG_MAPPING)."
            ) from exc
    except LoadError:
        raise
    except BaseException as exc:
        raise user_error(f"Reading the config of hf:{name}", exc) from exc


def _load_hf(ms: ModelSpec, inputs: Sequence[str], seed: int) -> LoadedModel:
    from transformers import AutoModel

    config, origin = _config(ms)
    given = dict(ms.kwargs)
    chosen = []
    if "use_cache" not in given and getattr(config, "use_cache", False):
        config.use_cache = False  # a cache object in the outputs stops torch.export
        chosen.append("use_cache=False")
    if "return_dict" not in given:
        config.return_dict = False  # plain tuples out
        chosen.append("tuple outputs")
    with torch.device("meta"):  # how big is it? (no memory, no time)
        try:
            sized = AutoModel.from_config(config)
        except BaseException as exc:
            raise user_error(f"Building hf:{ms.location}", exc) from exc
    _check_size(ms, sized, type(config).__name__)
    torch.manual_seed(seed)
    try:
        model: nn.Module = AutoModel.from_config(config)
    except BaseException as exc:
        raise user_error(f"Building hf:{ms.location}", exc, oom_hint=SMALLER_MODEL) from exc
    built = type(model).__name__
    if getattr(config, "is_encoder_decoder", False) and hasattr(model, "get_encoder"):
        model = model.get_encoder()  # type: ignore[operator]  # one graph from input_ids
        built += " encoder"
    model.eval()
    main_input = getattr(model, "main_input_name", "input_ids")
    if inputs:
        example = make_inputs(inputs, seed)
        what = ""
    else:
        spec = _example_input(config, main_input)
        example = make_inputs([spec], seed)
        what = f", {main_input} {'x'.join(map(str, spec.shape))}:{str(spec.dtype)[6:]}"
    params = sum(p.numel() for p in model.parameters())
    note = (
        f"hf:{ms.location}: {built} from {origin} ({params / 1e6:.1f} M parameters, random "
        f"weights), {', '.join(chosen + ['export frontend'])}{what}"
    )
    return LoadedModel(ms, model, example, seed=seed, frontend="export", notes=[note])


def _check_size(ms: ModelSpec, sized: nn.Module, config_name: str) -> None:
    need = sum(p.numel() * p.element_size() for p in sized.parameters())
    need += sum(b.numel() * b.element_size() for b in sized.buffers())
    avail = available_memory()
    if avail is not None and need > 0.8 * avail:
        raise out_of_memory(
            f"building hf:{ms.location} ({type(sized).__name__} from a {config_name})",
            need,
            None,
            "Give a smaller configuration, e.g. "
            f"hf:{ms.location}(num_hidden_layers=2, hidden_size=256) (the names are the "
            "config's).",
        )


def _example_input(config: Any, main_input: str) -> InputSpec:
    """A sensible example for the model's main input."""
    if main_input == "pixel_values":
        size = getattr(config, "image_size", 224)
        h, w = (size, size) if isinstance(size, int) else tuple(size)
        return InputSpec((1, getattr(config, "num_channels", 3), h, w))
    if main_input == "input_values":  # audio: one second at 16 kHz
        return InputSpec((1, 16000))
    limits = [getattr(config, k, None) for k in ("max_position_embeddings", "n_positions", "n_ctx")]
    longest = min((v for v in limits if isinstance(v, int) and v > 0), default=HF_SEQUENCE)
    return InputSpec((1, min(HF_SEQUENCE, longest)), torch.int64)


# --- torchvision -----------------------------------------------------------------------------


def torchvision_input(ms: ModelSpec) -> tuple[InputSpec, str] | None:
    """For a ``torchvision.models`` builder: the input its weights were trained on, from their
    metadata -- one image of the crop size (224; 299 for inception_v3), a 16-frame clip for a
    video model, the resize size for segmentation -- and a note saying so.  ``None`` when the
    builder has no such weights (detection models take lists of images)."""
    if ms.kind != "module" or not ms.location.startswith("torchvision.models"):
        return None
    try:
        weights = importlib.import_module("torchvision.models").get_model_weights(ms.name)
        default = getattr(weights, "DEFAULT", None) or next(iter(weights))
        transform = default.transforms()
    except Exception:  # not a registered builder, no weights, no torchvision
        return None
    kind = type(transform).__name__
    crop = getattr(transform, "crop_size", None) or getattr(transform, "resize_size", None)
    if not crop or kind not in (
        "ImageClassification",
        "VideoClassification",
        "SemanticSegmentation",
    ):
        return None
    h, w = (crop[0], crop[-1]) if isinstance(crop, (list, tuple)) else (crop, crop)
    shape = (1, 3, 16, h, w) if kind == "VideoClassification" else (1, 3, h, w)
    text = "x".join(map(str, shape))
    return InputSpec(shape), (
        f"{ms.location}:{ms.name}: input {text} (what {default} was trained on; "
        "--input to give another)"
    )
