"""Turn a MODEL spec into an ``nn.Module`` and its example inputs.

A spec is one of::

    path/to/file.py:Name     a class (built with no arguments) or a zero-argument factory
    package.module:Name      the same, from an importable module
    examples:NAME            a built-in example shipped in fxstudio's resources
    path/to/model.pt2        a saved torch.export ExportedProgram

Example:
    >>> loaded = load_model("examples:simple")
    >>> type(loaded.module).__name__, tuple(loaded.example_inputs[0].shape)
    ('Model', (2, 16))

Opening a model file runs its code, exactly like ``python file.py`` would.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.resources
import importlib.util
import inspect
import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

import torch
from torch import nn

from fxstudio.core.errors import InputSpecError, LoadError, SourceLocation, user_frame
from fxstudio.core.guard import SMALLER_MODEL, available_memory, out_of_memory, user_error
from fxstudio.core.noise import quiet_torch_logs

SpecKind = Literal["file", "module", "example", "pt2", "timm", "hf"]

EXAMPLE_CLASS = "Model"
EXAMPLE_INPUTS = "example_inputs"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed MODEL spec."""

    kind: SpecKind
    location: str  # file path, dotted module, example name or .pt2 path
    name: str = ""  # attribute inside the file / module ("" for .pt2)
    text: str = ""  # the spec as the user wrote it
    args: tuple[Any, ...] = ()  # literal arguments: package.module:factory(1, a=2)
    kwargs: tuple[tuple[str, Any], ...] = ()

    def __str__(self) -> str:
        return self.text or (f"{self.location}:{self.name}" if self.name else self.location)


@dataclass
class LoadedModel:
    """A module ready to capture, with the inputs to run it on."""

    spec: ModelSpec
    module: nn.Module
    example_inputs: tuple[Any, ...]
    source_file: str | None = None  # the user's file, for error locations
    exported: Any = None  # the ExportedProgram, for .pt2 specs
    seed: int = 0
    frontend: Literal["fx", "export"] | None = None  # how this kind of model captures best
    notes: list[str] = field(default_factory=list)  # what was chosen for the user, in words


SPEC_FORMS = (
    "FILE.py:Name, package.module:Name, a factory with arguments (package.module:fn(1, a=2)), "
    "timm:NAME, hf:NAME, examples:NAME or FILE.pt2"
)


def parse_spec(text: str) -> ModelSpec:
    """Parse a MODEL spec string (see the module docstring).

    >>> e = parse_spec("examples:resnet")
    >>> e.kind, e.location, e.name
    ('example', 'resnet', 'Model')
    >>> parse_spec("torchvision.models:resnet18").kind
    'module'
    >>> s = parse_spec("torchvision.models:resnet18(num_classes=10)")
    >>> s.name, s.kwargs
    ('resnet18', (('num_classes', 10),))
    >>> h = parse_spec("hf:llama(num_hidden_layers=2)")
    >>> h.kind, h.location, h.kwargs
    ('hf', 'llama', (('num_hidden_layers', 2),))
    """
    text = text.strip()
    if not text:
        raise LoadError(f"The model spec is empty. Give {SPEC_FORMS}.")
    head, args, kwargs = _split_call(text)
    zoo: tuple[tuple[str, SpecKind], ...] = (("timm:", "timm"), ("hf:", "hf"))
    for prefix, kind in zoo:
        if head.startswith(prefix):
            name = head[len(prefix) :].strip()
            if not name:
                raise LoadError(f"The spec '{text}' names no model: write {prefix}NAME.")
            return ModelSpec(kind, name, name, text, args, kwargs)
    if text.startswith("examples:"):
        name = text.split(":", 1)[1]
        if not name:
            raise LoadError(_examples_hint("The spec 'examples:' names no example."))
        return ModelSpec("example", name, EXAMPLE_CLASS, text)
    if text.endswith(".pt2"):
        return ModelSpec("pt2", text, "", text)
    location, sep, name = head.rpartition(":")
    if not sep or not location or not name:
        raise LoadError(f"'{text}' is not a model spec. Write {SPEC_FORMS}.")
    if not name.isidentifier():
        raise LoadError(
            f"'{name}' in '{text}' is not a Python name; after the colon give the "
            "name of an nn.Module class or a factory function."
        )
    is_file = location.endswith(".py") or os.sep in location or "/" in location
    return ModelSpec("file" if is_file else "module", location, name, text, args, kwargs)


def _split_call(text: str) -> tuple[str, tuple[Any, ...], tuple[tuple[str, Any], ...]]:
    """``pkg.mod:fn(1, a=2)`` -> ``("pkg.mod:fn", (1,), (("a", 2),))``: the arguments are
    Python literals, read with ``ast.literal_eval`` (never ``eval``).

    >>> _split_call("m:f(3, 'x', size=(2, 2))")
    ('m:f', (3, 'x'), (('size', (2, 2)),))
    >>> _split_call("file.py:Net")
    ('file.py:Net', (), ())
    """
    paren = text.find("(")
    if paren < 0 or not text.endswith(")"):
        return text, (), ()
    head, inside = text[:paren].strip(), text[paren + 1 : -1]
    try:
        call = ast.parse(f"f({inside})", mode="eval").body
    except SyntaxError as exc:
        raise LoadError(
            f"The arguments in '{text}' are not valid Python ({exc.msg}). Write literals: "
            "numbers, strings, True/False/None, tuples, lists and dicts of them."
        ) from exc
    assert isinstance(call, ast.Call)
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        raise LoadError(f"'{text}': write each argument out (no *args or **kwargs).")
    try:
        args = tuple(ast.literal_eval(a) for a in call.args)
        kwargs = tuple((k.arg, ast.literal_eval(k.value)) for k in call.keywords)
    except ValueError as exc:
        raise LoadError(
            f"The arguments in '{text}' must be Python literals (numbers, strings, "
            "True/False/None, tuples, lists, dicts): names and calls are not run."
        ) from exc
    return head, args, kwargs  # type: ignore[return-value]


def model_file(spec: str) -> str | None:
    """The Python file a spec's code is in, when it names one (for locating its lines)."""
    try:
        ms = parse_spec(spec)
    except LoadError:
        return None
    return os.path.abspath(os.path.expanduser(ms.location)) if ms.kind == "file" else None


def list_examples() -> list[str]:
    """Names of the built-in examples (``examples:NAME``)."""
    folder = importlib.resources.files("fxstudio.resources") / "examples"
    return sorted(
        p.name[:-3] for p in folder.iterdir() if p.name.endswith(".py") and p.name[0] != "_"
    )


def _examples_hint(message: str) -> str:
    return f"{message} Built-in examples: {', '.join(list_examples())}."


def load_model(
    spec: str | ModelSpec,
    inputs: Sequence[str] = (),
    seed: int = 0,
) -> LoadedModel:
    """Build the module a spec names and find its example inputs.

    ``inputs`` are ``--input`` strings (see :func:`parse_input_spec`); when none are given,
    the inputs come from an ``example_inputs`` function or attribute beside the model.
    ``torch.manual_seed(seed)`` runs right before the model is built, so the same spec gives
    the same weights in any process.
    """
    ms = spec if isinstance(spec, ModelSpec) else parse_spec(spec)
    if ms.kind == "pt2":
        return _load_pt2(ms, inputs, seed)
    if ms.kind in ("timm", "hf"):
        from fxstudio.core import zoo

        return zoo.load(ms, inputs, seed)
    namespace, source_file = import_namespace(ms)
    obj = getattr(namespace, ms.name, None)
    if obj is None:
        raise LoadError(_missing_name_message(ms, namespace))
    module = _construct(ms, obj, seed, source_file)
    if inputs:
        example = make_inputs(inputs, seed)
    else:
        example = _namespace_inputs(ms, namespace, module, seed, source_file)
    return LoadedModel(ms, module, example, source_file=source_file, seed=seed)


def import_namespace(ms: ModelSpec) -> tuple[ModuleType, str | None]:
    if ms.kind == "example":
        resource = (
            importlib.resources.files("fxstudio.resources") / "examples" / f"{ms.location}.py"
        )
        if not resource.is_file():
            raise LoadError(_examples_hint(f"There is no built-in example '{ms.location}'."))
        # Examples live inside the package; in a wheel or editable install they are real files.
        with importlib.resources.as_file(resource) as example:
            return _import_file(str(example), f"fxstudio_examples_{ms.location}"), str(example)
    if ms.kind == "file":
        path = os.path.abspath(os.path.expanduser(ms.location))
        if not os.path.exists(path):
            raise LoadError(
                f"No such file: {ms.location}. Check the path (relative paths start "
                f"from {os.getcwd()})."
            )
        if not os.path.isfile(path):
            raise LoadError(f"{ms.location} is not a file; give the path of a .py file.")
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
    candidates = sorted(
        n
        for n, v in vars(namespace).items()
        if not n.startswith("_")
        and getattr(v, "__module__", None) == namespace.__name__
        and (inspect.isclass(v) and issubclass(v, nn.Module) or inspect.isfunction(v))
        and n != EXAMPLE_INPUTS
    )
    where = f"example '{ms.location}'" if ms.kind == "example" else ms.location
    hint = f" It defines: {', '.join(candidates)}." if candidates else ""
    return f"{where} has no '{ms.name}'.{hint}"


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


def _load_pt2(ms: ModelSpec, inputs: Sequence[str], seed: int) -> LoadedModel:
    path = os.path.abspath(os.path.expanduser(ms.location))
    if not os.path.isfile(path):
        raise LoadError(f"No such file: {ms.location}. Check the path.")
    try:
        with quiet_torch_logs():  # torch logs its own traceback of a bad archive
            ep = torch.export.load(path)
    except Exception as exc:
        raise LoadError(
            f"{ms.location} is not a readable torch.export program "
            f"({type(exc).__name__}: {exc}): it is damaged, cut short or another kind of "
            "file. Save the program again with torch.export.save()."
        ) from exc
    if inputs:
        example: tuple[Any, ...] = make_inputs(inputs, seed)
    else:
        stored = getattr(ep, "example_inputs", None)
        example = tuple(stored[0]) if stored else ()
    return LoadedModel(ms, ep.module(), example, source_file=None, exported=ep, seed=seed)


# --- input specs ---------------------------------------------------------------------------

_DTYPES: dict[str, torch.dtype] = {
    name: getattr(torch, name)
    for name in (
        "float32",
        "float",
        "float64",
        "double",
        "float16",
        "half",
        "bfloat16",
        "int64",
        "long",
        "int32",
        "int",
        "int16",
        "int8",
        "uint8",
        "bool",
        "complex64",
        "complex128",
    )
}

_INPUT_RE = re.compile(r"^\s*(\d+(?:\s*[xX]\s*\d+)*)?\s*(?::\s*([A-Za-z0-9_]+))?\s*$")


@dataclass(frozen=True)
class InputSpec:
    """One ``--input``: a shape and a dtype, e.g. ``1x3x224x224`` or ``1x16:int64``."""

    shape: tuple[int, ...]
    dtype: torch.dtype = torch.float32


def parse_input_spec(text: str) -> InputSpec:
    """Parse ``1x3x224x224``, ``1x16:int64`` or ``:float32`` (a 0-d tensor).

    >>> parse_input_spec("1x16:int64")
    InputSpec(shape=(1, 16), dtype=torch.int64)
    """
    m = _INPUT_RE.match(text)
    if not m or (m.group(1) is None and m.group(2) is None):
        raise InputSpecError(
            f"'{text}' is not an input spec. Write the shape as sizes joined by 'x', with an "
            "optional dtype: 1x3x224x224, 1x16:int64."
        )
    shape = tuple(int(d) for d in re.split(r"\s*[xX]\s*", m.group(1))) if m.group(1) else ()
    dtype_name = (m.group(2) or "float32").lower()
    if dtype_name not in _DTYPES:
        raise InputSpecError(
            f"Unknown dtype '{m.group(2)}' in input '{text}'. Use one of: "
            f"{', '.join(sorted(_DTYPES))}."
        )
    return InputSpec(shape, _DTYPES[dtype_name])


def make_inputs(specs: Sequence[str | InputSpec], seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Random tensors for ``--input`` specs, the same for the same seed.

    Floating and complex inputs are standard normal; integer inputs are in ``[0, 10)`` (safe
    as token ids or indices for any vocabulary); bool inputs are random.
    """
    parsed = [s if isinstance(s, InputSpec) else parse_input_spec(s) for s in specs]
    _check_fits(parsed)
    gen = torch.Generator().manual_seed(seed)
    out = []
    for spec in parsed:
        if spec.dtype.is_floating_point or spec.dtype.is_complex:
            t = torch.randn(spec.shape, generator=gen, dtype=spec.dtype)
        elif spec.dtype == torch.bool:
            t = torch.randint(0, 2, spec.shape, generator=gen).bool()
        else:
            t = torch.randint(0, 10, spec.shape, generator=gen, dtype=spec.dtype)
        out.append(t)
    return tuple(out)


def _check_fits(specs: Sequence[InputSpec]) -> None:
    """Refuse inputs larger than the memory this machine has left, before allocating them
    (an allocation the kernel grants lazily would bring the OOM killer, not an error)."""
    sizes = [math.prod(s.shape) * torch.empty((), dtype=s.dtype).element_size() for s in specs]
    total, avail = sum(sizes), available_memory()
    if avail is not None and total > avail:
        given = ", ".join(
            f"{'x'.join(map(str, s.shape)) or 'scalar'}:{str(s.dtype).removeprefix('torch.')}"
            for s in specs
        )
        raise out_of_memory(f"making the example inputs ({given})", total, None)


def model_names_in(path: str | os.PathLike[str]) -> list[str]:
    """The top-level ``nn.Module`` subclasses a Python file defines (read, not run), ``Model``
    first when there is one -- the names a dropped or browsed file is offered under.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m.py"
    >>> _ = f.write_text("import torch\\nclass Net(torch.nn.Module): pass\\nclass Helper: pass\\n")
    >>> model_names_in(f)
    ['Net']
    """
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    names = [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).split(".")[-1] == "Module" for base in node.bases)
    ]
    return sorted(names, key=lambda n: n != "Model")
