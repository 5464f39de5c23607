"""A checkpoint folder in the Hugging Face layout -- ``config.json`` beside ``model.safetensors``
or shards ``model-0000N-of-0000M.safetensors`` listed by ``model.safetensors.index.json`` --
read by name, a few tensors at a time: what a structure-only document of a model too large
for memory takes one module's weights from (:mod:`fxstudio.core.graph.parts`).

Finding one reads the folder's listing and its index only, never a shard; a tensor is read
(memory-mapped by safetensors) when it is asked for.  A checkpoint's names may carry a prefix
the model's lack (``model.layers.0...`` of a ``LlamaForCausalLM`` against the base model's
``layers.0...``): :meth:`Checkpoint.key_for` finds either.

Example:
    >>> import tempfile, torch
    >>> from safetensors.torch import save_file
    >>> folder = tempfile.mkdtemp()
    >>> save_file({"model.fc.weight": torch.ones(2, 3)}, f"{folder}/model.safetensors")
    >>> ck = find_checkpoint(folder)
    >>> ck.shards, ck.key_for("fc.weight")
    (1, 'model.fc.weight')
    >>> ck.read({"fc.weight": torch.empty(2, 3, device="meta")})["fc.weight"].sum().item()
    6.0
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import torch

from fxstudio.core.errors import LoadError

INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"

__all__ = ["INDEX", "SINGLE", "ArchiveCheckpoint", "Checkpoint", "find_checkpoint", "few"]

#: safetensors' names of the floating-point dtypes.
_FLOATING = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
}


@dataclass
class Checkpoint:
    """The safetensors files of a checkpoint folder (``files``, relative to ``folder``) and,
    when it has an index, which file holds each tensor (``index``)."""

    folder: str
    files: tuple[str, ...]
    index: dict[str, str] | None = None
    _names: dict[str, str] | None = field(default=None, repr=False)

    #: what to do about a tensor it lacks, or holds at another shape
    MISSING = (
        "Check that the folder holds this model's checkpoint (its config.json and safetensors "
        "files together), or open the model without it."
    )
    WRONG = (
        "The folder's config.json does not describe its weights: save them again with the "
        "model (save_pretrained), or fix the config."
    )

    @property
    def shards(self) -> int:
        return len(self.files)

    def describe(self) -> str:
        """``FOLDER (2 shards)`` / ``FOLDER (model.safetensors)``."""
        what = f"{self.shards} shards" if self.shards > 1 else self.files[0]
        return f"{self.folder} ({what})"

    def names(self) -> dict[str, str]:
        """Every tensor's name and the file that holds it (the index's map; without one, the
        headers of the files -- their data is not read)."""
        if self._names is None:
            if self.index is not None:
                self._names = dict(self.index)
            else:
                from safetensors import safe_open

                self._names = {}
                for name in self.files:
                    with safe_open(self._path(name), framework="pt") as f:
                        self._names.update(dict.fromkeys(f.keys(), name))
        return self._names

    def key_for(self, name: str) -> str | None:
        """The checkpoint's name for the model's ``name``: itself, or with one leading
        component more (``model.`` + name); ``None`` when the checkpoint has neither."""
        names = self.names()
        if name in names:
            return name
        found = [k for k in names if k.endswith("." + name) and "." not in k[: -len(name) - 1]]
        return found[0] if len(found) == 1 else None

    def read(self, wanted: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The checkpoint's tensors for the model's names in ``wanted`` (each given by a
        tensor of the shape and dtype it must have, a meta one will do), converted to that
        dtype.  A :class:`~fxstudio.core.errors.LoadError` names the tensors the checkpoint
        lacks or holds at another shape."""
        keys = {name: self.key_for(name) for name in wanted}
        missing = sorted(name for name, key in keys.items() if key is None)
        if missing:
            raise LoadError(
                f"The checkpoint {self.describe()} has no tensor {few(missing)} "
                f"({len(missing)} of the {len(wanted)} asked for). {self.MISSING}"
            )
        out: dict[str, torch.Tensor] = {}
        wrong: list[str] = []
        for name, value in self._tensors({n: str(k) for n, k in keys.items()}).items():
            like = wanted[name]
            if tuple(value.shape) != tuple(like.shape):
                wrong.append(f"{keys[name]} {tuple(value.shape)} instead of {tuple(like.shape)}")
                continue
            out[name] = value.to(like.dtype)
        if wrong:
            raise LoadError(
                f"The checkpoint {self.describe()} holds {few(wrong)} at another shape than "
                f"the model's. {self.WRONG}"
            )
        return out

    def _tensors(self, keys: dict[str, str]) -> dict[str, torch.Tensor]:
        """The tensors at ``keys`` (the model's name -> the checkpoint's), by the model's
        names: each file's own, memory-mapped by safetensors."""
        from safetensors import safe_open

        by_file: dict[str, list[str]] = {}
        for name, key in keys.items():
            by_file.setdefault(self.names()[key], []).append(name)
        out: dict[str, torch.Tensor] = {}
        for file, names in by_file.items():
            with safe_open(self._path(file), framework="pt") as f:
                out.update((name, f.get_tensor(keys[name])) for name in names)
        return out

    def floating_dtype(self) -> torch.dtype | None:
        """The dtype its floating-point tensors are stored in (the most common among one
        file's, read from that file's header -- no tensor is read); ``None`` if it has none."""
        from collections import Counter

        from safetensors import safe_open

        try:
            with safe_open(self._path(self.files[0]), framework="pt") as f:
                stored = Counter(f.get_slice(k).get_dtype() for k in f.keys())
        except Exception:  # noqa: BLE001  (unreadable: said when its weights are read)
            return None
        floating = [(n, d) for d, n in stored.items() if d in _FLOATING]
        return _FLOATING[max(floating)[1]] if floating else None

    def _path(self, name: str) -> str:
        path = os.path.join(self.folder, name)
        if not os.path.isfile(path):
            raise LoadError(
                f"The checkpoint {self.describe()} lists {name}, which is not in the folder. "
                "Copy the missing shard there (or the whole checkpoint again)."
            )
        return path


class ArchiveCheckpoint(Checkpoint):
    """A ``torch.export`` archive's weights (a ``.pt2`` file, ``folder`` its path), read by
    name, each memory-mapped from the archive when asked for
    (:func:`fxstudio.core.fxcompat.programs.archive_tensors`)."""

    MISSING = (
        "The model has weights its program does not (made by an edit): run a module "
        "without them, or save the program again from a model that has them."
    )
    WRONG = "The program changed since it was opened: open it again."

    def describe(self) -> str:
        return f"{self.folder} (a torch.export program)"

    def names(self) -> dict[str, str]:
        if self._names is None:
            from fxstudio.core.fxcompat.programs import archive_tensor_metas

            self._names = dict.fromkeys(self._metas(archive_tensor_metas), self.files[0])
        return self._names

    def _tensors(self, keys: dict[str, str]) -> dict[str, torch.Tensor]:
        from fxstudio.core.fxcompat.programs import archive_tensors

        read = self._read(lambda path: archive_tensors(path, list(keys.values())))
        return {name: read[key] for name, key in keys.items()}

    def floating_dtype(self) -> torch.dtype | None:
        from collections import Counter

        from fxstudio.core.fxcompat.programs import archive_tensor_metas

        stored = Counter(t.dtype for t in self._metas(archive_tensor_metas).values())
        floating = [(n, d) for d, n in stored.items() if d.is_floating_point]
        return max(floating, key=lambda nd: nd[0])[1] if floating else None

    def _metas(self, read: Any) -> dict[str, torch.Tensor]:
        return self._read(read)

    def _read(self, read: Any) -> Any:
        if not os.path.isfile(self.folder):
            raise LoadError(
                f"The program {self.folder} the document's weights come from is not there "
                "any more. Put it back, or open the model again."
            )
        try:
            return read(self.folder)
        except LoadError:
            raise
        except Exception as exc:
            raise LoadError(
                f"The weights of {self.folder} cannot be read ({type(exc).__name__}: {exc}): "
                "it changed since it was opened, or is damaged. Save the program again "
                "with torch.export.save(), or open the model again."
            ) from exc


def find_checkpoint(folder: str) -> Checkpoint | None:
    """The safetensors checkpoint in ``folder``, or ``None`` when it has none: its index's
    files when there is ``model.safetensors.index.json``, else ``model.safetensors``, else
    every ``*.safetensors`` file there.  Reads the listing and the index, no shard.  A
    ``.pt2`` file is a checkpoint of its own: an :class:`ArchiveCheckpoint`."""
    folder = os.path.abspath(os.path.expanduser(folder))
    if os.path.isfile(folder) and folder.endswith(".pt2"):
        return ArchiveCheckpoint(folder, (os.path.basename(folder),))
    if not os.path.isdir(folder):
        return None
    index_path = os.path.join(folder, INDEX)
    if os.path.isfile(index_path):
        try:
            with open(index_path, encoding="utf-8") as f:
                weight_map = json.load(f)["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise LoadError(
                f"{index_path} is not a safetensors index ({type(exc).__name__}: {exc}): "
                'it must be JSON with a "weight_map" of tensor names to files. Save the '
                "checkpoint again, or remove the index when the folder holds one file."
            ) from exc
        files = tuple(sorted(set(weight_map.values())))
        return Checkpoint(folder, files, dict(weight_map))
    if os.path.isfile(os.path.join(folder, SINGLE)):
        return Checkpoint(folder, (SINGLE,))
    files = tuple(sorted(n for n in os.listdir(folder) if n.endswith(".safetensors")))
    return Checkpoint(folder, files) if files else None


def few(names: list[str], n: int = 4) -> str:
    """``a, b, c`` or ``a, b, c, d and 7 more``."""
    shown = ", ".join(names[:n])
    return shown if len(names) <= n else f"{shown} and {len(names) - n} more"
