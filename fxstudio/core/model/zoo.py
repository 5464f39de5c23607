"""The models people have by name: ``timm:NAME`` and ``hf:NAME``, with random weights.

``timm:NAME(args)``
    any ``timm.list_models()`` name, built with ``timm.create_model(NAME, pretrained=False,
    **args)``; the example input is one image of the model's default input size.
``hf:NAME(overrides)``
    a transformers model: a model type (``hf:gpt2``, ``hf:llama``, ``hf:bert``, ``hf:t5``:
    ``AutoConfig.for_model``), a local folder or ``config.json``, or a hub id whose config is
    in the local cache (nothing is downloaded).  ``overrides`` change the config
    (``hf:llama(num_hidden_layers=2, hidden_size=256)``).  The base model is built
    (``AutoModel.from_config``; the encoder of an encoder-decoder such as T5 or Whisper) with
    defaults that make capture work: ``use_cache=False`` (no cache object in the outputs)
    and the export frontend.  Its outputs stay what the config says (a ``ModelOutput``:
    torch.export takes it apart as the pytree transformers registers, and a saved ``.py``
    returns its fields as a dict) -- ``return_dict=False`` would break models whose code reads
    their submodules' outputs by name (DINOv2, ConvNeXt).  The example input is the model's
    ``main_input_name`` (:func:`example_input`): 16 token ids, an image or a clip of the
    config's size, or what the model type's feature extractor makes of one second of audio
    (Whisper: 80 mel bins x 3000 frames).  The model's one note says what was chosen.
    A folder that holds safetensors weights as well (a checkpoint in the Hugging Face layout:
    ``model.safetensors``, or shards with ``model.safetensors.index.json``) opens with them
    (``AutoModel.from_pretrained``: its shards, its names' prefix, its dtype) -- so does a hub
    id whose snapshot in the local cache holds them; a name the model
    has and the checkpoint lacks, or holds at another shape, is refused with its name.  When
    they would not fit (or without weights) it opens structure only without reading a shard,
    and remembers the folder (``LoadedModel.checkpoint``) to read one module's weights from.

``torchvision.models:NAME`` builds as any factory does; without ``--input`` its example is
what the builder's weights were trained on (:func:`torchvision_input`).

Other weights are random (``torch.manual_seed(seed)`` first): a graph editor needs the
architecture, and this machine may reach no hub.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import os
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import torch
from torch import nn

from fxstudio.core.errors import LoadError
from fxstudio.core.graph.checkpoints import Checkpoint, few, find_checkpoint
from fxstudio.core.graph.weights import SMALL_BUFFER, building, to_meta
from fxstudio.core.model.modelspec import (
    InputSpec,
    LoadedModel,
    ModelSpec,
    make_inputs,
    too_big_for_memory,
)
from fxstudio.core.process.guard import SMALLER_MODEL, user_error

HF_SEQUENCE = 16  # example input_ids length (shorter where the model allows fewer positions)


def load(ms: ModelSpec, inputs: Sequence[str], seed: int, weights: bool = True) -> LoadedModel:
    """Build a ``timm:`` or ``hf:`` model and its example inputs (without ``weights``: on the
    meta device, :mod:`fxstudio.core.graph.weights`)."""
    if ms.kind == "timm":
        return _load_timm(ms, inputs, seed, weights)
    return _load_hf(ms, inputs, seed, weights)


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


def _load_timm(ms: ModelSpec, inputs: Sequence[str], seed: int, weights: bool) -> LoadedModel:
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
        with building(weights):
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
    made = "random weights (pretrained=False)" if weights else "no weights"
    note = f"timm:{name}: {type(model).__name__}, {made}{chosen}"
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


def _load_hf(ms: ModelSpec, inputs: Sequence[str], seed: int, weights: bool) -> LoadedModel:
    from transformers import AutoModel

    config, origin = _config(ms)
    checkpoint = _checkpoint(ms)
    given = dict(ms.kwargs)
    chosen = []
    if checkpoint is not None and getattr(config, "dtype", None) is None:
        config.dtype = checkpoint.floating_dtype()  # as from_pretrained's "auto" would
    if "use_cache" not in given and getattr(config, "use_cache", False):
        config.use_cache = False  # a cache object in the outputs stops torch.export
        chosen.append("use_cache=False")
    # return_dict stays as the config says: the model's own code reads its submodules'
    # outputs by name (DINOv2's encoder_outputs.last_hidden_state), and torch.export takes
    # a ModelOutput apart as a pytree (transformers registers every one), so the graph
    # returns its fields' tensors and a saved .py returns them as a dict.
    with building(False):  # how big is it? (no memory, no time)
        try:
            sized = AutoModel.from_config(config)
        except BaseException as exc:
            raise user_error(f"Building hf:{ms.location}", exc) from exc
    too_big = too_big_for_memory(sized) if weights else None
    if too_big:
        chosen.append(too_big)
        weights = False
    # without weights: the model built on meta to size it (its small weights made meta too)
    model: nn.Module = sized if weights else to_meta(sized, SMALL_BUFFER)
    if weights:
        torch.manual_seed(seed)
        if checkpoint is not None:
            model = _from_checkpoint(config, checkpoint, chosen)
        else:
            try:
                model = AutoModel.from_config(config)
            except BaseException as exc:
                raise user_error(f"Building hf:{ms.location}", exc, oom_hint=SMALLER_MODEL) from exc
    built = type(model).__name__
    if getattr(config, "is_encoder_decoder", False) and hasattr(model, "get_encoder"):
        model = model.get_encoder()  # type: ignore[operator]  # one graph from the main input
        built += " encoder"
    model.eval()
    if inputs:
        example = make_inputs(inputs, seed)
        what = ""
    else:
        main_input, spec, why = example_input(model, config)
        if spec is None:
            example, what = (), f", no default for its {main_input} ({why}): give --input"
        else:
            example = make_inputs([spec], seed)
            shape = "x".join(map(str, spec.shape))
            what = f", {main_input} {shape}:{str(spec.dtype)[6:]} ({why})"
    params = sum(p.numel() for p in model.parameters())
    made = "random weights" if weights else "no weights: structure only"
    if checkpoint is not None:
        made = (
            f"weights from {checkpoint.describe()}"
            if weights
            else f"no weights: structure only; a module's weights from {checkpoint.describe()}"
        )
    note = (
        f"hf:{ms.location}: {built} from {origin} ({_count(params)} parameters, {made}), "
        f"{', '.join(chosen + ['export frontend'])}{what}"
    )
    folder = checkpoint.folder if checkpoint is not None else None
    return LoadedModel(
        ms, model, example, seed=seed, frontend="export", notes=[note], checkpoint=folder
    )


def _checkpoint(ms: ModelSpec) -> Checkpoint | None:
    """The safetensors checkpoint of a ``hf:FOLDER`` (or ``hf:FOLDER/config.json``) spec,
    or of a hub id whose files are in the local cache (the snapshot its config.json is in);
    ``None`` for other specs and a folder without one (its listing and index read, no shard)."""
    path = os.path.expanduser(ms.location)
    if os.path.isfile(path) and os.path.basename(path) == "config.json":
        path = os.path.dirname(path) or "."
    elif not os.path.exists(path) and ms.location.count("/") == 1:  # a hub id: its cached files
        from huggingface_hub import try_to_load_from_cache

        config = try_to_load_from_cache(ms.location, "config.json")
        path = os.path.dirname(config) if isinstance(config, str) else path
    return find_checkpoint(path) if os.path.isdir(path) else None


def _from_checkpoint(config: Any, checkpoint: Checkpoint, chosen: list[str]) -> nn.Module:
    """The base model with the checkpoint's weights (transformers reads the shards, maps
    the names' prefix, keeps the dtype); a weight the model has and the checkpoint lacks or
    holds at another shape is a :class:`LoadError` naming it, names only the checkpoint has
    (a head the base model lacks) are said in ``chosen``."""
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    where = checkpoint.describe()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # its "Loading weights" bar on stderr
    try:
        model, info = AutoModel.from_pretrained(
            checkpoint.folder,
            config=config,
            local_files_only=True,
            output_loading_info=True,
            ignore_mismatched_sizes=True,  # said below, by name
        )
    except BaseException as exc:
        raise user_error(f"Reading the checkpoint {where}", exc, oom_hint=SMALLER_MODEL) from exc
    finally:
        if bars:
            hf_logging.enable_progress_bar()
    mismatched = sorted(
        f"{name} {tuple(stored)} instead of {tuple(own)}"
        for name, stored, own in info.get("mismatched_keys") or ()
    )
    missing = sorted(info.get("missing_keys") or ())
    if mismatched or missing:
        said = []
        if missing:
            said.append(f"has no {few(missing)} ({len(missing)} weights of the model)")
        if mismatched:
            said.append(f"holds {few(mismatched)} at another shape")
        raise LoadError(
            f"The checkpoint {where} {' and '.join(said)}. Its config.json does not describe "
            "its weights: save the model again with save_pretrained (config and weights "
            "together), or open the folder with --no-weights to see its structure."
        )
    unexpected = sorted(info.get("unexpected_keys") or ())
    if unexpected:
        chosen.append(
            f"{len(unexpected)} checkpoint tensors not in the base model left out "
            f"({few(unexpected)})"
        )
    return model  # type: ignore[no-any-return]


def _count(n: int) -> str:
    """A parameter count in words: ``124.4 M``, ``70.55 B``."""
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.1f} M"


def example_input(model: nn.Module, config: Any) -> tuple[str, InputSpec | None, str]:
    """The model's main input (``model.main_input_name``), an example of it and, in words,
    where its shape came from -- ``None`` when there is no sensible default.

    * ``input_ids``: 16 tokens (fewer where the model has fewer positions);
    * ``pixel_values``: one image of ``config.image_size`` with ``num_channels``; a clip of
      ``num_frames`` frames (1 x T x C x H x W) for a video model (VideoMAE, TimeSformer,
      ViViT), as is ``pixel_values_videos`` (V-JEPA 2: ``frames_per_clip``, ``crop_size``);
    * ``input_features`` and ``input_values`` (audio): what the model type's feature extractor
      makes of one second of audio -- its layout and frame count (Whisper's pads to 30 s:
      80 x 3000 mel frames; Speech2Text's is frames x 80; the Audio Spectrogram Transformer's
      1024 x 128; raw audio for wav2vec2 and HuBERT is 16000 samples) -- with the sizes the
      config sets (``num_mel_bins``, Whisper's ``2 * max_source_positions`` frames).
    """
    name = getattr(model, "main_input_name", "input_ids")
    if isinstance(name, (list, tuple)):  # OneFormer: ["pixel_values", "task_inputs"]
        name = name[0]
    if name in ("input_ids", "decoder_input_ids"):
        limits = [
            getattr(config, k, None) for k in ("max_position_embeddings", "n_positions", "n_ctx")
        ]
        longest = min((v for v in limits if isinstance(v, int) and v > 0), default=HF_SEQUENCE)
        return name, InputSpec((1, min(HF_SEQUENCE, longest)), torch.int64), "tokens"
    if name in ("pixel_values", "pixel_values_videos"):
        return (name, *_pixels(config, video=name == "pixel_values_videos"))
    if name in ("input_features", "input_values"):
        return (name, *_audio(config, name))
    return name, None, "fxstudio knows no example for it"


def _first(config: Any, *names: str) -> Any:
    return next((v for v in (getattr(config, n, None) for n in names) if v is not None), None)


def _pixels(config: Any, video: bool) -> tuple[InputSpec, str]:
    size = _first(config, "image_size", "crop_size") or 224
    if isinstance(size, dict):  # {"height": ..., "width": ...}
        size = (size.get("height", 224), size.get("width", 224))
    h, w = (size, size) if isinstance(size, int) else (size[0], size[-1])
    channels = _first(config, "num_channels", "in_chans") or 3
    frames = _first(config, "num_frames", "frames_per_clip")
    if video or isinstance(frames, int):
        t = frames if isinstance(frames, int) else 16
        return InputSpec((1, t, channels, h, w)), f"a clip of {t} frames of the config's size"
    return InputSpec((1, channels, h, w)), "an image of the config's size"


def _audio(config: Any, name: str) -> tuple[InputSpec, str]:
    """The feature extractor's output for one second of audio, resized as the config says;
    without one, a second at 16 kHz (raw) or 100 frames of the config's width (features)."""
    probed = _feature_extractor_shape(config, name)
    width = _feature_width(config)
    if probed is None:
        if name == "input_values":
            return InputSpec((1, 16000)), "one second of audio at 16 kHz"
        return InputSpec((1, 100, width or 80)), "100 frames (one second) of its features"
    shape, time_axis, fixed, extractor = probed
    why = f"{extractor}'s output for one second of audio"
    if len(shape) == 3 and time_axis in (1, 2):
        shape[3 - time_axis] = width or shape[3 - time_axis]
        source_positions = getattr(config, "max_source_positions", None)
        if fixed and isinstance(source_positions, int):
            # Whisper's extractor pads to 30 s (3000 frames); its encoder's two convolutions
            # halve them to max_source_positions and it refuses any other length.
            shape[time_axis] = 2 * source_positions
            why = f"{extractor}'s layout, 2 * max_source_positions frames"
    return InputSpec(tuple(shape)), why


def _feature_width(config: Any) -> int | None:
    """The width of one frame of features the model's first layer takes, per its config."""
    width = _first(config, "num_mel_bins", "feature_projection_input_dim")
    if isinstance(width, int):
        return width
    per_channel = getattr(config, "input_feat_per_channel", None)  # Speech2Text
    if isinstance(per_channel, int):
        return per_channel * int(getattr(config, "input_channels", 1) or 1)
    return None


def _feature_extractor_shape(
    config: Any, name: str
) -> tuple[list[int], int | None, bool, str] | None:
    """``(shape, time axis, pads to a fixed length, class name)`` of ``name`` as the model
    type's feature extractor makes it from one second of audio (built with the options the
    config shares with it, e.g. the Audio Spectrogram Transformer's ``max_length``)."""
    try:
        import numpy as np
        from transformers.models.auto.feature_extraction_auto import (
            FEATURE_EXTRACTOR_MAPPING_NAMES,
            feature_extractor_class_from_name,
        )

        class_name = FEATURE_EXTRACTOR_MAPPING_NAMES.get(getattr(config, "model_type", ""))
        cls = feature_extractor_class_from_name(class_name) if class_name else None
        if cls is None:
            return None
        accepted = inspect.signature(cls.__init__).parameters
        own = getattr(type(config), "__annotations__", {})
        shared = {k: getattr(config, k) for k in ("num_mel_bins", "max_length") if k in own}
        extractor = cls(**{k: v for k, v in shared.items() if k in accepted})
        rate = int(getattr(extractor, "sampling_rate", 16000) or 16000)
        noise = np.random.default_rng(0).standard_normal(2 * rate).astype(np.float32) * 0.1

        def shape(seconds: int) -> list[int]:
            made = extractor(noise[: seconds * rate], sampling_rate=rate, return_tensors="np")
            return list(made[name].shape)

        one = shape(1)
        fixed = isinstance(getattr(extractor, "nb_max_frames", None), int)  # Whisper's
        if fixed:
            frames = extractor.nb_max_frames
            time_axis = one.index(frames) if frames in one[1:] else None
        else:
            two = shape(2)
            changed = [i for i in range(1, len(one)) if one[i] != two[i]]
            time_axis = changed[0] if len(changed) == 1 else None
        return [1, *one[1:]], time_axis, fixed, cls.__name__
    except Exception:  # noqa: BLE001 - no extractor, or one that needs a missing library
        return None


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
