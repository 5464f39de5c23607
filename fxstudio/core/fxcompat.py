"""The one module that touches torch's private APIs.

fxstudio needs a few things torch keeps private: the names a graph has handed out (an undo
brings a name back), how a graph generates its code, the schema of an ATen overload, the
number of graphs Dynamo compiled, fake tensors, pytrees.  Every use goes through a function
or name here, and ``tests/core/test_fxcompat.py`` checks each against the installed torch,
so a torch upgrade that moves one breaks this file and its test, not the editor.

Example:
    >>> import torch, torch.fx as fx
    >>> gm = fx.symbolic_trace(torch.nn.ReLU())
    >>> "relu" in used_names(gm.graph)
    True
    >>> qualified_name(torch.relu), is_op_overload(torch.ops.aten.relu.default)
    ('torch.relu', True)
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch import nn
from torch.fx.graph_module import _forward_from_src
from torch.utils._pytree import tree_flatten, tree_leaves, tree_map

__all__ = [
    "BatchNormBase",
    "DropoutBase",
    "OpOverload",
    "OpOverloadPacket",
    "code_generator",
    "compiled_graph_count",
    "fake_tensor_mode",
    "is_fake",
    "large_on_meta",
    "load_program",
    "is_op_overload",
    "module_state",
    "op_name",
    "op_registrar",
    "op_schema_arguments",
    "own_tensors",
    "program_weight_bytes",
    "pytree",
    "qualified_name",
    "release_name",
    "rename_node",
    "reparametrized",
    "reset_dynamo",
    "set_code_generator",
    "set_forward_source",
    "set_graph",
    "set_interpreter_inputs",
    "set_module_state",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "unlifted",
    "used_names",
]

#: An ATen operator overload (``torch.ops.aten.add.Tensor``) and its packet (``aten.add``).
OpOverload = torch._ops.OpOverload
OpOverloadPacket = torch._ops.OpOverloadPacket
#: The bases of every BatchNorm and Dropout module class.
BatchNormBase = nn.modules.batchnorm._BatchNorm
DropoutBase = nn.modules.dropout._DropoutNd


# --- ATen operators -----------------------------------------------------------------------------


def is_op_overload(target: Any) -> bool:
    """Whether ``target`` is an ATen operator (an overload or its packet)."""
    return isinstance(target, (OpOverload, OpOverloadPacket))


def op_name(target: Any) -> str:
    """``aten.add`` for ``torch.ops.aten.add.Tensor`` or ``torch.ops.aten.add``."""
    packet = target.overloadpacket if isinstance(target, OpOverload) else target
    return str(packet._qualified_op_name).replace("::", ".")


#: Namespaces of torch's own operators: ``import torch`` registers them.
TORCH_NAMESPACES = frozenset({"aten", "prims", "prim"})
#: torch's files that register operators on behalf of their callers (``torch.library``,
#: ``torch.library.custom_op``): a registration made there was asked for elsewhere.
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_MACHINERY_PARTS = ("library.py", "_ops.py", "_custom_ops.py", "_library/", "_custom_op/")
_REGISTRATION_MACHINERY = tuple(os.path.join(_TORCH_DIR, *p.split("/")) for p in _MACHINERY_PARTS)
#: Where libtorch's C++ operators are registered (``aten/src/ATen/native/quantized/library.cpp``).
_LIBTORCH_SOURCES = ("/aten/src/", "/torch/csrc/")


def op_registrar(target: Any) -> str | None:
    """The module whose import registers the operator ``target`` (an overload or packet):
    ``torch`` for torch's own (ATen, prims, libtorch's C++ operators), the module that
    defines a ``torch.library.custom_op``, the Python module a C++ operator names for
    itself, the package named as a C++ operator's namespace (``torchvision``), or the module
    at the registration's source file (a ``torch.library.Library`` definition, a fake
    implementation, a kernel); None when none of these is known.

    >>> op_registrar(torch.ops.aten.add.Tensor)
    'torch'
    """
    packet = target.overloadpacket if isinstance(target, OpOverload) else target
    qualname = str(packet._qualified_op_name)
    namespace = qualname.partition("::")[0]
    if namespace in TORCH_NAMESPACES:
        return "torch"
    from torch._library import custom_ops, simple_registry

    opdef = custom_ops.OPDEFS.get(qualname)
    if opdef is not None:
        return str(opdef._init_fn.__module__)
    overload = target if isinstance(target, OpOverload) else getattr(packet, packet.overloads()[0])
    defined_at = overload._handle.debug()  # "registered at FILE:LINE"
    if any(part in defined_at for part in _LIBTORCH_SOURCES):
        return "torch"
    stub = torch._C._dispatch_pystub(overload._schema.name, overload._schema.overload_name)
    if stub is not None and _importable(str(stub[0])):
        return str(stub[0])
    in_cpp = ".py:" not in defined_at
    if in_cpp and _importable(namespace):
        return namespace  # a package named as its C++ operators' namespace loads them (torchvision)
    fake = simple_registry.singleton.find(qualname).fake_impl.kernel
    places = [defined_at, f"registered at {fake.source}" if fake is not None else ""]
    places.append(torch._C._dispatch_dump(qualname))  # each kernel's registration
    files = re.findall(r"registered at (.+?\.py):\d+", "\n".join(places))
    by_file: dict[str, str] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and by_file.get(os.path.abspath(path), "__main__") == "__main__":
            by_file[os.path.abspath(path)] = name
    for path in files:
        path = os.path.abspath(path)
        if not path.startswith(_REGISTRATION_MACHINERY) and path in by_file:
            return by_file[path]
    return None


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def op_schema_arguments(target: Any) -> list[Any]:
    """The declared arguments of an overload (``torch._C.Argument``: name, default, kwarg_only)."""
    return list(target._schema.arguments)


def qualified_name(fn: Any) -> str:
    """``torch.relu``, ``_operator.add``: the name generated code imports a function by."""
    return str(fx.node._get_qualified_name(fn))


# --- graphs -------------------------------------------------------------------------------------


def used_names(graph: fx.Graph) -> set[str]:
    """Every name the graph has handed out (fx never hands one out twice, even after its node
    is erased)."""
    return graph._graph_namespace._used_names  # type: ignore[no-any-return]


def release_name(graph: fx.Graph, name: str) -> None:
    """Let the graph hand ``name`` out again (an undo brings back the very name)."""
    graph._graph_namespace._used_names.discard(name)


def rename_node(node: fx.Node, name: str) -> None:
    """Rename ``node`` in its graph (fx may change a name it cannot use; read it back)."""
    node._rename(name)


def set_graph(module: fx.GraphModule, graph: fx.Graph, recompile: bool = True) -> None:
    """Give ``module`` the graph ``graph`` (the very object); without ``recompile`` its
    forward is left as it was until the caller recompiles (a big graph's code comes later)."""
    if recompile:
        module.graph = graph
        return
    module._graph = graph
    graph.owning_module = module


def code_generator(graph: fx.Graph) -> fx.graph.CodeGen:
    """How ``graph`` generates its ``forward`` (an exported graph's flattens pytrees)."""
    return graph._codegen


def set_code_generator(graph: fx.Graph, codegen: fx.graph.CodeGen) -> None:
    graph._codegen = codegen


def set_forward_source(module: fx.GraphModule, src: str, globals_: dict[str, Any]) -> None:
    """Make ``module`` (a GraphModule of its own class) run ``src`` as its forward, and show
    it as its ``code``."""
    type(module).forward = _forward_from_src(src, globals_, {})
    module._code = src


def set_interpreter_inputs(interpreter: fx.Interpreter, inputs: Any) -> None:
    """What the interpreter's next placeholders take (it is stepped node by node)."""
    interpreter.args_iter = iter(inputs)


# --- modules ------------------------------------------------------------------------------------


def module_state(
    module: nn.Module,
) -> tuple[OrderedDict[str, Any], OrderedDict[str, Any], OrderedDict[str, Any]]:
    """Copies of a module's own children, parameters and buffers dicts (the objects in them
    shared): a snapshot that costs kilobytes whatever the weights weigh."""
    return (
        OrderedDict(module._modules),
        OrderedDict(module._parameters),
        OrderedDict(module._buffers),
    )


def set_module_state(
    module: nn.Module,
    children: OrderedDict[str, Any],
    parameters: OrderedDict[str, Any],
    buffers: OrderedDict[str, Any],
) -> None:
    """Put back what :func:`module_state` took."""
    module._modules = OrderedDict(children)
    module._parameters = OrderedDict(parameters)
    module._buffers = OrderedDict(buffers)


def own_tensors(module: nn.Module) -> Iterator[tuple[str, str, torch.Tensor, bool]]:
    """``(kind, name, tensor, persistent)`` for the module's own parameters and buffers, in
    registration order, ``None`` slots left out (``kind`` is ``parameter`` or ``buffer``)."""
    for name, p in module._parameters.items():
        if p is not None:
            yield "parameter", name, p, True
    for name, b in module._buffers.items():
        if b is not None:
            yield "buffer", name, b, name not in module._non_persistent_buffers_set


def reparametrized(module: nn.Module, tensors: dict[str, torch.Tensor]) -> Any:
    """A context in which ``module``'s parameters and buffers are ``tensors`` (by name)."""
    from torch.nn.utils.stateless import _reparametrize_module

    return _reparametrize_module(module, tensors)


def large_on_meta(limit: int) -> Any:
    """A context in which tensors made without a device (``torch.empty``, ``arange``,
    ``nn.Linear``'s weight ...) of more than ``limit`` elements are made on the ``meta``
    device and smaller ones on the CPU -- so a model built inside takes no memory for its
    weights while its small tensors (a rotary embedding's ``inv_freq``, a norm's scale) keep
    their values.  ``torch.device("meta")`` with a size rule (``torch.utils._device``)."""
    from torch.utils._device import DeviceContext, _device_constructors

    class LargeOnMeta(DeviceContext):
        def __torch_function__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            kwargs = kwargs or {}
            if func not in _device_constructors() or kwargs.get("device") is not None:
                return func(*args, **kwargs)
            made = func(*args, **{**kwargs, "device": "meta"})
            if isinstance(made, torch.Tensor) and made.numel() <= limit:
                return func(*args, **{**kwargs, "device": "cpu"})
            return made

    return LargeOnMeta("meta")


def is_fake(t: torch.Tensor) -> bool:
    """Whether ``t`` is a fake tensor (shapes and dtypes, no data)."""
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(t, FakeTensor)


def fake_tensor_mode() -> Any:
    """A fake tensor mode (shapes and dtypes, no data) that takes real inputs too."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode(allow_non_fake_inputs=True)


# --- torch.compile ------------------------------------------------------------------------------


def compiled_graph_count() -> int:
    """Graphs torch.compile has compiled so far in this process."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def reset_dynamo() -> None:
    """Forget what torch.compile has compiled (a fresh start for the next compile)."""
    import torch._dynamo

    torch._dynamo.reset()


def dynamo_explain(module: Any, inputs: tuple[Any, ...]) -> Any:
    """``torch._dynamo.explain(module)(*inputs)``: the graphs Dynamo made and its break
    reasons (``graph_count``, ``graphs``, ``break_reasons`` with ``reason``, ``user_stack``)."""
    import torch._dynamo

    return torch._dynamo.explain(module)(*inputs)


#: Inductor's structured-log artifacts fxstudio reads: which post-grad nodes each kernel came
#: from and which pre-grad (the document's) nodes those came from; whether the FX graph cache
#: answered the compile.
INDUCTOR_ARTIFACTS = ("inductor_provenance_tracking_node_mappings",)
CACHE_EVENTS = ("fx_graph_cache_hit", "fx_graph_cache_miss", "fx_graph_cache_bypass")


@contextlib.contextmanager
def inductor_provenance(
    freezing: bool = False, cached: bool = True
) -> Iterator[list[tuple[str, Any]]]:
    """Inside: inductor tracks which FX nodes each kernel it generates came from, and its CPU
    kernels mark themselves for ``torch.profiler`` (``graph_<id>_<kernel>``); with
    ``freezing``, it folds the weights as constants (inference only: what is computed from
    weights alone -- layout copies, folded batch norms -- runs once, at compile time).
    Yields a list that fills, compile after compile, with ``(name, payload)``: the
    provenance artifacts of
    :data:`INDUCTOR_ARTIFACTS` (JSON text) and the cache events of :data:`CACHE_EVENTS`
    (payload None) -- read from torch's structured trace log, the one tlparse reads.

    A graph answered from inductor's FX graph cache (or AOTAutograd's) comes with the records
    of the graph that was cached -- which may have had other node names (the cache keys
    on the computation, not the names): ``cached=False`` compiles without those caches, so
    the records are of this very graph."""
    import logging

    import torch._inductor.config as inductor_config

    got: list[tuple[str, Any]] = []

    class Listener(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            meta = getattr(record, "metadata", None)
            if not isinstance(meta, dict):
                return
            if "artifact" in meta and meta["artifact"].get("name") in INDUCTOR_ARTIFACTS:
                got.append((meta["artifact"]["name"], getattr(record, "payload", None)))
            for name in CACHE_EVENTS:
                if name in meta or meta.get("artifact", {}).get("name") == name:
                    got.append((name, None))

    trace_log = logging.getLogger("torch.__trace")
    listener = Listener(logging.DEBUG)
    level = trace_log.level
    trace_log.setLevel(logging.DEBUG)
    trace_log.addHandler(listener)
    try:
        patch: dict[str, Any] = {
            "trace.provenance_tracking_level": 1,
            "cpp.enable_kernel_profile": True,
            "freezing": freezing,
        }
        if not cached:  # (AOTAutograd's cache is not used without inductor's)
            patch["fx_graph_cache"] = False
        with inductor_config.patch(patch):
            yield got
    finally:
        trace_log.removeHandler(listener)
        trace_log.setLevel(level)


# --- torch.export archives (.pt2) -------------------------------------------------------------


def load_program(path: str, weights: bool = True) -> Any:
    """``torch.export.load(path)``, faster; without ``weights`` no weight is read: parameters
    and buffers are ``meta`` tensors of their recorded shapes, strides and dtypes.  (torch
    asks ``typing`` for a class's type hints at each of a graph's hundreds of thousands of
    JSON values, 60% of a 20,000-node load; here each class's decoder is made once.)"""
    from torch.export.pt2_archive import _package

    swaps: dict[str, Any] = {"_dict_to_dataclass": _fast_dict_to_dataclass()}
    if not weights:
        original = _package._load_state_dict
        swaps["_load_state_dict"] = lambda r, name: _meta_state_dict(r, name, original)
    with _package_swapped(swaps):
        return torch.export.load(path)


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
    for m in gm.modules():  # (the steps' intermediate modules are dropped uncompiled)
        if isinstance(m, fx.GraphModule):
            m.recompile()
    return gm  # type: ignore[no-any-return]


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
    """``torch.export``'s archive reader (and its serde's decoder) with ``swaps``."""
    from torch._export.serde import serialize
    from torch.export.pt2_archive import _package

    where = [(_package, n) for n in swaps] + [(serialize, "_dict_to_dataclass")]
    old = [getattr(m, n) for m, n in where]
    for m, n in where:
        setattr(m, n, swaps[n])
    try:
        yield
    finally:
        for (m, n), v in zip(where, old, strict=True):
            setattr(m, n, v)


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
