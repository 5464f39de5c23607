"""Graph breaks (fxstudio.core.compiling.breaks): Dynamo's explain on the eager model, each
break at the user's line with its kind and advice; a model without breaks says so.  Compiled
kernels (fxstudio.core.compiling.kernels): inductor on the CPU, each kernel timed and traced to
the document's nodes, the speed-up against eager.  A model with graph breaks
(fxstudio.core.compiling.model): the eager model compiled as torch.compile does, each kernel
in its Dynamo graph, at the user's lines and the document's nodes made there."""

import textwrap

import pytest
import torch

from fxstudio.core.compiling.breaks import explain_breaks
from fxstudio.core.compiling.kernels import CompileError, compile_graph
from fxstudio.core.compiling.model import compile_model
from fxstudio.core.model.loading import load_model
from fxstudio.core.sessions.documents import open_document

BRANCHY = textwrap.dedent("""
    import torch
    from torch import nn

    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            if h.sum() > 0:
                h = h * 2
            print("h is", h.shape)
            return torch.relu(h)

    def example_inputs():
        return (torch.randn(2, 4),)
""")


def test_a_branch_and_a_print_break_the_graph_at_their_lines(write_model, capsys):
    path = write_model(BRANCHY)
    explained = explain_breaks(load_model(f"{path}:Branchy"))
    assert explained.graphs == 3 and len(explained.breaks) == 2
    branch, printed = explained.breaks
    lines = path.read_text().splitlines()
    assert (
        branch.where.file == str(path) and lines[branch.where.line - 1].strip() == "if h.sum() > 0:"
    )
    assert branch.kind == "A branch on a tensor's value" and "torch.where" in branch.advice
    assert lines[printed.where.line - 1].strip().startswith("print(")
    assert printed.kind == "print or logging" and "is_compiling" in printed.advice
    data = explained.to_json()
    assert {"reason", "file", "line", "stack"} <= set(data["graph_breaks"][0])
    # each graph's ops at the user's lines: the first computes fc and the branch's sum
    first = [lines[n - 1].strip() for f, n in explained.graph_lines(0) if f == str(path)]
    assert first == ["h = self.fc(x)", "if h.sum() > 0:"]
    assert data["graph_lines"][0][0] == {"file": str(path), "line": explained.graph_lines(0)[0][1]}
    assert "2 graph breaks" in explained.describe()


def test_a_model_without_breaks_says_so():
    explained = explain_breaks(load_model("examples:resnet"))
    assert explained.breaks == [] and explained.graphs == 1
    assert "no graph breaks" in explained.describe()


# --- compiled kernels attributed to nodes (fxstudio.core.compiling.kernels) ----------------

SMALL_CNN = textwrap.dedent("""
    import torch
    from torch import nn

    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.fc = nn.Linear(8, 4)

        def forward(self, x):
            h = torch.relu(self.bn(self.conv(x)))
            return self.fc(h.mean((2, 3)))

    def example_inputs():
        return (torch.randn(2, 3, 16, 16),)
""")


@pytest.fixture(scope="module")
def compiled_cnn(tmp_path_factory):
    path = tmp_path_factory.mktemp("cnn") / "cnn.py"
    path.write_text(SMALL_CNN)
    doc = open_document(f"{path}:SmallCNN")
    return doc, compile_graph(doc, min_time=0.2, calls=9)


def test_every_kernel_is_timed_and_traced_to_the_nodes_it_came_from(compiled_cnn):
    doc, c = compiled_cnn
    names = {n.name for n in doc.graph.nodes}
    assert c.kernels and c.attributed == 1.0
    assert all(set(k.nodes) <= names and k.time_s >= 0 for k in c.kernels)
    # the library convolution and linear belong to their nodes; the batch norm and relu
    # became a fused kernel of inductor's own, with the nodes it fused
    conv = [k for k in c.kernels if k.library and k.nodes == ("conv",)]
    assert conv and any(k.nodes == ("fc",) for k in c.kernels if k.library)
    fused = [k for k in c.kernels if not k.library and {"bn", "relu"} <= set(k.nodes)]
    assert fused, [(k.name, k.nodes) for k in c.kernels]
    assert c.kernels_of("bn") == fused
    # parts + outside = the profiled call, exactly; shares are of it
    assert sum(k.time_s for k in c.kernels) + c.unattributed_s == pytest.approx(c.profiled_s)
    assert sum(k.share for k in c.kernels) == pytest.approx(c.kernel_share)
    assert 0 < c.kernel_share <= 1
    # every computing node has a kernel or is said to have none
    covered = {n for k in c.kernels for n in k.nodes}
    computing = {n.name for n in doc.graph.nodes if n.op.startswith("call_")}
    assert covered | set(c.no_kernel) == computing and not covered & set(c.no_kernel)


def test_each_module_is_compared_with_the_kernels_of_its_own_nodes(compiled_cnn):
    _, c = compiled_cnn
    rows = {m.path: m for m in c.modules}
    assert {"conv", "bn", "fc"} <= set(rows)
    conv = rows["conv"]
    assert conv.kernels >= 1 and conv.speed is not None and conv.eager_s > 0
    assert conv.compiled_s == pytest.approx(
        sum(k.time_s for k in c.kernels if set(k.nodes) <= {"conv"}), rel=1e-6
    )
    # the batch norm was fused with the relu after it: no kernel of its own, one spanning
    assert rows["bn"].kernels == 0 and rows["bn"].speed is None and rows["bn"].spanning >= 1
    assert "per module" in c.describe()


def test_the_speedup_and_compile_times_are_reported(compiled_cnn):
    _, c = compiled_cnn
    s = c.speed
    assert s.before_s == c.eager.median_s and s.after_s == c.compiled.median_s
    assert s.ci_low <= s.speedup <= s.ci_high
    assert c.compile_s > 0 and c.warm_compile_s > 0 and c.cache in ("hit", "miss", "bypass")
    data = c.to_json()
    assert {"compile_s", "eager", "compiled", "speedup", "kernels", "unattributed_s"} <= set(data)
    assert {"name", "time_s", "share", "nodes"} <= set(data["kernels"][0])
    text = c.describe()
    assert "kernels" in text and s.describe() in text and "compiled in" in text


def test_a_fused_elementwise_chain_is_one_kernel():
    doc = open_document("examples:negrelu")
    c = compile_graph(doc, min_time=0.1, calls=9)
    made = [k for k in c.kernels if k.nodes]
    assert len(made) == 1 and set(made[0].nodes) == {"neg", "relu", "add", "mul"}


def test_frozen_weights_are_compiled_and_said(compiled_cnn):
    doc, _ = compiled_cnn
    c = compile_graph(doc, min_time=0.1, calls=9, per_module=False, freezing=True)
    assert c.freezing and c.to_json()["freezing"] is True and "freezing" in c.describe()
    assert c.kernels and c.speed.ci_low <= c.speed.speedup <= c.speed.ci_high
    if any("mkldnn" in k.name for k in c.kernels):  # a convolution fused by a pattern pass
        assert any("frozen weights" in n and "partial" in n for n in c.notes)
    assert sum(k.time_s for k in c.kernels) + c.unattributed_s == pytest.approx(c.profiled_s)
    with pytest.raises(CompileError, match="Freezing is inductor's"):
        compile_graph(doc, backend="aot_eager", freezing=True)


def test_backends_without_kernels_and_bad_choices():
    doc = open_document("examples:negrelu")
    c = compile_graph(doc, backend="aot_eager", min_time=0.1, calls=9)
    assert c.kernels == [] and any("no kernels" in n for n in c.notes)
    with pytest.raises(CompileError, match="Unknown backend"):
        compile_graph(doc, backend="tvm")
    with pytest.raises(CompileError, match="inductor's"):
        compile_graph(doc, backend="eager", mode="max-autotune")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_kernels_are_timed_on_the_device_and_traced_to_nodes(compiled_cnn):
    doc, _ = compiled_cnn
    c = compile_graph(doc, device="cuda", min_time=0.2, calls=9)
    assert c.device.startswith("cuda") and c.kernels and c.attributed >= 0.9
    assert any(k.name.startswith("triton_") and len(k.nodes) > 1 for k in c.kernels)
    assert sum(k.time_s for k in c.kernels) + c.unattributed_s == pytest.approx(c.profiled_s)


ATTENTION = textwrap.dedent("""
    import torch
    from torch import nn
    import torch.nn.functional as F

    class CausalAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(16, 48)

        def forward(self, x):
            q, k, v = self.qkv(x).view(1, 8, 3, 2, 8).permute(2, 0, 3, 1, 4)
            pos = torch.arange(x.shape[1])
            mask = pos[:, None] >= pos[None, :]
            return F.scaled_dot_product_attention(q * 2, k, v, attn_mask=mask)

    def example_inputs():
        return (torch.randn(1, 8, 16),)
""")


def test_a_library_kernel_is_its_own_nodes_not_its_inputs_lineage(write_model):
    # inductor records, as the attention fallback's origins, every node its inputs were made
    # from (the mask, the scaled query): those are the fused kernels', not the library call's
    doc = open_document(f"{write_model(ATTENTION)}:CausalAttention")
    c = compile_graph(doc, min_time=0.1, calls=9, per_module=False)
    attention = [k for k in c.kernels if "scaled_dot_product" in k.name and k.library]
    assert attention, [(k.name, k.nodes) for k in c.kernels]
    assert [k.nodes for k in attention] == [("scaled_dot_product_attention",)]
    assert any(k.nodes == ("qkv",) for k in c.kernels if k.library)
    # the mask is made by a kernel inductor generated
    assert any({"arange", "ge"} <= set(k.nodes) for k in c.kernels if not k.library)


# --- a model with graph breaks, compiled as torch.compile does (compiling.model) ------------


@pytest.fixture(scope="module")
def compiled_branchy(tmp_path_factory):
    path = tmp_path_factory.mktemp("branchy") / "model.py"
    path.write_text(BRANCHY)
    loaded = load_model(f"{path}:Branchy")
    return path, compile_model(lambda: loaded, min_time=0.1, calls=9)


def test_a_model_with_breaks_is_compiled_as_torch_compile_does(compiled_branchy):
    # symbolic tracing cannot capture it (a branch on a tensor's value): no document, and
    # the eager model is compiled all the same, each kernel placed in Dynamo's graph and at
    # the user's lines it computes
    path, c = compiled_branchy
    lines = path.read_text().splitlines()
    assert c.source == "model" and c.graphs == 3 and len(c.explained.breaks) == 2
    assert c.speed.ci_low <= c.speed.speedup <= c.speed.ci_high
    assert {k.graph for k in c.kernels} == {0, 1, 2} and c.attributed == 1.0
    at = {k.graph: {lines[n - 1].strip() for f, n in k.lines if f == str(path)} for k in c.kernels}
    assert "if h.sum() > 0:" in at[0] and at[1] == {"h = h * 2"}
    assert at[2] == {"return torch.relu(h)"}
    assert all(k.ops and not k.nodes for k in c.kernels)  # Dynamo's ops; no document
    assert sum(k.time_s for k in c.kernels) + c.unattributed_s == pytest.approx(c.profiled_s)
    data = c.to_json()
    assert data["compiled_from"] == "eager model" and len(data["graph_breaks"]) == 2
    assert {"graph", "lines", "ops"} <= set(data["kernels"][0])
    text = c.describe()
    assert "2 graph breaks" in text and "graph 3: 1 kernel" in text and "of the eager model" in text
    assert any("prints" in n for n in c.notes)  # its print, muted while timed


PRINTS = textwrap.dedent("""
    import torch
    from torch import nn

    class Prints(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            h = self.fc(x)
            print("h is", h.shape)
            return torch.relu(h)

    def example_inputs():
        return (torch.randn(2, 4),)
""")


def test_breaks_symbolic_tracing_does_not_see_are_placed_at_the_documents_nodes(write_model):
    # symbolic tracing steps over the print (the document has no break); Dynamo breaks
    # there: the eager model is compiled, its kernels tied to the nodes made at their lines
    path = write_model(PRINTS)
    doc = open_document(f"{path}:Prints")
    loaded = load_model(f"{path}:Prints")
    c = compile_model(lambda: loaded, doc, min_time=0.05, calls=9)
    assert c.source == "model" and c.graphs == 2
    by_graph = {k.graph: k.nodes for k in c.kernels if k.nodes}
    assert by_graph == {0: ("fc",), 1: ("relu",)}
    assert any("edits to it are not in this result" in n for n in c.notes)


def test_a_model_captured_whole_compiles_the_documents_graph(compiled_cnn):
    doc, _ = compiled_cnn
    calls = []

    def load():
        calls.append(1)
        return load_model(doc.request.spec)

    c = compile_model(load, doc, min_time=0.05, calls=9)
    assert c.source == "graph" and c.explained.breaks == [] and calls == [1]
    assert any(k.nodes == ("conv",) for k in c.kernels)
    assert c.to_json()["compiled_from"] == "document graph"
    # already explained: the model is not built again
    again = compile_model(load, doc, c.explained, min_time=0.05, calls=9)
    assert calls == [1] and again.source == "graph"
