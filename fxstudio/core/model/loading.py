"""Turn a MODEL spec (:mod:`fxstudio.core.model.modelspec`) into an ``nn.Module`` and its example
inputs: a file or module's class or factory, a built-in example, a ``.pt2`` program, or --
through :mod:`fxstudio.core.model.zoo` -- a timm or transformers model.

Example:
    >>> loaded = load_model("examples:simple")
    >>> type(loaded.module).__name__, tuple(loaded.example_inputs[0].shape)
    ('Model', (2, 16))

Opening a model file runs its code, exactly like ``python file.py`` would.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import importlib
import importlib.resources
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import torch
from torch import nn

from fxstudio.core.errors import LoadError, SourceLocation, user_frame
from fxstudio.core.fxcompat.programs import (
    UnregisteredType,
    load_program,
    program_weight_bytes,
    unlifted,
)
from fxstudio.core.graph.weights import (
    SMALL_BUFFER,
    building,
    has_weights,
    to_meta,
    without_weights,
)
from fxstudio.core.model import zoo
from fxstudio.core.model.modelfiles import file_models
from fxstudio.core.model.modelspec import (
    EXAMPLE_INPUTS,
    LoadedModel,
    ModelSpec,
    examples_hint,
    list_examples,
    make_inputs,
    parse_input_spec,
    parse_spec,
)
from fxstudio.core.model.sizing import build_within_memory, weights_too_big
from fxstudio.core.process import progress
from fxstudio.core.process.archives import archive_problem
from fxstudio.core.process.guard import SMALLER_MODEL, user_error
from fxstudio.core.process.noise import quiet_torch_logs


def load_model(
    spec: str | ModelSpec,
    inputs: Sequence[str] = (),
    seed: int = 0,
    weights: bool = True,
) -> LoadedModel:
    """Build the module a spec names and find its example inputs.

    ``inputs`` are ``--input`` strings (see :func:`parse_input_spec`); when none are given,
    the inputs come from an ``example_inputs`` function or attribute beside the model.
    ``torch.manual_seed(seed)`` runs right before the model is built, so the same spec gives
    the same weights in any process.  Without ``weights`` the model is built on the ``meta``
    device (:mod:`fxstudio.core.graph.weights`): its structure and shapes, no memory; an
    ``hf:`` model too large for this machine's memory is built so anyway, with a note.
    """
    ms = named(spec if isinstance(spec, ModelSpec) else parse_spec(spec))
    loaded = _load(ms, inputs, seed, weights)
    if not weights or not has_weights(loaded.module):
        loaded.example_inputs = without_weights(loaded.module, loaded.example_inputs)
        if not weights and ms.kind not in ("timm", "hf"):  # the zoo's notes say it
            runs = "nothing to run"  # (a .pt2 is its own checkpoint, as an hf: folder is)
            if loaded.checkpoint is not None:
                runs = f"a module's weights from {loaded.checkpoint}"
            loaded.notes.append(
                f"{ms.text}: structure only, no weights (asked for): shapes and dtypes, {runs}"
            )
    return loaded


def _load(ms: ModelSpec, inputs: Sequence[str], seed: int, weights: bool) -> LoadedModel:
    if ms.kind == "pt2":
        return _load_pt2(ms, inputs, seed, weights)
    if ms.kind in ("timm", "hf"):
        return zoo.load(ms, inputs, seed, weights)
    namespace, source_file = import_namespace(ms)
    obj = getattr(namespace, ms.name, None)
    if obj is None:
        raise LoadError(_missing_name_message(ms, namespace))
    notes = []
    if weights:  # built once: stopped before its weights pass the memory, then on meta
        module, too_big = build_within_memory(lambda: _construct(ms, obj, seed, source_file))
        if too_big:
            notes.append(f"{ms.text}: structure only, no weights: {too_big}")
            module = to_meta(module, SMALL_BUFFER)
            weights = False
    else:
        with building(False):
            module = _construct(ms, obj, seed, source_file)
    if inputs:  # (shapes only for a structure-only model: any size)
        example = make_inputs(inputs, seed, real=weights)
    else:
        example = _namespace_inputs(ms, namespace, module, seed, source_file)
        trained = zoo.torchvision_input(ms) if not example else None
        if trained is not None:
            example = make_inputs([trained[0]], seed, real=weights)
            notes.append(trained[1])
    return LoadedModel(ms, module, example, source_file=source_file, seed=seed, notes=notes)


def named(ms: ModelSpec) -> ModelSpec:
    """A bare ``my_model.py`` names the file's obvious model (read, not run); several or
    none: a message naming what it defines."""
    if ms.kind != "file" or ms.name:
        return ms
    path = _existing_file(ms)
    found = file_models(path)
    if found.obvious is not None:
        return dataclasses.replace(ms, name=found.obvious)
    if found.problem:
        raise LoadError(f"{found.problem}. Fix the file and open it again.")
    if not found.names:
        raise LoadError(
            f"{ms.location} defines no nn.Module class or function that returns one. Add "
            f"the name of the function that builds the model: {ms.location}:NAME."
        )
    raise LoadError(
        f"{ms.location} defines several models: {found.choices()}. Choose one: "
        f"{ms.location}:{found.names[0]}."
    )


def check_spec(spec: str, inputs: Sequence[str] = ()) -> None:
    """What can be told without running anything: the spec and inputs are well formed,
    the file exists and has the name (a LoadError or InputSpecError says what is wrong).
    The Open dialog asks this before it closes."""
    ms = named(parse_spec(spec))
    for text in inputs:
        parse_input_spec(text)
    if ms.kind == "example" and ms.location not in list_examples():
        import_namespace(ms)  # its message: the close names
    if ms.kind == "pt2":
        if not os.path.isfile(os.path.expanduser(ms.location)):
            raise LoadError(f"No such file: {ms.location}. Check the path.")
    if ms.kind != "file":
        return
    found = file_models(_existing_file(ms))
    if found.problem or found.has(ms.name):
        return  # a syntax error is told with its line when the file runs
    close = close_names(ms.name, sorted(found.defined))
    mean = f" Did you mean: {', '.join(close)}?" if close else ""
    offers = f" It defines: {found.choices()}." if found.names else ""
    raise LoadError(f"{ms.location} has no '{ms.name}'.{mean}{offers}")


def _existing_file(ms: ModelSpec) -> str:
    path = os.path.abspath(os.path.expanduser(ms.location))
    if not os.path.exists(path):
        raise LoadError(
            f"No such file: {ms.location}. Check the path (relative paths start "
            f"from {os.getcwd()})."
        )
    if not os.path.isfile(path):
        raise LoadError(f"{ms.location} is not a file; give the path of a .py file.")
    return path


def import_namespace(ms: ModelSpec) -> tuple[ModuleType, str | None]:
    if ms.kind == "example":
        resource = (
            importlib.resources.files("fxstudio.resources") / "examples" / f"{ms.location}.py"
        )
        if not resource.is_file():
            close = close_names(ms.location, list_examples())
            mean = f" Did you mean: {', '.join(f'examples:{c}' for c in close)}?" if close else ""
            raise LoadError(examples_hint(f"There is no built-in example '{ms.location}'.{mean}"))
        # Examples live inside the package; in a wheel or editable install they are real files.
        with importlib.resources.as_file(resource) as example:
            return _import_file(str(example), f"fxstudio_examples_{ms.location}"), str(example)
    if ms.kind == "file":
        path = _existing_file(ms)
        digest = hashlib.sha1(path.encode()).hexdigest()[:10]
        stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
        return _import_file(path, f"fxstudio_user_{stem}_{digest}"), path
    try:
        mod = importlib.import_module(ms.location)
    except ModuleNotFoundError as exc:
        if exc.name and ms.location.startswith(exc.name):
            raise LoadError(
                f"No module named '{exc.name}'. Install the package that provides "
                f"it, or give a file path (FILE.py:{ms.name})."
            ) from exc
        raise LoadError(
            f"Importing {ms.location} failed: {exc}. Install the missing package '{exc.name}'.",
            user_frame(exc.__traceback__),
        ) from exc
    except BaseException as exc:
        raise user_error(f"Importing {ms.location}", exc) from exc
    return mod, getattr(mod, "__file__", None)


def _import_file(path: str, module_name: str) -> ModuleType:
    """Execute a Python file as a fresh module (re-importing replaces the old one)."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"{path} cannot be imported as Python; give a .py file.")
    mod = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = mod  # dataclasses, pickling and inspect need it registered
    try:
        spec.loader.exec_module(mod)
    except SyntaxError as exc:
        _restore_module(module_name, previous)
        loc = SourceLocation(exc.filename or path, exc.lineno or 0, (exc.text or "").rstrip())
        raise LoadError(
            f"Syntax error in {loc.describe()}\n{exc.msg}. Fix the file and open it again.", loc
        ) from exc
    except BaseException as exc:  # sys.exit, Ctrl+C, Cancel too: the old module stays
        _restore_module(module_name, previous)
        raise user_error(
            f"Running {os.path.basename(path)}", exc, path, oom_hint=SMALLER_MODEL
        ) from exc
    return mod


def _restore_module(name: str, previous: ModuleType | None) -> None:
    if previous is None:
        sys.modules.pop(name, None)
    else:
        sys.modules[name] = previous


def _missing_name_message(ms: ModelSpec, namespace: ModuleType) -> str:
    """``torch.nn has no 'Linaer'. Did you mean: Linear?`` -- the close names among the
    modules and functions the namespace has (its own and those it imports, as
    ``torchvision.models`` has ``resnet18`` from ``torchvision.models.resnet``); without a
    close one, the ones it defines itself."""
    offered = {
        n: v
        for n, v in vars(namespace).items()
        if not n.startswith("_")
        and n != EXAMPLE_INPUTS
        and (inspect.isclass(v) and issubclass(v, nn.Module) or inspect.isfunction(v))
    }
    where = f"example '{ms.location}'" if ms.kind == "example" else ms.location
    close = close_names(ms.name, list(offered))
    if close:
        return f"{where} has no '{ms.name}'. Did you mean: {', '.join(close)}?"
    own = sorted(n for n, v in offered.items() if v.__module__ == namespace.__name__)
    if len(own) > 12:
        own = [*own[:12], f"… ({len(own) - 12} more)"]
    hint = f" It defines: {', '.join(own)}." if own else ""
    return f"{where} has no '{ms.name}'.{hint}"


def close_names(name: str, known: Sequence[str], n: int = 5) -> list[str]:
    """The names in ``known`` closest to a mistyped ``name`` (case ignored), best first.

    >>> close_names("resnet19", ["resnet18", "resnet34", "vgg11"])
    ['resnet18', 'resnet34']
    >>> close_names("linaer", ["Linear", "Bilinear", "Conv2d"])
    ['Linear', 'Bilinear']
    """
    lowered: dict[str, str] = {}
    for k in known:
        lowered.setdefault(k.lower(), k)
    return [lowered[c] for c in difflib.get_close_matches(name.lower(), list(lowered), n=n)]


def _construct(ms: ModelSpec, obj: Any, seed: int, source_file: str | None) -> nn.Module:
    if not callable(obj):
        raise LoadError(
            f"'{ms.name}' in {ms.location} is a {type(obj).__name__}, not an "
            "nn.Module class or a factory function."
        )
    if isinstance(obj, nn.Module):
        return obj
    call = ms.name + _call_text(ms)
    torch.manual_seed(seed)
    try:
        module = obj(*ms.args, **dict(ms.kwargs))
    except TypeError as exc:
        loc = user_frame(exc.__traceback__, prefer_file=source_file)
        if loc is None:  # the call itself failed: required constructor arguments
            raise LoadError(
                f"Calling {call} failed: {exc}. Give the arguments in the spec "
                f"({ms.location}:{ms.name}(4, width=64): Python literals), add defaults, or "
                "write a zero-argument factory function that returns the module."
            ) from exc
        raise user_error(f"Building {call}", exc, source_file, oom_hint=SMALLER_MODEL) from exc
    except BaseException as exc:
        raise user_error(f"Building {call}", exc, source_file, oom_hint=SMALLER_MODEL) from exc
    if not isinstance(module, nn.Module):
        raise LoadError(f"{call} returned a {type(module).__name__}, not an nn.Module.")
    return module


def _call_text(ms: ModelSpec) -> str:
    """``(1, a=2)`` for a spec with arguments, ``()`` without."""
    parts = [repr(a) for a in ms.args] + [f"{k}={v!r}" for k, v in ms.kwargs]
    return f"({', '.join(parts)})"


def _namespace_inputs(
    ms: ModelSpec, namespace: ModuleType, module: nn.Module, seed: int, source_file: str | None
) -> tuple[Any, ...]:
    value = getattr(namespace, EXAMPLE_INPUTS, None)
    if value is None:
        value = getattr(module, EXAMPLE_INPUTS, None)
    if value is None:
        return ()
    if callable(value):
        torch.manual_seed(seed)
        try:
            value = value()
        except BaseException as exc:
            raise user_error("example_inputs()", exc, source_file) from exc
    return as_input_tuple(value)


def as_input_tuple(value: Any) -> tuple[Any, ...]:
    """Normalise example inputs: a tensor becomes a 1-tuple, a list a tuple."""
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def _load_pt2(ms: ModelSpec, inputs: Sequence[str], seed: int, weights: bool) -> LoadedModel:
    """A ``.pt2`` program: its graph and every shape read from the archive, its weights
    memory-mapped from it unless asked not to or they would not fit (then none is read:
    structure only, and the archive is the checkpoint one module's weights are read from)."""
    path = os.path.abspath(os.path.expanduser(ms.location))
    if not os.path.isfile(path):
        raise LoadError(f"No such file: {ms.location}. Check the path.")
    problem = archive_problem(path)  # its directory: a record that cannot be held, unread
    if problem:
        raise LoadError(problem)
    notes = []
    try:
        with quiet_torch_logs():  # torch logs its own traceback of a bad archive
            too_big = weights_too_big(program_weight_bytes(path)) if weights else None
            if too_big:
                notes.append(f"{ms.text}: structure only, no weights: {too_big}")
            progress.tell("Reading the program")
            ep = load_program(path, weights=weights and not too_big)
    except UnregisteredType as exc:
        owner = exc.name.rpartition(".")[0] or exc.name
        raise LoadError(
            f"{ms.location}'s program takes or returns a {exc.name}, a type of the code that "
            f"exported it, and {owner} cannot be imported here to read it. Install the "
            "package that defines it (or put its folder on PYTHONPATH), or export a program "
            "whose inputs and outputs are tensors, tuples, lists and dicts."
        ) from exc
    except Exception as exc:
        raise LoadError(
            f"{ms.location} is not a readable torch.export program "
            f"({type(exc).__name__}: {exc}): it is damaged, cut short or another kind of "
            "file. Save the program again with torch.export.save()."
        ) from exc
    if inputs:
        example: tuple[Any, ...] = make_inputs(inputs, seed, real=weights and not too_big)
    else:
        stored = getattr(ep, "example_inputs", None)
        example = tuple(stored[0]) if stored else ()
    progress.tell("Unlifting the program")
    bare = not weights or bool(too_big)  # (a module's weights are then read from the archive)
    return LoadedModel(
        ms,
        unlifted(ep),
        example,
        source_file=None,
        exported=ep,
        seed=seed,
        notes=notes,
        checkpoint=path if bare else None,
    )


def model_names_in(path: str | os.PathLike[str]) -> list[str]:
    """The models a Python file defines (read, not run: ``nn.Module`` classes and the
    factories that build one), the obvious one first -- the names a dropped or browsed
    file is offered under.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m.py"
    >>> _ = f.write_text("import torch\\nclass Net(torch.nn.Module): pass\\nclass Helper: pass\\n")
    >>> model_names_in(f)
    ['Net']
    """
    found = file_models(path)
    return sorted(found.names, key=lambda n: n != found.obvious)
