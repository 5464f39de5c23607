"""Save the document's model: a standalone ``.py`` (+ ``.safetensors``), the forward code,
TorchScript, a ``torch.export`` program (``.pt2``) or ONNX.

Every file is written atomically and never replaces an existing file unless ``force``.
A model that cannot be saved in a format gets a :class:`ExportError` saying why and what
to try instead; nothing is written then.

Example:
    >>> import tempfile, pathlib
    >>> from fxstudio.core.sessions.documents import open_document
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "simple.py"
    >>> [p.name for p in export(open_document("examples:simple"), out).paths]
    ['simple.safetensors', 'simple.py']
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import torch
import torch.fx as fx
from safetensors.torch import save_file

from fxstudio.core.errors import ExportError
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.modes import eval_mode
from fxstudio.core.graph.weights import no_weights_message
from fxstudio.core.process.files import atomic_path, atomic_write, check_writable
from fxstudio.core.process.noise import quiet_torch_logs
from fxstudio.core.saving.codegen import forward_code, standalone_module
from fxstudio.core.saving.tensorfiles import storable

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
        return fmt
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
    if kind not in ("code", "py") and not doc.weights:
        raise ExportError(
            no_weights_message(
                f"Saving as {DESCRIPTIONS[kind]}", doc.request.spec, not doc.request.weights
            )
            + " A standalone .py (that loads its weights from a checkpoint) or the forward code "
            "alone can be saved without them (--format py, --format code)."
        )
    out = check_writable(path, force)
    gm = doc.graph_module
    gm.graph.lint()
    gm.recompile()
    origin = f"{doc.request.spec} ({doc.request.frontend} frontend)" if doc.request.spec else ""
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
    bare = () if doc.weights else (_without_weights(doc, out.stem),)
    mod = standalone_module(doc.graph_module, out.stem, origin, notes=bare)
    # (structure only: the tensors with values alone -- what the model computes, which a
    # checkpoint does not hold; the weights come from the checkpoint given to load)
    tensors = storable({k: t for k, t in mod.tensors.items() if not t.is_meta})
    # Both files are complete on disk before either replaces an old one.
    with atomic_path(weights) as tmp_weights, atomic_path(out) as tmp_py:
        save_file(tensors, str(tmp_weights), metadata={"generated_by": "fxstudio"})
        tmp_py.write_text(mod.source, encoding="utf-8")
    return ExportResult("py", [weights, out], mod.notes)


def _without_weights(doc: GraphDocument, stem: str) -> str:
    """What a ``.py`` saved from a structure-only document says about its weights."""
    where = f"'{doc.checkpoint}'" if doc.checkpoint else "FOLDER"
    return (
        f"Saved without its weights (the document held its structure only): {stem}.safetensors "
        f"holds only what the model computes (buffers such as inv_freq). Give load() the "
        f"checkpoint folder, .safetensors file or .pt2 program with the weights: load({where})."
    )


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
        if program is None:
            raise ExportError("torch.onnx.export made no program. Save it as Python (.py) instead.")
        with atomic_path(out) as tmp:
            program.save(str(tmp))
    return ExportResult("onnx", [out])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]
