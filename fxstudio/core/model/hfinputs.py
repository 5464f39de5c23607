"""What a transformers model takes by default: an example of its main input
(``main_input_name``), made from its config -- token ids, an image or a clip of the config's
size, or what the model type's feature extractor makes of one second of audio.

Example:
    >>> from transformers import AutoConfig, AutoModel
    >>> config = AutoConfig.for_model("gpt2", n_layer=1)
    >>> name, spec, why = example_input(AutoModel.from_config(config), config)
    >>> name, spec.shape, why
    ('input_ids', (1, 16), 'tokens')
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple

import torch
from torch import nn


class InputSpec(NamedTuple):
    """An example input's shape and dtype (as ``--input`` gives them:
    :class:`fxstudio.core.model.modelspec.InputSpec`)."""

    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32


HF_SEQUENCE = 16  # example input_ids length (shorter where the model allows fewer positions)


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
