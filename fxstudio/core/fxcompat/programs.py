"""torch.export archives (``.pt2``), read faster than ``torch.export.load`` and, structure
only, without their weights; an ExportedProgram unlifted with its code generated once.

A program's weights are read lazily: each is memory-mapped from the archive (copy on write,
as ``torch.load(mmap=True)`` maps a checkpoint), so opening a 4 GB program reads no weight
and a page of one is read when something first uses it.  :func:`archive_tensors` reads
chosen weights by name the same way -- what a structure-only document of a program too
large for memory takes one module's weights from.

A program whose inputs or outputs are a library's own pytree types (a transformers model's
``BaseModelOutputWithPast``) names them in its archive; torch reads such a name only once the
module that registers the type is imported: :func:`load_program` imports it.

Part of :mod:`fxstudio.core.fxcompat` (torch's private APIs, each use tested in
``tests/core/test_fxcompat.py``); imported through it.
"""

from __future__ import annotations

import contextlib
import importlib
import mmap
import os
import re
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import torch
import torch.fx as fx
from torch import nn
from torch.utils import _pytree as pytree

__all__ = [
    "UnregisteredType",
    "archive_tensor_metas",
    "archive_tensors",
    "load_program",
    "program_weight_bytes",
    "unlifted",
]


class UnregisteredType(Exception):
    """A program's inputs or outputs are of a pytree type (``name``) that no importable
    module registers.  (Not a RuntimeError: torch's ``load`` turns those into "check the
    warnings above".)"""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is not registered as a pytree type")
        self.name = name


def load_program(path: str, weights: bool = True) -> Any:
    """``torch.export.load(path)``, faster, its weights and constants memory-mapped from the
    archive rather than read (:func:`_mapped_file_map`); without ``weights`` no weight is
    read at all: parameters and buffers are ``meta`` tensors of their recorded shapes,
    strides and dtypes.  (torch asks ``typing`` for a class's type hints at each of a graph's
    hundreds of thousands of JSON values, 60% of a 20,000-node load; here each class's
    decoder is made once.)"""
    from torch.export.pt2_archive import _package

    swaps: dict[str, Any] = {
        "_dict_to_dataclass": _fast_dict_to_dataclass(),
        "treespec_loads": _registering(pytree.treespec_loads),
    }
    built = _package._build_file_map
    swaps["_build_file_map"] = lambda r, config, base: _mapped_file_map(
        path, r, config, base, built
    )
    if not weights:
        original = _package._load_state_dict
        swaps["_load_state_dict"] = lambda r, name: _meta_state_dict(r, name, original)
    with _package_swapped(swaps):
        return torch.export.load(path)


def archive_tensor_metas(path: str) -> dict[str, Any]:
    """Every weight (parameter and persistent buffer) of a ``.pt2`` archive's model by its
    name, as a ``meta`` tensor of its shape and dtype -- its records' descriptions only,
    nothing read.  Empty for a legacy archive of pickled weights."""
    return {name: meta for name, (meta, _) in _archive_payloads(path).items()}


def archive_tensors(path: str, names: Iterable[str]) -> dict[str, torch.Tensor]:
    """The weights ``names`` of a ``.pt2`` archive's model, memory-mapped from it (those
    alone: a module's worth of a program far larger than memory); a name the archive lacks
    is left out."""
    from torch.export.pt2_archive import _package as p

    payloads = _archive_payloads(path)
    wanted = [n for n in names if n in payloads]
    files: dict[str, torch.Tensor] = {}
    out: dict[str, torch.Tensor] = {}
    stored = _stored_records(path) if wanted else set()
    with p.PT2ArchiveReader(path) as reader, open(path, "rb") as f:
        for name in wanted:
            meta, payload = payloads[name]
            tm = payload.tensor_meta
            if payload.path_name not in files:
                record = p.WEIGHTS_DIR + payload.path_name
                try:
                    files[payload.path_name] = _mapped_record(f, reader, record, meta.dtype, stored)
                except _NotMappable:  # (read as torch reads it)
                    raw = bytearray(reader.archive_file.get_record(record))
                    files[payload.path_name] = (
                        torch.frombuffer(raw, dtype=meta.dtype)
                        if raw
                        else torch.zeros(meta.shape, dtype=meta.dtype)
                    )
            out[name] = torch.as_strided(
                files[payload.path_name],
                meta.shape,
                p.deserialize_stride(tm.strides),
                p.deserialize_storage_offset(tm.storage_offset),
            )
    return out


def _archive_payloads(path: str) -> dict[str, tuple[torch.Tensor, Any]]:
    """Each weight's name -> (a meta tensor of its shape and dtype, its payload record)."""
    from torch.export.pt2_archive import _package as p

    with p.PT2ArchiveReader(path) as reader:
        names = reader.get_file_names()
        configs = [n for n in names if n.startswith(p.WEIGHTS_DIR) and n.endswith(".json")]
        out: dict[str, tuple[torch.Tensor, Any]] = {}
        for config in configs:
            with _package_swapped({"_dict_to_dataclass": _fast_dict_to_dataclass()}):
                payloads = p._load_payload_config(reader, config).config
            for fqn, payload in payloads.items():
                tm = payload.tensor_meta
                if tm is None or payload.use_pickle:
                    continue
                size = p.deserialize_size(tm.sizes)
                dtype = p.deserialize_scalar_type(tm.dtype)
                out[fqn] = (torch.empty(size, dtype=dtype, device="meta"), payload)
    return out


def _mapped_file_map(path: str, reader: Any, config: Any, base_dir: str, built: Any) -> Any:
    """torch's ``_build_file_map`` (each record of a weights or constants config as a flat
    tensor), every record memory-mapped from the archive instead of read into memory --
    torch's own (``built``) for an archive whose records are not stored as they are (a
    compressed zip, a record at an offset its dtype cannot start at)."""
    from torch.export.pt2_archive import _package as p

    files: dict[str, torch.Tensor] = {}
    try:
        stored = _stored_records(path)
        with open(path, "rb") as f:
            for payload in config.config.values():
                tm = payload.tensor_meta
                if payload.use_pickle or payload.path_name in files or tm is None:
                    continue
                dtype = p.deserialize_scalar_type(tm.dtype)
                device = p.deserialize_device(tm.device)
                record = os.path.join(base_dir, payload.path_name)
                if reader.archive_file.get_record_size(record) == 0:
                    return built(reader, config, base_dir)  # (torch's zeros of the size)
                t = _mapped_record(f, reader, record, dtype, stored)
                if tm.requires_grad:
                    t.requires_grad_(True)
                files[payload.path_name] = t if device == torch.device("cpu") else t.to(device)
    except _NotMappable:
        return built(reader, config, base_dir)
    return files


class _NotMappable(Exception):
    """A record that is not its bytes, as they are, at an offset its dtype can start at."""


def _mapped_record(
    f: Any, reader: Any, record: str, dtype: torch.dtype, stored: set[str]
) -> torch.Tensor:
    """The archive's ``record`` as a flat tensor of ``dtype`` over a private (copy-on-write)
    memory map of its bytes in the file ``f``: nothing is read until it is used, and a
    change made to it stays in this process."""
    nbytes = reader.archive_file.get_record_size(record)
    offset = reader.archive_file.get_record_offset(record)
    size = torch._utils._element_size(dtype)
    if nbytes == 0 or nbytes % size or offset % size or record not in stored:
        raise _NotMappable(record)
    start = offset - offset % mmap.ALLOCATIONGRANULARITY
    try:
        mapped = mmap.mmap(
            f.fileno(), offset - start + nbytes, access=mmap.ACCESS_COPY, offset=start
        )
        return torch.frombuffer(mapped, dtype=dtype, count=nbytes // size, offset=offset - start)
    except (OSError, ValueError, TypeError, RuntimeError) as exc:  # (a dtype frombuffer lacks)
        raise _NotMappable(record) from exc


def _stored_records(path: str) -> set[str]:
    """The archive's records stored as they are (not compressed), by the names torch's reader
    gives them (without the archive's top folder): its zip directory, read once."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        return {
            i.filename.partition("/")[2]
            for i in z.infolist()
            if i.compress_type == zipfile.ZIP_STORED
        }


def unlifted(program: Any) -> fx.GraphModule:
    """``program.module()`` (an ExportedProgram unlifted to a runnable GraphModule) with its
    code generated once, at the end: torch regenerates it at each of its steps (4 of 7 s of
    a 20,000-node unlift).  One unlift at a time; other threads' recompiles go on."""
    original, me = fx.GraphModule.recompile, threading.get_ident()

    def recompile(self: fx.GraphModule) -> Any:
        return original(self) if threading.get_ident() != me else None

    with _UNLIFTING:
        fx.GraphModule.recompile = recompile  # type: ignore[method-assign]
        try:
            gm = program.module()
        finally:
            fx.GraphModule.recompile = original  # type: ignore[method-assign]
    for node in gm.graph.nodes:  # torch gives it the first node's modules (layers.0.fc's)
        if node.op == "call_module" and node.target == GUARD_TARGET:  # (the whole model's)
            stack = node.meta.get("nn_module_stack") or {}
            root = {k: v for k, v in stack.items() if not v[0]}  # the model itself: path ""
            node.meta["nn_module_stack"] = root
    for m in gm.modules():  # (the steps' intermediate modules are dropped uncompiled)
        if isinstance(m, fx.GraphModule):
            m.recompile()
    return gm


GUARD_TARGET = "_guards_fn"  # torch.export's input check, not part of the computation


_UNLIFTING = threading.Lock()


def program_weight_bytes(path: str) -> int:
    """Bytes the weights of a ``.pt2`` archive take (their records' sizes, none read)."""
    from torch.export.pt2_archive import _package

    with _package.PT2ArchiveReader(path) as reader:
        return sum(
            reader.archive_file.get_record_size(name)
            for name in reader.get_file_names()
            if name.startswith(_package.WEIGHTS_DIR) and not name.endswith(".json")
        )


@contextlib.contextmanager
def _package_swapped(swaps: dict[str, Any]) -> Iterator[None]:
    """``torch.export``'s archive reader (and its serde's decoders) with ``swaps``."""
    from torch._export.serde import serialize
    from torch.export.pt2_archive import _package

    serde = ("_dict_to_dataclass", "treespec_loads")
    where = [(serialize if n in serde else _package, n) for n in swaps]
    old = [getattr(m, n) for m, n in where]
    for m, n in where:
        setattr(m, n, swaps[n])
    try:
        yield
    finally:
        for (m, n), v in zip(where, old, strict=True):
            setattr(m, n, v)


_UNREGISTERED = re.compile(r"Deserializing (\S+) in pytree is not registered")


def _registering(loads: Any) -> Any:
    """torch's ``treespec_loads`` that, for a type no module has registered yet, imports the
    module its serialized name says it comes from and reads it again -- or raises
    :class:`UnregisteredType`."""

    def registering_loads(data: str) -> Any:
        tried: set[str] = set()
        while True:
            try:
                return loads(data)
            except NotImplementedError as exc:
                found = _UNREGISTERED.search(str(exc))
                if found is None:
                    raise
                name = found.group(1)
                if name in tried or not _import_registering(name):
                    raise UnregisteredType(name) from exc
                tried.add(name)

    return registering_loads


def _import_registering(name: str) -> bool:
    """Import the module that registers the pytree type serialized as ``name``
    (``package.module.Class``: the longest importable prefix); whether it is registered."""
    registered = pytree.SERIALIZED_TYPE_TO_PYTHON_TYPE
    parts = name.split(".")
    for end in range(len(parts) - 1, 0, -1):
        try:
            importlib.import_module(".".join(parts[:end]))
        except Exception:  # (not installed, or fails to import: a shorter prefix)
            continue
        if name in registered:
            return True
    return name in registered


def _fast_dict_to_dataclass() -> Any:
    """torch's ``serialize._dict_to_dataclass(cls, data)`` with a decoder per class, made
    once (the same dataclasses: ``tests/core/test_fxcompat.py`` compares)."""
    import dataclasses
    import types
    import typing

    from torch._export.serde import serialize
    from torch._export.serde.union import _Union

    schema_ns, built = vars(serialize.schema), {}

    def decoder(cls: Any) -> Any:
        try:
            if cls not in built:
                built[cls] = build(cls)
            return built[cls]
        except TypeError:  # unhashable: not kept
            return build(cls)

    def build(cls: Any) -> Any:
        cls = serialize._resolve_schema_cls(cls)
        if isinstance(cls, str):
            raise AssertionError(f"Unresolved class type: '{cls}'.")
        origin, args = typing.get_origin(cls), typing.get_args(cls)
        if origin is typing.Annotated:
            return decoder(cls.__origin__)
        if origin in (typing.Union, types.UnionType) and type(None) in args:
            inner = decoder(args[0])
            return lambda data: None if data is None else inner(data)
        if isinstance(cls, type) and (issubclass(cls, _Union) or dataclasses.is_dataclass(cls)):
            hints = typing.get_type_hints(cls, globalns=schema_ns)
            if not issubclass(cls, _Union):
                fields = [(f.name, decoder(hints[f.name])) for f in dataclasses.fields(cls)]
                return lambda data: cls(**{n: d(data[n]) for n, d in fields if n in data})

            def union(data: Any) -> Any:
                if not isinstance(data, dict) or len(data) != 1:
                    raise AssertionError(f"expected a dict with one key, got {data!r:.80}")
                ((key, value),) = data.items()
                return cls.create(**{key: decoder(hints[key])(value)})

            return union
        item = decoder(args[0]) if len(args) == 1 else None
        value = decoder(args[1]) if len(args) == 2 else None

        def other(data: Any) -> Any:
            if isinstance(data, list):
                return [item(d) for d in data] if data and item else data
            if isinstance(data, dict) and value is not None:
                return {k: value(v) for k, v in data.items()}
            return float(data) if cls is float else data

        return other

    return lambda cls, data: decoder(cls)(data)


def _meta_state_dict(reader: Any, model_name: str, original: Any) -> Any:
    """A ``.pt2`` archive's state dict as ``meta`` tensors, no weight read (``original``,
    torch's reader, for a legacy archive of pickled weights)."""
    from torch.export.pt2_archive import _package as p

    config = p.WEIGHTS_CONFIG_FILENAME_FORMAT.format(model_name)
    if config not in reader.get_file_names():
        return original(reader, model_name)
    state: dict[str, torch.Tensor] = {}
    for fqn, meta in p._load_payload_config(reader, config).config.items():
        tm = meta.tensor_meta
        if tm is None:  # a pickled object, not a tensor
            continue
        size, stride = p.deserialize_size(tm.sizes), p.deserialize_stride(tm.strides)
        dtype = p.deserialize_scalar_type(tm.dtype)
        t = torch.empty_strided(size, stride, dtype=dtype, device="meta")
        state[fqn] = nn.Parameter(t, requires_grad=tm.requires_grad) if meta.is_param else t
    return state
