"""Every private torch API fxstudio uses, through fxstudio.core.fxcompat, against the torch
installed: a torch upgrade that moves one fails here, in one place."""

import gc
import operator
import weakref

import pytest
import torch
import torch.fx as fx
from torch import nn

from fxstudio.core import fxcompat
from fxstudio.core.fxcompat import compiler, programs
from fxstudio.core.fxcompat import modules as fxmodules


def _graph_module() -> fx.GraphModule:
    return fx.symbolic_trace(nn.Sequential(nn.Linear(3, 3), nn.ReLU()))


def test_names_a_graph_handed_out_can_be_released_and_a_node_renamed():
    gm = _graph_module()
    node = next(n for n in gm.graph.nodes if n.op == "call_module")
    assert node.name in fxcompat.used_names(gm.graph)
    fxcompat.rename_node(node, "renamed")
    assert node.name == "renamed" and "renamed" in fxcompat.used_names(gm.graph)
    fxcompat.release_name(gm.graph, "renamed")
    assert "renamed" not in fxcompat.used_names(gm.graph)


def test_code_generator_round_trips_and_forward_source_runs():
    gm = _graph_module()
    codegen = fxcompat.code_generator(gm.graph)
    assert isinstance(codegen, fx.graph.CodeGen)
    other = fx.Graph()
    fxcompat.set_code_generator(other, codegen)
    assert fxcompat.code_generator(other) is codegen
    module = fx.GraphModule(gm, gm.graph)
    code = module.graph.python_code("self")
    src = code.src.replace("def forward(self, input)", "def forward(self, input)  ")
    fxcompat.set_forward_source(module, src, code.globals)
    assert module.code == src
    x = torch.randn(2, 3)
    assert torch.equal(module(x), gm(x))


def test_a_forward_left_for_its_first_call_compiles_there_and_copies_compile_their_own():
    import copy
    import pickle

    gm = _graph_module()
    x = torch.randn(2, 3)
    lin, relu = getattr(gm, "0"), getattr(gm, "1")
    second = next(n for n in gm.graph.nodes if n.op == "call_module" and n.target == "1")
    second.target = "0"  # the Linear twice: another result, and another line of code
    fxcompat.compile_on_call(gm)
    assert not fxcompat.is_compiled(gm) and fxcompat.is_compiled(_graph_module())  # its own
    assert 'getattr(self, "1")' not in gm.code and fxcompat.is_compiled(gm)  # read: compiled
    torch.testing.assert_close(gm(x), lin(lin(x)))
    second.target = "1"
    fxcompat.compile_on_call(gm)
    torch.testing.assert_close(gm(x), relu(lin(x)))  # called: compiled, then run
    assert fxcompat.is_compiled(gm) and 'getattr(self, "1")' in gm.code
    second.target = "0"
    fxcompat.compile_on_call(gm)
    assert 'getattr(self, "1")' not in str(gm)  # printed: compiled first
    fxcompat.compile_on_call(gm)
    for twin in (copy.deepcopy(gm), pickle.loads(pickle.dumps(gm))):
        torch.testing.assert_close(twin(x), lin(lin(x)))
    other = _graph_module()
    fxcompat.set_graph(other, copy.deepcopy(gm.graph), recompile=False)
    assert not fxcompat.is_compiled(other)
    twice = getattr(other, "0")
    torch.testing.assert_close(other(x), twice(twice(x)))


def test_aten_overloads_their_names_and_schemas():
    add = torch.ops.aten.add.Tensor
    assert fxcompat.is_op_overload(add) and fxcompat.is_op_overload(torch.ops.aten.add)
    assert not fxcompat.is_op_overload(torch.add)
    assert fxcompat.op_name(add) == "aten.add" == fxcompat.op_name(torch.ops.aten.add)
    names = [a.name for a in fxcompat.op_schema_arguments(torch.ops.aten.sum.dim_IntList)]
    assert names[:3] == ["self", "dim", "keepdim"]
    assert isinstance(add, fxcompat.OpOverload)
    assert isinstance(torch.ops.aten.add, fxcompat.OpOverloadPacket)


def test_qualified_names_of_functions():
    assert fxcompat.qualified_name(torch.relu) == "torch.relu"
    assert fxcompat.qualified_name(operator.add) == "_operator.add"


def test_module_state_is_a_cheap_snapshot_that_puts_back():
    gm = _graph_module()
    state = fxmodules.module_state(gm)
    weight = gm.get_submodule("0").weight
    gm.delete_submodule("0")
    fxmodules.set_module_state(gm, *state)
    assert gm.get_submodule("0").weight is weight  # the very tensor: nothing was copied


def test_own_tensors_lists_parameters_then_buffers_with_persistence():
    bn = nn.BatchNorm1d(3)
    bn.register_buffer("scratch", torch.zeros(1), persistent=False)
    got = [(kind, name, persistent) for kind, name, _t, persistent in fxmodules.own_tensors(bn)]
    assert got[:2] == [("parameter", "weight", True), ("parameter", "bias", True)]
    assert ("buffer", "running_mean", True) in got and ("buffer", "scratch", False) in got


def test_module_base_classes():
    assert isinstance(nn.BatchNorm2d(3), fxcompat.BatchNormBase)
    assert isinstance(nn.Dropout(0.1), fxcompat.DropoutBase)


def test_interpreter_inputs_feed_its_placeholders():
    gm = _graph_module()
    interp = fx.Interpreter(gm)
    x = torch.randn(1, 3)
    fxcompat.set_interpreter_inputs(interp, [x])
    first = next(iter(gm.graph.nodes))
    assert interp.run_node(first) is x


def test_fake_tensors_and_reparametrized_modules():
    lin = nn.Linear(3, 2)
    mode = fxcompat.fake_tensor_mode()
    with mode:
        fake = torch.empty(4, 3)
    state = {"weight": torch.zeros(2, 3), "bias": torch.ones(2)}
    with fxcompat.reparametrized(lin, state):
        assert torch.equal(lin(torch.randn(1, 3)), torch.ones(1, 2))
    assert tuple(fake.shape) == (4, 3)


def test_pytrees():
    tree = {"a": (torch.ones(1), 2), "b": [torch.zeros(1)]}
    assert len([t for t in fxcompat.tree_leaves(tree) if isinstance(t, torch.Tensor)]) == 2
    doubled = fxcompat.tree_map(lambda v: v * 2, {"a": 1})
    assert doubled == {"a": 2}
    leaves, spec = fxcompat.tree_flatten((1, 2))
    assert leaves == [1, 2] and isinstance(spec, fxcompat.pytree.TreeSpec)


def test_dynamo_counts_compiled_graphs_and_resets():
    compiler.reset_dynamo()
    before = compiler.compiled_graph_count()
    compiled = torch.compile(lambda x: x * 2 + 1, backend="eager")
    compiled(torch.ones(2))
    assert compiler.compiled_graph_count() == before + 1
    compiler.reset_dynamo()


def _ops_package(root, name):
    """A package whose modules register operators in each of torch.library's ways."""
    pkg = root / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "by_library.py").write_text(
        "import torch\n"
        f"lib = torch.library.Library('{name}_lib', 'DEF')\n"
        "lib.define('scale(Tensor x, float f) -> Tensor')\n"
        "lib.impl('scale', lambda x, f: x * f, 'CompositeExplicitAutograd')\n"
    )
    (pkg / "by_functions.py").write_text(
        "import torch\n"
        f"torch.library.define('{name}_fn::twice', '(Tensor x) -> Tensor')\n"
        f"@torch.library.impl('{name}_fn::twice', 'cpu')\n"
        "def twice(x):\n    return x * 2\n"
        f"@torch.library.register_fake('{name}_fn::twice')\n"
        "def twice_fake(x):\n    return torch.empty_like(x)\n"
    )
    (pkg / "by_custom_op.py").write_text(
        "import torch\n"
        f"@torch.library.custom_op('{name}_custom::plus1', mutates_args=())\n"
        "def plus1(x: torch.Tensor) -> torch.Tensor:\n    return x + 1\n"
    )


def test_the_module_that_registers_an_operator(tmp_path, monkeypatch):
    import importlib

    _ops_package(tmp_path, "fxc_ops")
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in ("by_library", "by_functions", "by_custom_op"):
        importlib.import_module(f"fxc_ops.{module}")
    registrar = fxcompat.op_registrar
    assert registrar(torch.ops.fxc_ops_lib.scale.default) == "fxc_ops.by_library"
    assert registrar(torch.ops.fxc_ops_lib.scale) == "fxc_ops.by_library"  # the packet too
    assert registrar(torch.ops.fxc_ops_fn.twice.default) == "fxc_ops.by_functions"
    assert registrar(torch.ops.fxc_ops_custom.plus1.default) == "fxc_ops.by_custom_op"
    # torch's own: ATen, prims, and libtorch's C++ operators outside aten
    assert registrar(torch.ops.aten.add.Tensor) == registrar(torch.ops.prims.add) == "torch"
    assert registrar(torch.ops.quantized.linear.default) == "torch"
    # a registration from code no module holds
    exec(
        compile(
            "import torch\nlib = torch.library.Library('fxc_nowhere', 'DEF')\n"
            "lib.define('f(Tensor x) -> Tensor')\n",
            "<string>",
            "exec",
        ),
        globals_ := {},
    )
    assert registrar(torch.ops.fxc_nowhere.f.default) is None
    assert globals_["lib"] is not None  # kept alive until here


def test_a_cpp_operator_is_registered_by_the_package_named_as_its_namespace():
    torchvision = pytest.importorskip("torchvision")
    assert torchvision is not None
    assert fxcompat.op_registrar(torch.ops.torchvision.nms.default) == "torchvision"


def test_a_program_loads_as_torch_loads_it_and_without_weights_reads_none(tmp_path):
    """fxcompat.load_program (its own decoder of the archive's JSON) gives torch's program;
    without weights, meta tensors of the same shapes; unlifted() generates torch's code."""
    from torch._export.serde import schema, serialize
    from torch.export.pt2_archive import _package

    m = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.Flatten()
    ).eval()
    x = torch.randn(2, 3, 8, 8)
    path = str(tmp_path / "m.pt2")
    torch.export.save(torch.export.export(m, (x,), strict=False), path)
    theirs = torch.export.load(path)
    ours = programs.load_program(path)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.state_dict.keys() == theirs.state_dict.keys()
    assert all(torch.equal(ours.state_dict[k], v) for k, v in theirs.state_dict.items())
    with _package.PT2ArchiveReader(path) as reader:
        name = next(n for n in reader.get_file_names() if n.startswith(_package.MODELS_DIR))
        data = serialize.json.loads(reader.read_string(name))
    fast = programs._fast_dict_to_dataclass()
    assert fast(schema.ExportedProgram, data) == serialize._dict_to_dataclass(
        schema.ExportedProgram, data
    )
    bare = programs.load_program(path, weights=False)
    assert all(t.is_meta for t in bare.state_dict.values())
    assert {k: t.shape for k, t in bare.state_dict.items()} == {
        k: t.shape for k, t in theirs.state_dict.items()
    }
    assert programs.program_weight_bytes(path) >= sum(
        t.numel() * t.element_size() for t in theirs.state_dict.values()
    )
    gm = programs.unlifted(ours)
    assert gm.code == theirs.module().code
    torch.testing.assert_close(gm(x), m(x), rtol=0, atol=0)  # one process, the same kernels


def test_a_new_node_gets_its_arguments_in_one_step_and_its_inputs_know_it():
    graph = fx.Graph()
    x = graph.placeholder("x")
    y = graph.create_node("call_function", torch.add, None, None, "y")
    fxcompat.set_node_inputs(y, (x, 1), {"alpha": 2})
    graph.output(y)
    assert y.args == (x, 1) and dict(y.kwargs) == {"alpha": 2}
    assert list(x.users) == [y] and y.all_input_nodes == [x]
    assert isinstance(y.kwargs, fx.immutable_collections.immutable_dict)
    assert graph.find_nodes(op="call_function", target=torch.add) == [y]
    assert fx.GraphModule(nn.Module(), graph)(torch.ones(1)).item() == 3


def test_forward_source_is_the_code_python_code_generates_and_leaves_the_nodes_as_they_were():
    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)))
    graph = gm.graph
    x = next(iter(graph.nodes))
    with graph.inserting_after(x):
        graph.call_function(torch.add, (x, 1))  # (unused: its value dropped in the code)
    reprs = [n._repr_fn for n in graph.nodes]
    assert fxcompat.forward_source(graph) == graph.python_code("self").src
    assert [n._repr_fn for n in graph.nodes] == reprs
    assert [repr(n) for n in graph.nodes] == [n.name for n in graph.nodes]
    assert graph.find_nodes(op="call_function", target=torch.add)  # the lookup table intact


def test_a_dismantled_copy_is_freed_at_once_its_code_made_and_the_graph_it_copied_untouched():
    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)))
    code = gm.graph.python_code("self").src
    copy = fx.Graph()
    copy.output(copy.graph_copy(gm.graph, {}))
    held = [weakref.ref(n) for n in copy.nodes]
    was = gc.isenabled()
    gc.disable()  # freed by reference counting alone, no collection
    try:
        assert fxcompat.forward_source(copy) == code  # (its namespace holds no node after)
        fxcompat.dismantle(copy)
        del copy
        assert [r() for r in held] == [None] * len(held)
    finally:
        if was:
            gc.enable()
    assert gm.graph.python_code("self").src == code  # the graph copied: as it was
    x = torch.randn(2, 3)
    assert torch.equal(fx.GraphModule(gm, gm.graph)(x), gm(x))


def test_graph_interpreter_is_the_interpreter_torch_makes_with_its_submodules_walked_when_read():
    gm = fx.symbolic_trace(nn.Sequential(nn.Linear(3, 4), nn.ReLU()))
    ours = fxcompat.graph_interpreter(gm, gm.graph)
    theirs = fx.Interpreter(gm, garbage_collect_values=False, graph=gm.graph)
    assert set(vars(ours)) == set(vars(theirs))  # (a field torch adds later is seen here)
    for name, value in vars(theirs).items():
        if name != "submodules":
            assert vars(ours)[name] == value, name
    assert ours.module is gm and ours.graph is gm.graph
    assert ours.submodules._walked is None  # not walked until read
    assert dict(ours.submodules) == theirs.submodules
    assert ours.submodules["0"] is gm.get_submodule("0")
    x = torch.randn(2, 3)
    assert torch.equal(ours.run(x), gm(x))
