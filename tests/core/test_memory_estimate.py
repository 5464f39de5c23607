"""The static memory estimate (issue 39), as a user would check it: a view, a reshape or an
in-place op allocates nothing; a value is freed after its last user; the peak is the one
worked out by hand on a small graph and grows linearly with the batch; parameters are counted
apart, a tied weight once; it works on symbolic_trace and torch.export graphs, on real models
(resnet50, vit_b_16, GPT-2 at 512 tokens, a LLaMA at 1,024) and on a structure-only LLaMA of
Llama-3-70B's width at 8,192 tokens -- from the recorded values, each kind of call run once
alone, not the whole graph; a record that is not what the graph makes is not used."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from torch import nn

from fxstudio.core.errors import UserError
from fxstudio.core.flows import OpenRequest, open_document
from fxstudio.core.flows.memory import MemoryRequest, memory_flow
from fxstudio.core.memory.estimate import estimate

HERE = __file__
TORCHVISION = importlib.util.find_spec("torchvision") is not None
TRANSFORMERS = importlib.util.find_spec("transformers") is not None
needs_tv = pytest.mark.skipif(not TORCHVISION, reason="torchvision is not installed")
needs_hf = pytest.mark.skipif(not TRANSFORMERS, reason="transformers is not installed")
F32 = 4


class Small(nn.Module):
    """x (8x16) -> a = x * 2 (new) -> v = a.view(128) (a view) -> r = v.relu_() (in place)
    -> b = a + 1 (new) -> c = b.reshape(16, 8) (a view) -> d = c @ w (new, 16x4) -> out."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(8, 4))

    def forward(self, x):
        a = x * 2
        v = a.view(128)
        v.relu_()
        b = a + 1
        c = b.reshape(16, 8)
        return c @ self.w


def _by_name(est):
    return {n.name: n for n in est.nodes}


def test_views_and_in_place_ops_allocate_nothing_and_values_are_freed_after_their_last_user():
    doc = open_document(OpenRequest(f"{HERE}:Small", "fx", ("8x16",)))
    est = estimate(doc.graph_module, tuple(doc.example_inputs))
    n = _by_name(est)
    block = 8 * 16 * F32  # 512 bytes
    assert [(k, n[k].bytes) for k in ("x", "mul", "view", "relu_", "add", "reshape", "matmul")] == [
        ("x", block),
        ("mul", block),
        ("view", 0),
        ("relu_", 0),
        ("add", block),
        ("reshape", 0),
        ("matmul", 16 * 4 * F32),
    ]
    assert n["view"].alias_of == "mul" and n["relu_"].alias_of == "mul"
    assert n["reshape"].alias_of == "add"
    # a's storage is read last by add (through mul, view and relu_): freed after add
    assert n["mul"].freed_after == "add"
    assert n["add"].freed_after == "matmul"  # through reshape, read by matmul
    assert n["x"].freed_after is None and n["matmul"].freed_after is None  # input, output
    # live after each node, by hand: x stays (the caller holds it)
    assert [n[k].live_bytes for k in ("x", "mul", "view", "relu_", "add", "reshape")] == [
        block,
        2 * block,
        2 * block,
        2 * block,
        2 * block,  # add made b, and a (read for the last time) was freed
        2 * block,
    ]
    assert n["matmul"].live_bytes == block + 256
    # the peak by hand: while add runs, x, a and b are live
    assert est.peak_bytes == 3 * block and est.peak_node == "add"
    assert set(est.live_at_peak) == {"x", "mul", "add"}
    assert est.params_bytes == 8 * 4 * F32 and est.buffers_bytes == 0  # not in the peak


def test_the_export_graph_of_the_same_model_has_the_same_peak():
    fx_doc = open_document(OpenRequest(f"{HERE}:Small", "fx", ("8x16",)))
    ex_doc = open_document(OpenRequest(f"{HERE}:Small", "export", ("8x16",)))
    fx_est = estimate(fx_doc.graph_module, tuple(fx_doc.example_inputs))
    ex_est = estimate(ex_doc.graph_module, tuple(ex_doc.example_inputs))
    assert ex_est.peak_bytes == fx_est.peak_bytes == 3 * 8 * 16 * F32
    views = [n for n in ex_est.nodes if "view" in n.target or "reshape" in n.target]
    assert views and all(n.bytes == 0 and n.alias_of for n in views)
    assert ex_est.params_bytes == fx_est.params_bytes


class Tied(nn.Module):
    """An embedding and an output layer sharing one weight (as GPT-2's lm_head does)."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(100, 32)
        self.out = nn.Linear(32, 100, bias=False)
        self.out.weight = self.emb.weight
        self.register_buffer("scale", torch.ones(32))

    def forward(self, ids):
        return self.out(self.emb(ids) * self.scale)


@pytest.mark.parametrize("frontend", ["fx", "export"])
def test_a_tied_weight_is_counted_once_and_buffers_apart(frontend):
    doc = open_document(OpenRequest(f"{HERE}:Tied", frontend, ("2x8:int64",)))
    est = estimate(doc.graph_module, tuple(doc.example_inputs))
    assert est.params_bytes == 100 * 32 * F32 + 32 * F32
    assert est.buffers_bytes == 32 * F32
    emb = est.module("emb")
    assert emb is not None and emb.params_bytes == 100 * 32 * F32


@needs_tv
def test_resnet50_in_place_relus_allocate_nothing_and_the_peak_grows_linearly_with_batch():
    doc = open_document(OpenRequest("torchvision.models:resnet50", "fx", ("1x3x224x224",)))
    one = memory_flow(doc).estimate
    relus = [n for n in one.nodes if n.target == "torch.nn.ReLU" or "relu" in n.name]
    assert relus and all(n.bytes == 0 and n.alias_of for n in relus if n.op == "call_module")
    peaks = [memory_flow(doc, MemoryRequest(inputs=f"{b}x3x224x224")).peak_bytes for b in (2, 4)]
    assert peaks == [2 * one.peak_bytes, 4 * one.peak_bytes]
    # parameters apart: resnet50's 25.6M float32 parameters and its batch-norm buffers
    params = sum(p.numel() for p in doc.graph_module.parameters()) * F32
    assert one.params_bytes - one.buffers_bytes == params
    assert one.module("layer1") is not None and one.module("layer1").peak_live_bytes > 0


@needs_tv
def test_vit_b_16_and_its_attention_modules():
    doc = open_document(OpenRequest("torchvision.models:vit_b_16", "fx", ("1x3x224x224",)))
    est = memory_flow(doc).estimate
    # the patches' projection: 768 channels of 14x14
    assert _by_name(est)["conv_proj"].bytes == 768 * 14 * 14 * F32
    # the MLP's widest value, 197 tokens x 3072, is made in each of the 12 layers
    wide = [n for n in est.nodes if n.bytes == 197 * 3072 * F32]
    assert len(wide) >= 12
    assert est.peak_bytes >= 197 * 3072 * F32 + 3 * 224 * 224 * F32
    assert est.module("encoder.layers.encoder_layer_0") is not None


GPT2 = "hf:gpt2(attn_implementation='eager')"


@needs_hf
def test_gpt2_at_512_tokens_makes_each_heads_scores_and_the_estimate_reads_the_record():
    doc = open_document(OpenRequest(GPT2, inputs=("1x512:int64",)))
    est = estimate(doc.graph_module, tuple(doc.example_inputs))
    scores = 12 * 512 * 512 * F32  # 12 heads, 512 x 512, float32
    softmaxes = [n for n in est.nodes if "softmax" in n.target]
    assert len(softmaxes) == 12 and all(n.bytes == scores for n in softmaxes)
    assert est.peak_bytes >= 2 * scores
    # the same from a run on fake tensors as from the recorded values
    again = estimate(doc.graph_module, tuple(doc.example_inputs), recorded=False)
    assert again.how == "fake run"
    assert [(n.name, n.bytes, n.live_bytes) for n in again.nodes] == [
        (n.name, n.bytes, n.live_bytes) for n in est.nodes
    ]


LLAMA = (
    "hf:llama(num_hidden_layers=4, hidden_size=512, intermediate_size=1376, "
    "num_attention_heads=8, num_key_value_heads=4, vocab_size=32000)"
)


@needs_hf
def test_a_llama_at_1024_tokens_per_layer_alike_and_params_apart():
    doc = open_document(OpenRequest(LLAMA, inputs=("1x1024:int64",)))
    est = estimate(doc.graph_module, tuple(doc.example_inputs))
    layers = [est.module(f"layers.{i}") for i in range(4)]
    assert all(m is not None for m in layers)
    assert len({m.bytes for m in layers}) == 1  # each layer allocates the same
    gate = 1024 * 1376 * F32
    assert sum(1 for n in est.nodes if n.bytes == gate) >= 4 * 2  # gate and up projections
    params = sum(p.numel() for p in doc.graph_module.parameters()) * F32
    assert est.params_bytes - est.buffers_bytes == params
    assert est.peak_bytes < params  # weights apart: the activations are a small share


LLAMA_70B_WIDE = (
    "hf:llama(num_hidden_layers=2, hidden_size=8192, intermediate_size=28672, "
    "num_attention_heads=64, num_key_value_heads=8, vocab_size=128256)"
)


@needs_hf
def test_a_structure_only_llama_of_70b_width_at_8192_tokens_from_the_record():
    doc = open_document(OpenRequest(LLAMA_70B_WIDE, inputs=("1x8192:int64",), weights=False))
    assert not doc.weights
    est = memory_flow(doc).estimate
    assert est.how == "recorded+calls"  # each kind of call run once, not the whole graph
    mlp = 8192 * 28672 * F32  # 896 MiB: the gate and up projections' outputs, and silu's
    assert sum(1 for n in est.nodes if n.bytes == mlp) == 2 * 4  # gate, silu, up, their product
    assert est.peak_bytes >= 3 * mlp
    # Llama-3-70B's layer: 0.86 B parameters a layer (float32 as built), embeddings 1.05 B
    layer = est.module("layers.0")
    assert layer is not None and layer.params_bytes == 855_654_400 * F32
    assert est.params_bytes > 2 * layer.params_bytes
    fake = estimate(doc.graph_module, tuple(doc.example_inputs), recorded=False)
    assert fake.peak_bytes == est.peak_bytes and fake.peak_node == est.peak_node


@pytest.mark.parametrize(
    ("spec", "frontend"),
    [
        ("tests/bench/synthetic.py:deep_100", "fx"),  # a record from a real run: meta tensors
        ("examples:transformer", "export"),  # torch.export's own record
        # export's record copies in a reshape what the graph views (and the contiguous
        # after it then copies): not the graph's own -- the graph runs whole
        pytest.param("hf:t5(num_layers=2, num_decoder_layers=2)", "export", marks=needs_hf),
    ],
)
def test_the_estimate_from_the_record_is_the_one_from_running_the_graph(spec, frontend):
    doc = open_document(OpenRequest(spec, frontend))
    est = estimate(doc.graph_module, tuple(doc.example_inputs))
    fake = estimate(doc.graph_module, tuple(doc.example_inputs), recorded=False)
    assert fake.how == "fake run"
    assert [(n.name, n.bytes, n.live_bytes, n.alias_of, n.freed_after) for n in est.nodes] == [
        (n.name, n.bytes, n.live_bytes, n.alias_of, n.freed_after) for n in fake.nodes
    ]


def test_other_input_sizes_wrong_ones_and_too_many_are_said_plainly():
    doc = open_document(OpenRequest(f"{HERE}:Small", "fx", ("8x16",)))
    assert memory_flow(doc, MemoryRequest(inputs="4x32")).peak_bytes == 3 * 8 * 16 * F32
    with pytest.raises(UserError) as caught:
        memory_flow(doc, MemoryRequest(inputs="8x15"))
    text = str(caught.value)
    assert "8x15:float32" in text and "node 'view'" in text and "input shapes" in text
    with pytest.raises(UserError, match="takes 1 input"):
        memory_flow(doc, MemoryRequest(inputs="8x16, 8x16"))
    with pytest.raises(UserError, match="not an input spec"):
        memory_flow(doc, MemoryRequest(inputs="eight"))


GPT2_EAGER_SMALL = (
    "hf:gpt2(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, attn_implementation='eager')"
)


@needs_hf
def test_fuse_attention_on_gpt2_at_1024_tokens_takes_the_scores_bytes_away():
    from fxstudio.core.flows import RewriteRequest, RewriteSpec, rewrite_flow

    base = open_document(OpenRequest(GPT2_EAGER_SMALL, inputs=("1x1024:int64",)))
    doc = open_document(OpenRequest(GPT2_EAGER_SMALL, inputs=("1x1024:int64",)))
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    assert len(report.result.replaced) == 2
    result = memory_flow(doc, MemoryRequest(), against=base)
    data = result.to_json()
    scores = 4 * 1024 * 1024 * F32  # 4 heads, 1024 x 1024, float32: 16 MiB a value
    gone = data["difference"]["gone"]
    softmaxes = [g for g in gone if "softmax" in g["name"]]
    assert len(softmaxes) == 2 and all(g["bytes"] == scores for g in softmaxes)
    assert data["before"]["peak_bytes"] >= 2 * scores > data["after"]["peak_bytes"]
    assert (
        data["difference"]["peak_bytes"]
        == data["after"]["peak_bytes"] - data["before"]["peak_bytes"]
    )
    layers = {m["path"]: m for m in data["difference"]["modules"]}
    for i in (0, 1):  # each layer's attention no longer makes its scores (and their copies)
        assert layers[f"h.{i}.attn"]["bytes"] <= -2 * scores
    assert "no longer made" in result.describe() and "MiB" in result.describe()


def test_an_export_graph_at_other_sizes_says_it_was_captured_at_fixed_ones():
    doc = open_document(OpenRequest(f"{HERE}:Small", "export", ("8x16",)))
    with pytest.raises(UserError) as caught:
        memory_flow(doc, MemoryRequest(inputs="4x32"))
    text = str(caught.value)
    assert "fixed sizes" in text and "4x32:float32" in text and "--input" in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    "spec", ["tests/bench/synthetic.py:deep_100", "examples:resnet", "examples:transformer"]
)
def test_a_fake_run_with_alike_calls_made_once_is_the_interpreters_run(spec):
    """Values made from an alike call's first value: the same layouts and the same storage
    sharing as fx.Interpreter's run of every node on fake tensors."""
    import torch.fx as fx

    from fxstudio.core.fxcompat import fake_tensor_mode
    from fxstudio.core.graph.weights import faked
    from fxstudio.core.memory.fakerun import run_fake

    doc = open_document(OpenRequest(spec, "fx"))
    gm, inputs = doc.graph_module, tuple(doc.example_inputs)

    class Keep(fx.Interpreter):
        def run_node(self, n):
            self.kept[n] = super().run_node(n)
            return self.kept[n]

    with faked(gm, inputs) as fakes, torch.no_grad():
        plain = Keep(gm, garbage_collect_values=False)
        plain.kept = {}
        plain.run(*fakes)
    mode = fake_tensor_mode()
    fakes = tuple(torch.empty_strided(t.shape, t.stride(), dtype=t.dtype) for t in inputs)
    with mode, torch.no_grad():
        fakes = tuple(mode.from_tensor(t) for t in fakes)
        values, _ = run_fake(gm, gm.graph, fakes, mode)

    def described(vals):
        first = {}
        out = []
        for node in gm.graph.nodes:
            v = vals.get(node)
            if isinstance(v, torch.Tensor) and node.op != "output":
                owner = first.setdefault(id(v.untyped_storage()), node.name)
                out.append((node.name, tuple(v.shape), v.stride(), v.dtype, owner))
        return out

    keep_alive = [v.untyped_storage() for v in plain.kept.values() if isinstance(v, torch.Tensor)]
    keep_alive += [v.untyped_storage() for v in values.values() if isinstance(v, torch.Tensor)]
    assert described(values) == described(plain.kept)
