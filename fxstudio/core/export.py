"""Save the document's model: a standalone ``.py`` (+ ``.safetensors``), the forward code,
TorchScript, a ``torch.export`` program (``.pt2``) or ONNX.

Every file is written atomically and never replaces an existing file unless ``force``.
A model that cannot be saved in a format gets a :class:`ExportError` saying why and what
to try instead; nothing is written then.

Example:
    >>> import tempfile, pathlib
    >>> from fxstudio.core.session import open_document
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "simple.py"
    >>> [p.name for p in export(open_document("examples:simple"), out).paths]
    ['simple.safetensors', 'simple.py']
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from safetensors.torch import save_file

from fxstudio.core.capture import eval_mode, quiet_torch_logs
from fxstudio.core.codegen import forward_code, standalone_module
from fxstudio.core.document import GraphDocument
from fxstudio.core.errors import UserError
from fxstudio.core.files import atomic_path, atomic_write, check_writable

Format = Literal["py", "code", "torchscript", "pt2", "onnx"]
FORMATS: tuple[Format, ...] = ("py", "code", "torchscript", "pt2", "onnx")
SUFFIXES = {".py": "py", ".pt2": "pt2", ".onnx": "onnx", ".pt": "torchscript", ".ts": "torchscript"}
DESCRIPTIONS = {
    "py": "standalone Python module (.py + .safetensors)",
    "code": "generated forward code (.py)",
    "torchscript": "TorchScript (.pt)",
    "pt2": "torch.export program (.pt2)",
    "onnx": "ONNX (.onnx)",
}


class ExportError(UserError):
    """The model could not be saved in the chosen format; nothing was written."""


@dataclass
class ExportResult:
    format: Format
    paths: list[Path]
    notes: list[str] = field(default_factory=list)


def format_for(path: str | os.PathLike[str], fmt: str | None = None) -> Format:
    """The format asked for, or the one the file name's suffix implies."""
    if fmt:
        if fmt not in FORMATS:
            raise ExportError(f"Unknown format '{fmt}'. Use one of: {', '.join(FORMATS)}.")
        return fmt  # type: ignore[return-value]
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ExportError(
            f"Cannot tell the format from '{Path(path).name}'. Use a .py, .pt, .pt2 or .onnx "
            f"name, or pass --format ({', '.join(FORMATS)})."
        )
    return SUFFIXES[suffix]  # type: ignore[return-value]


def weights_path(py_path: str | os.PathLike[str]) -> Path:
    """The ``.safetensors`` file that goes with a standalone module."""
    return Path(py_path).with_suffix(".safetensors")


def export(
    doc: GraphDocument, path: str | os.PathLike[str], fmt: str | None = None, force: bool = False
) -> ExportResult:
    """Save ``doc``'s model to ``path`` in ``fmt`` (default: from the suffix)."""
    kind = format_for(path, fmt)
    out = check_writable(path, force)
    gm = doc.graph_module
    gm.graph.lint()
    gm.recompile()
    origin = f"{doc.source.spec} ({doc.source.frontend} frontend)" if doc.source.spec else ""
    if kind == "py":
        return _export_py(doc, out, origin, force)
    if kind == "code":
        atomic_write(out, forward_code(gm, origin))
        return ExportResult(kind, [out])
    inputs = _inputs(doc, kind)
    if kind == "torchscript":
        return _export_torchscript(gm, inputs, out)
    if kind == "pt2":
        return _export_pt2(gm, inputs, out)
    return _export_onnx(gm, inputs, out)


def _inputs(doc: GraphDocument, kind: str) -> tuple[Any, ...]:
    if not doc.example_inputs:
        raise ExportError(
            f"Saving as {DESCRIPTIONS[kind]} runs the model, so it needs example inputs. Open "
            "the model with --input SHAPE (one per forward argument)."
        )
    return tuple(doc.example_inputs)


def _export_py(doc: GraphDocument, out: Path, origin: str, force: bool) -> ExportResult:
    weights = check_writable(weights_path(out), force)
    mod = standalone_module(doc.graph_module, out.stem, origin)
    tensors = {k: v.detach().contiguous().cpu() for k, v in mod.tensors.items()}
    # Both files are complete on disk before either replaces an old one.
    with atomic_path(weights) as tmp_weights, atomic_path(out) as tmp_py:
        save_file(tensors, str(tmp_weights), metadata={"generated_by": "fxstudio"})
        tmp_py.write_text(mod.source, encoding="utf-8")
    return ExportResult("py", [weights, out], mod.notes)


def _export_torchscript(gm: fx.GraphModule, inputs: tuple[Any, ...], out: Path) -> ExportResult:
    notes = []
    with eval_mode(gm), quiet_torch_logs(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # jit is deprecated, still wanted
        try:
            scripted = torch.jit.script(gm)
        except Exception as script_error:
            try:
                with torch.no_grad():
                    scripted = torch.jit.trace(gm, inputs, check_trace=False)
                notes.append(
                    "torch.jit.script failed, so the module was traced with the example inputs: "
                    "control flow is fixed to what those inputs took."
                )
            except Exception as exc:
                raise ExportError(
                    "The model cannot be saved as TorchScript: torch.jit.script failed "
                    f"({_first_line(script_error)}) and torch.jit.trace failed "
                    f"({_first_line(exc)}). "
                    "Save it as Python (.py) or as a torch.export program (.pt2) instead."
                ) from exc
        with atomic_path(out) as tmp:
            torch.jit.save(scripted, str(tmp))
    return ExportResult("torchscript", [out], notes)


def _export_pt2(gm: fx.GraphModule, inputs: tuple[Any, ...], out: Path) -> ExportResult:
    with eval_mode(gm), quiet_torch_logs():
        try:
            ep = torch.export.export(gm, inputs, strict=False)
        except Exception as exc:
            raise ExportError(
                f"The model cannot be saved as a torch.export program: {_first_line(exc)}. "
                "Save it as Python (.py) instead."
            ) from exc
        with atomic_path(out) as tmp:
            torch.export.save(ep, str(tmp))
    return ExportResult("pt2", [out])


def onnx_available() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxscript"))


def _export_onnx(gm: fx.GraphModule, inputs: tuple[Any, ...], out: Path) -> ExportResult:
    if not onnx_available():
        raise ExportError(
            "Saving as ONNX needs the onnx and onnxscript packages: "
            "pip install onnx onnxscript (in fxstudio's environment), then try again."
        )
    with eval_mode(gm), quiet_torch_logs(), contextlib.redirect_stdout(io.StringIO()):
        try:
            program = torch.onnx.export(gm, inputs, dynamo=True, verbose=False)
        except Exception as exc:
            raise ExportError(
                f"The model cannot be saved as ONNX: {_first_line(exc)}. "
                "Save it as Python (.py) or .pt2 instead."
            ) from exc
        with atomic_path(out) as tmp:
            program.save(str(tmp))
    return ExportResult("onnx", [out])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


# --- checking a standalone module ------------------------------------------------------------

_VERIFY = r"""
import importlib.util, json, sys
class NoFxstudio:
    def find_spec(self, name, path=None, target=None):
        if name == "fxstudio" or name.startswith("fxstudio."):
            raise ImportError("the exported module must not need fxstudio")
sys.meta_path.insert(0, NoFxstudio())
import torch
import torch.utils._pytree as pytree
from safetensors.torch import load_file
torch.set_num_threads(1)  # as the reference was computed: the same order of float sums
py_path, data_path = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("exported_model", py_path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
model = mod.load()
data = load_file(data_path)
inputs = [data[f"in.{i}"] for i in range(sum(k.startswith("in.") for k in data))]
with torch.no_grad():
    out = model(*inputs)
leaves = [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
expected = [data[f"out.{i}"] for i in range(sum(k.startswith("out.") for k in data))]
same = len(leaves) == len(expected) and all(
    a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b)
    for a, b in zip(leaves, expected)
)
diff = max((float((a.double() - b.double()).abs().max()) for a, b in zip(leaves, expected)
            if a.shape == b.shape and a.numel() and a.dtype.is_floating_point), default=0.0)
print(json.dumps({"bitwise_equal": same, "outputs": len(leaves), "expected": len(expected),
                  "max_abs_diff": diff}))
"""


@dataclass
class Verification:
    bitwise_equal: bool
    outputs: int
    max_abs_diff: float

    def __str__(self) -> str:
        if self.bitwise_equal:
            return f"the saved module's {self.outputs} output(s) equal the editor's bit for bit"
        diff = f"max |diff| {self.max_abs_diff:g}"
        return f"the saved module's outputs differ from the editor's ({diff})"


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one thread: bit-for-bit comparisons between processes need the same
    order of floating-point sums, which several threads do not promise."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def reference_outputs(doc: GraphDocument) -> list[torch.Tensor]:
    """The document's model run in eval mode on its example inputs: tensor leaves, in order."""
    gm = doc.graph_module
    doc.ensure_compiled()
    with eval_mode(gm), torch.no_grad(), one_thread():
        out = gm(*doc.example_inputs)
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def verify_standalone(py_path: str | os.PathLike[str], doc: GraphDocument) -> Verification:
    """Import the saved module in a fresh Python process (with fxstudio unimportable), load
    its weights and compare its outputs with the document's on the example inputs."""
    return run_standalone(py_path, doc.example_inputs, reference_outputs(doc))


def run_standalone(
    py_path: str | os.PathLike[str], inputs: tuple[Any, ...], expected: list[torch.Tensor]
) -> Verification:
    """Run a saved module's ``load()(*inputs)`` in a fresh process; compare with ``expected``."""
    if not inputs or not all(isinstance(t, torch.Tensor) for t in inputs):
        raise ExportError("Checking the saved module needs tensor example inputs (--input).")
    data = {f"in.{i}": t.contiguous() for i, t in enumerate(inputs)}
    data.update({f"out.{i}": t.detach().contiguous() for i, t in enumerate(expected)})
    with tempfile.TemporaryDirectory() as tmp:
        data_path = os.path.join(tmp, "io.safetensors")
        save_file(data, data_path)
        result = subprocess.run(
            [sys.executable, "-c", _VERIFY, str(py_path), data_path],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
    if result.returncode != 0:
        tail = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "no output"
        raise ExportError(f"The saved module failed to run in a fresh Python process: {tail}")
    info = json.loads(result.stdout.strip().splitlines()[-1])
    return Verification(info["bitwise_equal"], info["outputs"], info["max_abs_diff"])
