"""MODEL specs and ``--input`` specs: what the user names, parsed, and what loading it gives.

A spec is one of::

    path/to/file.py:Name     a class (built with no arguments) or a zero-argument factory
    path/to/file.py          the file's one obvious model (:mod:`fxstudio.core.model.modelfiles`)
    package.module:Name      the same, from an importable module
    examples:NAME            a built-in example shipped in fxstudio's resources
    timm:NAME, hf:NAME       a model of the timm or transformers zoo, by name
    path/to/model.pt2        a saved torch.export ExportedProgram

:mod:`fxstudio.core.model.loading` builds what a spec names (and
:mod:`fxstudio.core.model.zoo` the zoo's models); both read their types from here.
"""

from __future__ import annotations

import ast
import importlib.resources
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import nn

from fxstudio.core.errors import InputSpecError, LoadError
from fxstudio.core.process.budget import available_memory
from fxstudio.core.process.guard import out_of_memory

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
    checkpoint: str | None = None  # where its weights are read from: hf:FOLDER, a .pt2 file


SPEC_FORMS = (
    "FILE.py:Name (or FILE.py when it defines one model), package.module:Name, a factory "
    "with arguments (package.module:fn(1, a=2)), timm:NAME, hf:NAME, examples:NAME or FILE.pt2"
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
    >>> parse_spec("my_model.py").name  # named when loaded: the file's one model
    ''
    """
    text = text.strip()
    if not text:
        raise LoadError(f"The model spec is empty. Give {SPEC_FORMS}.")
    head, args, kwargs = split_call(text)
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
            raise LoadError(examples_hint("The spec 'examples:' names no example."))
        return ModelSpec("example", name, EXAMPLE_CLASS, text)
    if text.endswith(".pt2"):
        return ModelSpec("pt2", text, "", text)
    if text.endswith(".py"):  # a bare file: its obvious model, named when it is loaded
        return ModelSpec("file", text, "", text)
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


def split_call(text: str) -> tuple[str, tuple[Any, ...], tuple[tuple[str, Any], ...]]:
    """``pkg.mod:fn(1, a=2)`` -> ``("pkg.mod:fn", (1,), (("a", 2),))``: the arguments are
    Python literals, read with ``ast.literal_eval`` (never ``eval``).

    >>> split_call("m:f(3, 'x', size=(2, 2))")
    ('m:f', (3, 'x'), (('size', (2, 2)),))
    >>> split_call("file.py:Net")
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


def examples_hint(message: str) -> str:
    return f"{message} Built-in examples: {', '.join(list_examples())}."


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


def make_inputs(
    specs: Sequence[str | InputSpec], seed: int = 0, real: bool = True
) -> tuple[torch.Tensor, ...]:
    """Random tensors for ``--input`` specs, the same for the same seed -- or, not ``real``
    (a structure-only model: shapes only), ``meta`` tensors of those shapes, any size.

    Floating and complex inputs are standard normal; integer inputs are in ``[0, 10)`` (safe
    as token ids or indices for any vocabulary); bool inputs are random.
    """
    parsed = [s if isinstance(s, InputSpec) else parse_input_spec(s) for s in specs]
    if not real:
        return tuple(torch.empty(s.shape, dtype=s.dtype, device="meta") for s in parsed)
    check_fits(parsed)
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


def check_fits(specs: Sequence[InputSpec]) -> None:
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
