"""The one package that touches torch's private APIs.

fxstudio needs a few things torch keeps private: the names a graph has handed out (an undo
brings a name back), how a graph generates its code, the schema of an ATen overload, the
number of graphs Dynamo compiled, fake tensors, pytrees.  Every use goes through a function
or name here, and ``tests/core/test_fxcompat.py`` checks each against the installed torch,
so a torch upgrade that moves one breaks this package and its test, not the editor.

A use big enough to be an idea of its own is a module here: ``programs``
(``.pt2`` archives read faster, or without their weights), ``autograd`` (AOTAutograd's joint
forward/backward graph, partitioned, and where its nodes come from), ``modules`` (an
``nn.Module``'s own dicts: a submodule by its path, a child placed without ``add_module``'s
checks, its state and in-place counter), ``compiler`` (torch.compile's Dynamo and Inductor:
their counters, reset, explain, and the kernels' provenance from the trace log), imported
from there.

Example:
    >>> import torch, torch.fx as fx
    >>> gm = fx.symbolic_trace(torch.nn.ReLU())
    >>> "relu" in used_names(gm.graph)
    True
    >>> qualified_name(torch.relu), is_op_overload(torch.ops.aten.relu.default)
    ('torch.relu', True)
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from collections.abc import Iterator, Mapping
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
    "compile_on_call",
    "dismantle",
    "fake_tensor_mode",
    "forward_source",
    "graph_interpreter",
    "is_compiled",
    "is_fake",
    "large_on_meta",
    "meta_like",
    "is_op_overload",
    "op_name",
    "op_registrar",
    "op_schema_arguments",
    "pytree",
    "qualified_name",
    "release_name",
    "rename_node",
    "reparametrized",
    "set_code_generator",
    "set_forward_source",
    "set_graph",
    "set_interpreter_inputs",
    "set_node_inputs",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
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
    return graph._graph_namespace._used_names


def release_name(graph: fx.Graph, name: str) -> None:
    """Let the graph hand ``name`` out again (an undo brings back the very name)."""
    graph._graph_namespace._used_names.discard(name)


def rename_node(node: fx.Node, name: str) -> None:
    """Rename ``node`` in its graph (fx may change a name it cannot use; read it back)."""
    node._rename(name)


def set_node_inputs(node: fx.Node, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Give a new node its arguments in one step: setting ``args`` then ``kwargs`` goes
    through ``Node.__setattr__`` twice, each time taking the node out of the graph's lookup
    table of nodes by op and target and putting it back.  The arguments are nodes of the
    node's own graph (not checked here)."""
    update = getattr(node, "_update_args_kwargs", None)
    if update is None:  # (a torch without it: the public way)
        node.args, node.kwargs = args, kwargs
    else:
        update(args, kwargs)


def forward_source(graph: fx.Graph) -> str:
    """``graph.python_code("self").src``, made without its two passes of ``Node.__setattr__``:
    ``python_code`` points every node's ``_repr_fn`` at its namespace for the generation and
    back after, and each of those sets takes the node out of the graph's lookup table and puts
    it back (a fifth of the code's time at 20,000 nodes).  The same namespace and the same
    generation (``Graph._python_code``), the same text; the public way on a torch without
    them."""
    generate = getattr(graph, "_python_code", None)
    namespace_type = getattr(fx.graph, "_Namespace", None)
    if generate is None or namespace_type is None:
        return graph.python_code("self").src
    namespace = namespace_type()

    def node_repr(n: fx.Node) -> str:
        return namespace.create_name(n.name, n)

    nodes = list(graph.nodes)
    kept = [n._repr_fn for n in nodes]
    set_ = object.__setattr__  # (not a field the lookup table is keyed by: op and target)
    for n in nodes:
        set_(n, "_repr_fn", node_repr)
    try:
        return generate("self", namespace).src
    finally:
        for n, fn in zip(nodes, kept, strict=True):
            set_(n, "_repr_fn", fn)
        # the generation's closures leave a cycle holding the namespace, and the namespace a
        # dict keyed by every node: emptied, the nodes are not kept alive by that garbage
        vars(namespace).clear()


def dismantle(graph: fx.Graph) -> None:
    """Break the cycles of a graph about to be dropped -- each node points at its neighbours,
    its users and its graph, the graph at its nodes -- so that reference counting frees it at
    once rather than leaving it (five objects a node) to a full collection of everything
    alive.  For a copy nothing else holds: its nodes are left empty."""
    nodes = list(graph.nodes)
    set_ = object.__setattr__  # (the fields themselves: no lookup-table or users bookkeeping)
    for n in nodes:
        n.users.clear()
        n._input_nodes.clear()
        set_(n, "_args", ())
        set_(n, "_kwargs", {})
        set_(n, "_prev", None)
        set_(n, "_next", None)
    vars(graph).clear()


def graph_interpreter(module: nn.Module, graph: fx.Graph) -> fx.Interpreter:
    """``fx.Interpreter(module, garbage_collect_values=False, graph=graph)`` without its walk of
    every submodule for ``Interpreter.submodules``, which torch's interpreter never reads (a
    subclass may): it is walked when first read.  35 ms at 20,000 submodules, most of the
    shapes after a one-node edit."""
    interp = fx.Interpreter(_STAND_IN, garbage_collect_values=False, graph=graph)
    interp.module = module
    interp.submodules = _Submodules(module)  # type: ignore[assignment]
    return interp


_STAND_IN = nn.Module()  # (one submodule to walk: itself)


class _Submodules(Mapping[str, nn.Module]):
    """``dict(module.named_modules())``, walked when first read."""

    def __init__(self, module: nn.Module) -> None:
        self._module = module
        self._walked: dict[str, nn.Module] | None = None

    def _all(self) -> dict[str, nn.Module]:
        if self._walked is None:
            self._walked = dict(self._module.named_modules())
        return self._walked

    def __getitem__(self, name: str) -> nn.Module:
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def set_graph(module: fx.GraphModule, graph: fx.Graph, recompile: bool = True) -> None:
    """Give ``module`` the graph ``graph`` (the very object); without ``recompile`` its
    forward is generated when it is first called (:func:`compile_on_call`)."""
    if recompile:
        module.graph = graph
        return
    module._graph = graph
    graph.owning_module = module
    compile_on_call(module)


def compile_on_call(module: fx.GraphModule) -> None:
    """Leave ``module``'s forward to be generated from its graph and compiled when it is
    first called or its ``code`` read (as torch's ``_LazyGraphModule`` does): Python's
    ``compile()`` of a 20,000-line forward costs half a second, and an edit that nothing runs
    after (a rewrite checked node by node, a session saved) need not pay it.  A GraphModule
    has a class of its own, so this changes ``module`` alone; ``recompile()`` puts the real
    forward back, and a copy (deepcopy, pickle) compiles its own."""
    cls = type(module)
    cls.forward = _compile_then_forward
    cls.code = _code_after_compile  # type: ignore[method-assign]
    # (GraphModule pickles and prints the code it has, not its graph's: compiled first)
    cls.__reduce__ = _reduce_after_compile  # type: ignore[method-assign]
    cls.__str__ = _str_after_compile  # type: ignore[method-assign]
    cls.__reduce_package__ = _reduce_package_after_compile  # type: ignore[method-assign]


def is_compiled(module: fx.GraphModule) -> bool:
    """Whether ``module``'s forward is its graph's (not left for :func:`compile_on_call`)."""
    return type(module).forward is not _compile_then_forward


def _compile_then_forward(self: fx.GraphModule, *args: Any, **kwargs: Any) -> Any:
    self.recompile()  # (its class's forward: the graph's own from now on)
    return type(self).forward(self, *args, **kwargs)


@property  # type: ignore[misc]
def _code_after_compile(self: fx.GraphModule) -> str:
    if not is_compiled(self):
        self.recompile()
    return fx.GraphModule.code.fget(self)  # type: ignore[attr-defined]


def _reduce_after_compile(self: fx.GraphModule) -> Any:
    if not is_compiled(self):
        self.recompile()
    return fx.GraphModule.__reduce__(self)


def _str_after_compile(self: fx.GraphModule) -> str:
    if not is_compiled(self):
        self.recompile()
    return fx.GraphModule.__str__(self)


def _reduce_package_after_compile(self: fx.GraphModule, exporter: Any) -> Any:
    if not is_compiled(self):
        self.recompile()
    return fx.GraphModule.__reduce_package__(self, exporter)


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


def reparametrized(module: nn.Module, tensors: dict[str, torch.Tensor]) -> Any:
    """A context in which ``module``'s parameters and buffers are ``tensors`` (by name)."""
    from torch.nn.utils.stateless import _reparametrize_module

    return _reparametrize_module(module, tensors)


def meta_like(t: torch.Tensor) -> torch.Tensor:
    """A ``meta`` tensor of ``t``'s shape, strides and dtype.  (``torch.empty_like(t,
    device="meta")`` does the same, but leaves glibc's heap so that the memory ``t`` frees
    is not used again: a structure-only GPT-2 of 1,500 layers, its 2.4 MB projections each
    made and then swapped for a meta one, left 3.5 GB of the process's address space
    mapped and unused -- past the bound on model code, :mod:`fxstudio.core.process.budget`.)
    """
    return torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device="meta")


def large_on_meta(limit: int) -> Any:
    """A context in which tensors made without a device (``torch.empty``, ``arange``,
    ``nn.Linear``'s weight ...) of more than ``limit`` elements are made on the ``meta``
    device and smaller ones on the CPU -- so a model built inside takes no memory for its
    weights while its small tensors (a rotary embedding's ``inv_freq``, a causal mask) keep
    their values -- and every parameter is made ``meta`` as it is registered, however small
    (a structure-only model keeps none: GPT-2's 768x768 projections, real, took 2.4 MB a
    layer, 3.5 GB of 1,500 layers, until the build was over).  ``torch.device("meta")`` with
    a size rule (``torch.utils._device``)."""
    from torch.nn.modules.module import register_module_parameter_registration_hook
    from torch.utils._device import DeviceContext, _device_constructors

    def meta_parameter(_module: nn.Module, _name: str, p: Any) -> Any:
        if p is None or p.is_meta:
            return None
        return nn.Parameter(meta_like(p), p.requires_grad)

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

        def __enter__(self) -> Any:
            self.hook = register_module_parameter_registration_hook(meta_parameter)
            return super().__enter__()

        def __exit__(self, *exc: Any) -> Any:
            self.hook.remove()
            return super().__exit__(*exc)

    return LargeOnMeta("meta")


def is_fake(t: torch.Tensor) -> bool:
    """Whether ``t`` is a fake tensor (shapes and dtypes, no data)."""
    from torch._subclasses.fake_tensor import FakeTensor

    return isinstance(t, FakeTensor)


def fake_tensor_mode() -> Any:
    """A fake tensor mode (shapes and dtypes, no data) that takes real inputs too."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode(allow_non_fake_inputs=True)
