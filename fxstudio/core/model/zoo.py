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
    ``main_input_name`` (:mod:`~fxstudio.core.model.hfinputs`): 16 token ids, an image or a
    clip of the config's size, or what the model type's feature extractor makes of one
    second of audio (Whisper: 80 mel bins x 3000 frames).  The model's one note says what
    was chosen.
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

import contextlib
import difflib
import importlib
import importlib.util
import inspect
import os
import re
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import torch
from torch import nn

from fxstudio.core.errors import LoadError
from fxstudio.core.graph.checkpoints import Checkpoint, few, find_checkpoint
from fxstudio.core.graph.weights import SMALL_BUFFER, building, to_meta
from fxstudio.core.model.hfinputs import example_input
from fxstudio.core.model.modelspec import (
    InputSpec,
    LoadedModel,
    ModelSpec,
    make_inputs,
)
from fxstudio.core.model.sizing import (
    build_within_memory,
    check_depth,
    depth_of,
    too_big_for_memory,
    weights_too_big,
)
from fxstudio.core.process.guard import SMALLER_MODEL, user_error


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

    def build() -> nn.Module:
        torch.manual_seed(seed)
        try:
            return timm.create_model(name, pretrained=False, **dict(ms.kwargs))
        except BaseException as exc:
            raise user_error(f"Building timm:{name}", exc, oom_hint=SMALLER_MODEL) from exc

    why = ""
    if weights:  # once, for real, if it fits (else structure only: model.sizing)
        model, too_big = build_within_memory(build)
        if too_big:
            model, weights, why = to_meta(model, SMALL_BUFFER), False, f": {too_big}"
    else:
        with building(False):
            model = build()
    model.eval()
    if inputs:
        example = make_inputs(inputs, seed, real=weights)
        chosen = ""
    else:
        cfg = getattr(model, "pretrained_cfg", None) or getattr(model, "default_cfg", {}) or {}
        size = tuple(cfg.get("input_size", (3, 224, 224)))
        example = make_inputs([InputSpec((1, *size))], seed, real=weights)
        chosen = f"; input 1x{'x'.join(map(str, size))} (its default size)"
    made = "random weights (pretrained=False)" if weights else f"no weights{why}"
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
                _check_overrides(ms, AutoConfig.from_pretrained(path), overrides)
                return AutoConfig.from_pretrained(path, **overrides), path
            base = AutoConfig.from_pretrained(folder, local_files_only=True)
            _check_overrides(ms, base, overrides)
            return AutoConfig.from_pretrained(folder, local_files_only=True, **overrides), folder
        types = hf_model_types()
        if name in types:
            _check_overrides(ms, AutoConfig.for_model(name), overrides)
            return AutoConfig.for_model(name, **overrides), f"a default {name} config"
        try:
            base = AutoConfig.from_pretrained(name, local_files_only=True)
        except OSError as exc:
            close = difflib.get_close_matches(name, types, n=5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise LoadError(
                f"'{name}' is not a transformers model type, a local folder or config.json, "
                f"or a hub id whose config is in the local cache.{hint} Model types: gpt2, "
                "llama, bert, t5, ... (transformers' CONFIG_MAPPING)."
            ) from exc
        _check_overrides(ms, base, overrides)
        return AutoConfig.from_pretrained(name, local_files_only=True, **overrides), name
    except LoadError:
        raise
    except BaseException as exc:
        raise user_error(f"Reading the config of hf:{name}", exc) from exc


#: What a configuration takes besides its fields: what ``PretrainedConfig`` reads from its
#: keyword arguments (transformers sets any other as an attribute nothing reads).
CONFIG_EXTRAS = ("attn_implementation", "torch_dtype", "num_labels", "dtype")


def _check_overrides(ms: ModelSpec, config: Any, overrides: dict[str, Any]) -> None:
    """Refuse an override the configuration does not know -- transformers would set it as
    an attribute nothing reads, and open the model as if it were not there -- naming the
    nearest keys it knows."""
    fields = {k for k in config.to_dict() if not k.startswith("_")}
    fields |= set(getattr(config, "attribute_map", {})) | set(CONFIG_EXTRAS)
    known = fields | {a for a in dir(type(config)) if not a.startswith("_")}
    for cls in type(config).__mro__:  # (keyword arguments of the config's own __init__)
        init = vars(cls).get("__init__")
        if init is not None:
            with contextlib.suppress(TypeError, ValueError):
                known |= set(inspect.signature(init).parameters)
    unknown = [key for key in overrides if key not in known]
    read = _read_by_model(config) if unknown else set()  # (its source read once)
    for key in unknown:
        if key not in read:
            close = difflib.get_close_matches(key, sorted(fields), n=3)
            mean = f" Did you mean {' or '.join(close)}?" if close else ""
            raise LoadError(
                f"'{ms.text}': {type(config).__name__} has no setting '{key}'.{mean} An "
                "override it does not know would be ignored, and the model opened without it. "
                f"Its settings: {', '.join(sorted(fields)[:40])}"
                + (", …" if len(fields) > 40 else "")
                + "."
            )


#: A setting the model's code reads: ``config.NAME``, ``getattr(config, "NAME", default)``.
_READ = re.compile(r"""config\.(\w+)|getattr\(\s*(?:self\.)?config\s*,\s*["'](\w+)""")


def _read_by_model(config: Any) -> set[str]:
    """The settings the model type's code reads (its ``modeling_*.py``, read as text): some
    it reads with a default are no field of its config (Qwen3-MoE's ``head_dim``)."""
    module = type(config).__module__.replace(".configuration_", ".modeling_")
    try:
        spec = importlib.util.find_spec(module)
        with open(spec.origin if spec and spec.origin else "", encoding="utf-8") as f:
            source = f.read()
    except (ImportError, OSError, ValueError):
        return set()
    return {a or b for a, b in _READ.findall(source)}


def _load_hf(ms: ModelSpec, inputs: Sequence[str], seed: int, weights: bool) -> LoadedModel:
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
    depth = depth_of(config, lambda probe: _from_config(ms, probe))
    if depth is not None:  # refused before it is built when it cannot be held
        with_weights = weights and not weights_too_big(depth.weight_bytes)
        check_depth(ms.text, depth, with_weights, lambda layers: _layers(ms, config, layers))
    model: nn.Module
    # built once, for real -- stopped before its weights would not fit -- unless the probes
    # say at once that they would not
    fits = depth is None or not weights_too_big(depth.weight_bytes)
    if weights and checkpoint is None and fits:

        def build() -> nn.Module:
            torch.manual_seed(seed)
            return _from_config(ms, config)

        expected = depth.weight_bytes if depth is not None else None
        model, too_big = build_within_memory(build, expected)
        if too_big:
            chosen.append(too_big)
            weights = False
            model = to_meta(model, SMALL_BUFFER)
    else:  # sized on meta (no memory, no time): structure only, or read from the checkpoint
        with building(False):
            sized = _from_config(ms, config)
        too_big = too_big_for_memory(sized) if weights else None
        if too_big:
            chosen.append(too_big)
            weights = False
        model = _from_checkpoint(config, checkpoint, chosen) if weights and checkpoint else sized
        if not weights:
            model = to_meta(model, SMALL_BUFFER)
    built = type(model).__name__
    if getattr(config, "is_encoder_decoder", False) and hasattr(model, "get_encoder"):
        model = model.get_encoder()  # type: ignore[operator]  # one graph from the main input
        built += " encoder"
    model.eval()
    if inputs:
        example = make_inputs(inputs, seed, real=weights)
        what = ""
    else:
        main_input, spec, why = example_input(model, config)
        if spec is None:
            example, what = (), f", no default for its {main_input} ({why}): give --input"
        else:
            example = make_inputs([InputSpec(spec.shape, spec.dtype)], seed, real=weights)
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


def _layers(ms: ModelSpec, config: Any, layers: int) -> str:
    """``hf:gpt2(n_layer=12)``: the spec with its layers' count set, in the key the user gave
    (or the model type's own)."""
    keys = {"num_hidden_layers", getattr(config, "attribute_map", {}).get("num_hidden_layers")}
    key = next((k for k, _ in ms.kwargs if k in keys), None)
    if key is None:
        key = getattr(config, "attribute_map", {}).get("num_hidden_layers", "num_hidden_layers")
    kwargs = [(k, v) for k, v in ms.kwargs if k != key] + [(key, layers)]
    return f"hf:{ms.location}({', '.join(f'{k}={v!r}' for k, v in kwargs)})"


def _from_config(ms: ModelSpec, config: Any) -> nn.Module:
    from transformers import AutoModel

    try:
        return AutoModel.from_config(config)
    except BaseException as exc:
        raise user_error(f"Building hf:{ms.location}", exc, oom_hint=SMALLER_MODEL) from exc


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
    return model


def _count(n: int) -> str:
    """A parameter count in words: ``124.4 M``, ``70.55 B``."""
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.1f} M"


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
