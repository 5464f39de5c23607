"""Pattern matching, explanations and rewrites (no QApplication)."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.patterns.builtins import run_builtin
from fxstudio.core.patterns.check import check, reference
from fxstudio.core.patterns.explain import explain
from fxstudio.core.patterns.making import from_function, from_nodes
from fxstudio.core.patterns.matcher import find
from fxstudio.core.patterns.pattern import DEFAULT_RULES, FX_RULES, PatternError, Rules
from fxstudio.core.patterns.reasons import Why
from fxstudio.core.patterns.replace import rewrite
from fxstudio.core.patterns.replacements import function_replacement
from fxstudio.core.sessions.documents import open_document


def _fx_sets(gm: fx.GraphModule, pattern_gm: fx.GraphModule) -> list[frozenset[str]]:
    matches = SubgraphMatcher(pattern_gm.graph).match(gm.graph)
    return [
        frozenset(g.name for p, g in m.nodes_map.items() if p.op not in ("placeholder", "output"))
        for m in matches
    ]


@pytest.mark.parametrize("frontend", ["fx", "export"])
@pytest.mark.parametrize("example", ["negrelu", "simple", "resnet", "transformer"])
def test_same_matches_as_subgraph_matcher_under_its_rules(example: str, frontend: str) -> None:
    """Oracle: every two-node chain of the graph as a pattern, matched by both engines."""
    doc = open_document(OpenRequest(f"examples:{example}", frontend))
    gm = doc.graph_module
    tried = 0
    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        producers = [a for a in node.all_input_nodes if a.op.startswith("call")]
        for p in producers[:1]:
            pattern = from_nodes(doc, [p.name, node.name], rules=FX_RULES)
            ours = [frozenset(m.nodes.values()) for m in find(gm, pattern).matches]
            assert ours == _fx_sets(gm, pattern.graph_module), (example, node.name)
            tried += 1
    assert tried > 0


def _chain(blocks: int) -> fx.GraphModule:
    g = fx.Graph()
    x, w, b = g.placeholder("x"), g.placeholder("w"), g.placeholder("b")
    for _ in range(blocks):
        m = g.call_function(torch.matmul, (x, w))
        r = g.call_function(torch.relu, (g.call_function(operator.add, (m, b)),))
        x = g.call_function(operator.add, (r, x))
    g.output(x)
    return fx.GraphModule(nn.Module(), g)


def test_two_output_pattern_matches_as_subgraph_matcher_does() -> None:
    def two(x, w, b):
        m = torch.matmul(x, w)
        return torch.relu(m + b), torch.sigmoid(m)

    g = fx.Graph()
    x, w, b = g.placeholder("x"), g.placeholder("w"), g.placeholder("b")
    for _ in range(20):
        m = g.call_function(torch.matmul, (x, w))
        r = g.call_function(torch.relu, (g.call_function(operator.add, (m, b)),))
        s = g.call_function(torch.sigmoid, (m,))
        x = g.call_function(operator.add, (r, s))
    g.output(x)
    gm = fx.GraphModule(nn.Module(), g)
    pattern = from_function(two, rules=FX_RULES)
    ours = [frozenset(m.nodes.values()) for m in find(gm, pattern).matches]
    assert len(ours) == 20
    assert ours == _fx_sets(gm, pattern.graph_module)


def _first_miss(graph_fn, pattern_fn, rules: Rules = FX_RULES):
    gm = fx.symbolic_trace(graph_fn)
    pattern = from_function(pattern_fn, rules=rules)
    assert find(gm, pattern).matches == []
    near = explain(gm, pattern).near
    assert near, "an explanation"
    return near[0]


class _Lin(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.proj(x))


class _LinPattern(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


@pytest.mark.parametrize(
    ("graph_fn", "pattern_fn", "why", "culprit", "found_with"),
    [
        (  # commuted add
            lambda x, w, b: torch.relu(b + torch.matmul(x, w)),
            lambda x, w, b: torch.relu(torch.matmul(x, w) + b),
            Why.ORDER,
            "add",
            {"commutative": True},
        ),
        (  # keyword vs positional
            lambda x: torch.sum(x, dim=1),
            lambda x: torch.sum(x, 1),
            Why.KEYWORD,
            "sum_1",
            {"arguments": "normalize"},
        ),
        (  # literal 1.0 vs 2.0
            lambda x: x + 2.0,
            lambda x: x + 1.0,
            Why.LITERAL,
            "add",
            {"literals": "any"},
        ),
        (  # x.relu() vs torch.relu(x)
            lambda x: (x * 2).relu(),
            lambda x: torch.relu(x * 2),
            Why.OP,
            "relu",
            {"spelling": "equivalent"},
        ),
        (  # F.relu vs torch.relu
            lambda x: F.relu(x * 2),
            lambda x: torch.relu(x * 2),
            Why.TARGET,
            "relu",
            {"spelling": "equivalent"},
        ),
    ],
)
def test_each_reason_names_its_culprit(graph_fn, pattern_fn, why, culprit, found_with) -> None:
    miss = _first_miss(graph_fn, pattern_fn)
    assert (miss.why, miss.culprit) == (why, culprit), miss.describe()
    gm = fx.symbolic_trace(graph_fn)
    relaxed = Rules(**{**FX_RULES.__dict__, **found_with})
    assert len(find(gm, from_function(pattern_fn, rules=relaxed)).matches) == 1


def test_module_name_differs_and_by_type_finds_it() -> None:
    miss = _first_miss(_Lin(), _LinPattern)
    assert (miss.why, miss.culprit) == (Why.MODULE_NAME, "proj")
    assert "by type" in miss.hint
    assert len(find(fx.symbolic_trace(_Lin()), from_function(_LinPattern)).matches) == 1


def test_outside_user_is_the_reason_and_can_be_allowed() -> None:
    def graph(x):
        a = torch.neg(x)
        return torch.relu(a * 3) + torch.sigmoid(a)

    def pattern(x):
        return torch.relu(torch.neg(x) * 3)

    gm = fx.symbolic_trace(graph)
    found = find(gm, from_function(pattern, rules=FX_RULES))
    assert found.matches == [] and found.skipped[0].failure.why is Why.OUTSIDE_USER
    assert found.skipped[0].failure.other == "sigmoid"
    allowed = Rules(**{**FX_RULES.__dict__, "outside_users": True})
    assert len(find(gm, from_function(pattern, rules=allowed)).matches) == 1


def test_a_cycle_is_refused_without_searching_the_graph() -> None:
    def graph(x):
        a = torch.neg(x)
        b = torch.sigmoid(a)
        return torch.relu(a + b)

    def pattern(x, y):
        a = torch.neg(x)
        return a, torch.relu(a + y)

    found = find(fx.symbolic_trace(graph), from_function(pattern, rules=FX_RULES))
    assert found.matches == []
    assert found.skipped[0].failure.why is Why.CYCLE
    assert found.skipped[0].failure.other == "sigmoid"


def test_overlapping_matches_are_skipped_with_the_match_they_overlap() -> None:
    def graph(x):
        return torch.relu(torch.relu(torch.relu(x)))

    def pattern(x):
        return torch.relu(torch.relu(x))

    gm = fx.symbolic_trace(graph)
    found = find(gm, from_function(pattern))
    assert [sorted(m.graph_nodes) for m in found.matches] == [["relu", "relu_1"]]
    assert found.skipped[0].failure.why is Why.OVERLAP and found.skipped[0].failure.other == "1"


def test_dialect_mismatch_is_said() -> None:
    doc = open_document(OpenRequest("examples:negrelu", "export"))

    def pattern(x):
        return torch.neg(x)

    p = from_function(pattern, dialect="fx")
    gm = doc.graph_module
    assert find(gm, p).warnings and "--frontend export" in find(gm, p).warnings[0]
    assert explain(gm, p).near[0].why is Why.DIALECT
    assert len(find(gm, from_function(pattern, dialect="export")).matches) == 1


def test_why_not_here_names_the_node() -> None:
    def graph(x):
        return torch.relu(x + 1.0) + torch.relu(x + 2.0)

    def pattern(x):
        return torch.relu(x + 1.0)

    gm = fx.symbolic_trace(graph)
    e = explain(gm, from_function(pattern), at="relu_1")
    assert e.at is not None and e.at.why is Why.LITERAL and e.at.argument == "args[1]"


def test_replace_all_is_one_undo_step_and_undo_gives_the_code_back() -> None:
    doc = open_document("examples:negrelu")
    code = doc.code()

    def pattern(x, y):
        return torch.neg(x) + torch.relu(y)

    def replacement(x, y):
        return torch.relu(x)

    history = len(doc.history)
    done = rewrite(doc, from_function(pattern), function_replacement(replacement))
    assert len(doc.history) == history + 1 and len(done.replaced) == 1
    assert "neg" not in doc.code()
    new = doc.node("relu")
    assert new.meta["fxstudio_rewrite"]["from"] == ["neg", "relu", "add"]
    assert new.meta.get("val") is not None  # shapes propagated to the new node (#187945)
    after = doc.code()
    done.edit.undo()
    assert doc.code() == code
    done.edit.redo()
    assert doc.code() == after


def test_replacement_signature_is_checked() -> None:
    doc = open_document("examples:negrelu")

    def pattern(x, y):
        return torch.neg(x) + torch.relu(y)

    with pytest.raises(PatternError, match="takes 1 argument"):
        rewrite(doc, from_function(pattern), function_replacement(lambda x: x))
    assert "neg" in doc.code()


def test_back_to_back_matches_follow_the_replacement() -> None:
    """pytorch#159613: cat(cat(a, b), c) with the pattern cat([x, y])."""

    def graph(a, b, c):
        return torch.cat([torch.cat([a, b]), c])

    def pattern(x, y):
        return torch.cat([x, y])

    def replacement(x, y):
        return torch.cat([y, x])

    gm = fx.symbolic_trace(graph)
    from fxstudio.core.graph.document import GraphDocument

    a, b, c = torch.randn(1, 2), torch.randn(2, 2), torch.randn(3, 2)
    doc = GraphDocument(gm, example_inputs=(a, b, c))
    rewrite(doc, from_function(pattern), function_replacement(replacement))
    doc.graph.lint()
    assert torch.equal(doc.graph_module(a, b, c), torch.cat([c, torch.cat([b, a])]))


def test_identity_replacement_and_adjacent_matches() -> None:
    """pytorch#97817 (replacement = its input) and #98974 (adjacent matches removed)."""

    def graph(x):
        return torch.neg(torch.neg(torch.neg(torch.neg(x))))

    def pattern(x):
        return torch.neg(x)

    from fxstudio.core.graph.document import GraphDocument

    x = torch.randn(3)
    doc = GraphDocument(fx.symbolic_trace(graph), example_inputs=(x,))
    done = rewrite(doc, from_function(pattern), function_replacement(lambda x: x))
    assert len(done.replaced) == 4
    assert [n.op for n in doc.graph.nodes] == ["placeholder", "output"]
    assert torch.equal(doc.graph_module(x), x)


def test_fold_conv_bn_on_a_resnet_checks_and_leaves_no_batchnorm() -> None:
    doc = open_document("examples:resnet")
    before = reference(doc)
    done = run_builtin(doc, "fold-conv-bn")
    assert done.replaced and not done.skipped
    assert not any(isinstance(m, nn.BatchNorm2d) for m in doc.graph_module.modules())
    assert check(doc, before, exact=False).ok
    done.edit.undo()
    assert any(isinstance(m, nn.BatchNorm2d) for m in doc.graph_module.modules())


def test_a_folded_conv_keeps_its_own_module_and_source_line() -> None:
    """The Module column and the inspector's source of a folded conv are the conv's, not
    those of the BatchNorm the match is anchored on (the table said layer1.0.bn1)."""
    doc = open_document("examples:resnet")
    gm = doc.graph_module
    convs = [
        n.name
        for n in doc.graph.nodes
        if n.op == "call_module" and isinstance(gm.get_submodule(n.target), nn.Conv2d)
    ]
    before = {n: (doc.row(n).module_path, doc.source_location(n)) for n in convs}
    assert before["layer1_0_conv1"][0] == "layer1.0.conv1"
    done = run_builtin(doc, "fold-conv-bn")
    assert len(done.replaced) == len(convs) == 15 and not done.skipped
    after = {n: (doc.row(n).module_path, doc.source_location(n)) for n in convs}
    assert after == before
    assert not any(
        doc.row(n.name).module_path.split(".")[-1].startswith("bn") for n in doc.graph.nodes
    )
    groups = {g.path: g.nodes for g in doc.module_tree().walk()}
    assert "layer1_0_conv1" in groups["layer1.0.conv1"] and "layer1.0.bn1" not in groups
    done.edit.undo()
    assert doc.row("layer1_0_bn1").module_path == "layer1.0.bn1"


class _Shared(nn.Module):
    """A conv called twice, once before a BatchNorm (pytorch#104593), and a conv whose output
    has another user."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.bn = nn.BatchNorm2d(3)
        self.conv2 = nn.Conv2d(3, 3, 1)
        self.bn2 = nn.BatchNorm2d(3)

    def forward(self, x):
        y = self.bn(self.conv(x)) + self.conv(x)
        z = self.conv2(y)
        return self.bn2(z) + z


def test_fold_skips_a_shared_conv_and_a_conv_with_other_users() -> None:
    from fxstudio.core.graph.document import GraphDocument

    model = _Shared().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-1, 1)
        model.bn.running_var.uniform_(0.5, 2)
    x = torch.randn(1, 3, 4, 4)
    doc = GraphDocument(fx.symbolic_trace(model), example_inputs=(x,))
    code = doc.code()
    done = run_builtin(doc, "fold-conv-bn")
    assert done.edit is None and doc.code() == code
    assert "also called by" in done.skipped[0][1]
    assert [s.failure.why for s in done.found.skipped] == [Why.OUTSIDE_USER]


def test_other_builtins_on_real_graphs() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.drop = nn.Dropout(0.5)
            self.id = nn.Identity()
            self.act = nn.ReLU()

        def forward(self, x):
            y = self.id(self.drop(x) * 1) + 0
            unused = torch.sigmoid(y)  # noqa: F841
            return self.act(F.relu(y.contiguous()))

    from fxstudio.core.graph.document import GraphDocument
    from fxstudio.core.graph.propagation import propagate_shapes

    x = torch.randn(2, 3)
    gm = fx.symbolic_trace(Net().eval())
    gm.graph.eliminate_dead_code = lambda: None  # keep the dead node for dce
    propagate_shapes(gm, (x,))
    doc = GraphDocument(gm, example_inputs=(x,))
    expected = gm(x)
    for name in ("drop-dropout", "remove-noops", "dce", "swap-activation:relu:gelu"):
        before = reference(doc)
        done = run_builtin(doc, name)
        assert done.replaced, name
        assert check(doc, before, exact=not name.startswith("swap")).ok or name.startswith("swap")
    ops = [n.op for n in doc.graph.nodes]
    assert ops == ["placeholder", "call_function", "call_function", "output"]
    assert torch.allclose(doc.graph_module(x), F.gelu(F.gelu(x)))
    assert not torch.equal(expected, doc.graph_module(x))


def test_session_replays_a_rewrite(tmp_path) -> None:
    from fxstudio.core.sessions.sessionfile import save_session

    doc = open_document("examples:resnet")
    rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    code = doc.code()
    path = tmp_path / "r.fxstudio"
    save_session(doc, str(path))
    again = open_document(str(path))
    assert again.code() == code


def test_default_rules_find_what_fx_rules_miss() -> None:
    def graph(x, w, b):
        return F.relu(b + x @ w)

    def pattern(x, w, b):
        return torch.relu(torch.matmul(x, w) + b)

    gm = fx.symbolic_trace(graph)
    assert find(gm, from_function(pattern, rules=FX_RULES)).matches == []
    assert len(find(gm, from_function(pattern, rules=DEFAULT_RULES)).matches) == 1


class _Attention(nn.Module):
    """Hand-written attention, two spellings: / sqrt(d) with F.softmax, or @ and * with a
    mask, .softmax and a dropout."""

    def __init__(self, style: int) -> None:
        super().__init__()
        self.style = style
        self.drop = nn.Dropout(0.1)

    def forward(self, q, k, v, mask):
        if self.style == 0:
            return torch.matmul(F.softmax(torch.matmul(q, k.transpose(-2, -1)) / 4.0, dim=-1), v)
        a = (q @ k.transpose(2, 3)) * 0.25 + mask
        return self.drop(a.softmax(dim=-1)) @ v


@pytest.mark.parametrize("style", [0, 1])
def test_fuse_attention_into_sdpa(style: int) -> None:
    from fxstudio.core.graph.document import GraphDocument
    from fxstudio.core.graph.propagation import propagate_shapes

    gen = torch.Generator().manual_seed(0)
    x = tuple(torch.randn(2, 4, 8, 16, generator=gen) for _ in range(3))
    x = (*x, torch.randn(2, 1, 8, 8, generator=gen))
    gm = fx.symbolic_trace(_Attention(style).eval())
    propagate_shapes(gm, x)
    doc = GraphDocument(gm, example_inputs=x)
    before = reference(doc)
    done = run_builtin(doc, "fuse-attention")
    assert len(done.replaced) == 1
    calls = [n.target for n in doc.graph.nodes if n.op == "call_function"]
    assert calls == [F.scaled_dot_product_attention]
    assert check(doc, before, exact=False).ok


def test_builtins_say_which_capture_they_read() -> None:
    doc = open_document(OpenRequest("examples:resnet", "export"))
    with pytest.raises(PatternError, match="--frontend fx"):
        run_builtin(doc, "swap-activation:relu:gelu")  # torch functions only (the folds: both)


def test_modules_by_type_and_attributes() -> None:
    doc = open_document("examples:resnet")
    conv = next(n for n in doc.graph.nodes if n.op == "call_module" and "conv" in str(n.target))
    kernel = doc.graph_module.get_submodule(str(conv.target)).kernel_size
    by_type = from_nodes(doc, [conv.name])
    by_attrs = by_type.with_rules(Rules(module="attrs", attrs=("kernel_size",)))
    convs = [
        n
        for n in doc.graph.nodes
        if n.op == "call_module"
        and isinstance(doc.graph_module.get_submodule(str(n.target)), nn.Conv2d)
    ]
    same = [n for n in convs if doc.graph_module.get_submodule(str(n.target)).kernel_size == kernel]
    gm = doc.graph_module
    assert len(find(gm, by_type).matches) == len(convs)
    assert len(find(gm, by_attrs).matches) == len(same) < len(convs)
    near = [f for f in explain(gm, by_attrs).near if f.why is Why.MODULE_ATTRS]
    assert near and "kernel_size" in near[0].text


def test_fold_linear_bn() -> None:
    from fxstudio.core.graph.document import GraphDocument

    model = nn.Sequential(
        nn.Linear(6, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 3), nn.BatchNorm1d(3)
    ).eval()
    with torch.no_grad():
        for bn in (model[1], model[4]):
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2)
            bn.weight.uniform_(0.5, 2)
    x = torch.randn(4, 6)
    doc = GraphDocument(fx.symbolic_trace(model), example_inputs=(x,))
    before = reference(doc)
    done = run_builtin(doc, "fold-linear-bn")
    assert len(done.replaced) == 2
    assert not any(isinstance(m, nn.BatchNorm1d) for m in doc.graph_module.modules())
    assert check(doc, before, exact=False).ok


def _one_call(target, args, kwargs) -> fx.GraphModule:
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(target, (x, *args), kwargs))
    return fx.GraphModule(nn.Module(), g)


@pytest.mark.parametrize(
    "graph, pattern, dialect, fx_too",
    [
        (  # keyword in the graph, positional in the pattern torch.export traced
            _one_call(torch.ops.aten.sum.dim_IntList, ([1],), {"keepdim": True}),
            lambda x: torch.sum(x, 1, keepdim=True),
            "export",
            True,
        ),
        (  # a default spelled out in the graph, left out in the pattern
            _one_call(torch.ops.aten.leaky_relu.default, (), {"negative_slope": 0.01}),
            lambda x: F.leaky_relu(x),
            "export",
            True,
        ),
        (  # an overloaded torch builtin in a traced graph (torch.fx's rules: no match)
            _one_call(torch.sum, (1, True), {}),
            lambda x: torch.sum(x, 1, keepdim=True),
            "fx",
            False,
        ),
    ],
    ids=["aten-keyword", "aten-default", "builtin-overload"],
)
def test_calls_are_bound_by_their_schema_under_the_default_rules(graph, pattern, dialect, fx_too):
    """The default rules are at least as good as torch.fx's: an ATen op is bound by its
    schema (its Python signature is ``*args, **kwargs``), a torch builtin by the one of its
    overloads the call fits -- keyword or positional, a default given or left out."""
    assert len(find(graph, from_function(pattern, dialect=dialect)).matches) == 1
    fx_rules = from_function(pattern, dialect=dialect, rules=FX_RULES)
    assert len(find(graph, fx_rules).matches) == (1 if fx_too else 0)


def test_a_replacement_with_its_own_tensors_brings_them_into_the_model_and_undo_takes_them():
    """Its parameter and buffer are set on the model under free names (once, however many
    places), saved with the weights; undo takes them away again."""

    class Scaled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = nn.Parameter(torch.full((1,), 2.0))
            self.register_buffer("shift", torch.ones(1))

        def forward(self, x):
            return torch.relu(x) * self.scale + self.shift

    def pattern(x):
        return torch.relu(x)

    doc = open_document("examples:negrelu")
    x, y, z = doc.example_inputs
    result = rewrite(doc, from_function(pattern), function_replacement(Scaled()))
    assert result.edit is not None and len(result.replaced) == 1
    gm = doc.graph_module
    assert isinstance(gm.get_parameter("scale"), nn.Parameter)
    assert "shift" in dict(gm.named_buffers())
    expected = (torch.neg(x) + (torch.relu(y) * 2.0 + 1.0)) * z
    torch.testing.assert_close(gm(x, y, z), expected)  # one process, same kernels
    result.edit.undo()
    assert not hasattr(doc.graph_module, "scale") and not hasattr(doc.graph_module, "shift")
    torch.testing.assert_close(doc.graph_module(x, y, z), (torch.neg(x) + torch.relu(y)) * z)


def test_fold_conv_bn_folds_an_export_graphs_aten_calls_and_undo_puts_them_back(tmp_path):
    from fxstudio.core.saving.export import export
    from fxstudio.core.saving.verify import run_standalone

    doc = open_document(OpenRequest("examples:resnet", "export"))
    before = doc.graph_module.code
    norms = [n for n in doc.graph.nodes if n.target == torch.ops.aten.batch_norm.default]
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    assert len(report.result.replaced) == len(norms) == 15
    assert report.check is not None and report.check.ok, report.check.describe()
    assert not [n for n in doc.graph.nodes if n.target == torch.ops.aten.batch_norm.default]
    conv = doc.node("conv2d")  # the first conv keeps its name, now on the folded weights
    assert conv.args[1].target.endswith("_folded") and conv.args[2] is not None
    folded = doc.node("conv2d_1")  # in its own module, not the BatchNorm's
    assert list(folded.meta["nn_module_stack"].values())[-1][0] == "layer1.0.conv1"
    out = tmp_path / "folded.py"  # saved, it runs without fxstudio as the editor's model does
    export(doc, out)
    with torch.no_grad():
        expected = [doc.graph_module(*doc.example_inputs)]
    assert run_standalone(out, doc.example_inputs, expected).one_thread.within_tolerance
    report.result.edit.undo()
    assert doc.graph_module.code == before


def test_fold_linear_bn_on_an_export_graph_and_a_shared_output_is_skipped(write_model):
    path = write_model(
        "import torch\n"
        "from torch import nn\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc, self.bn = nn.Linear(4, 6), nn.BatchNorm1d(6)\n"
        "        self.fc2, self.bn2 = nn.Linear(6, 6), nn.BatchNorm1d(6)\n"
        "        for bn in (self.bn, self.bn2):\n"
        "            bn.running_mean.uniform_(-1, 1); bn.running_var.uniform_(0.5, 2)\n"
        "    def forward(self, x):\n"
        "        h = self.fc2(self.bn(self.fc(x)))\n"
        "        return self.bn2(h) + h  # fc2's output is read twice: not folded\n"
        "def example_inputs():\n    return (torch.randn(3, 4),)\n"
    )
    doc = open_document(OpenRequest(f"{path}:Net", "export"))
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-linear-bn")))
    assert len(report.result.replaced) == 1
    assert [why for _, why in report.result.skipped] == ["linear_1's output is also used by add"]
    assert report.check is not None and report.check.ok, report.check.describe()


def test_remove_noops_on_an_export_graph(write_model):
    """``x * 1``, ``+ 0`` and ``.float()`` of a float as ``torch.export`` spells them
    (``aten.mul.Tensor``, ``aten.add.Tensor``, ``aten.to.dtype``) go; the values stay."""
    path = write_model(
        "import torch\n"
        "from torch import nn\n"
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        h = (self.fc(x) * 1).contiguous() + 0\n"
        "        return torch.relu(h.float().to(torch.float32))\n"
        "def example_inputs():\n    return (torch.randn(2, 4),)\n"
    )
    doc = open_document(OpenRequest(f"{path}:Net", "export"))
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="remove-noops")))
    assert len(report.result.replaced) == 4
    assert report.check is not None and report.check.ok
    targets = {str(n.target) for n in doc.graph.nodes if n.op == "call_function"}
    assert not targets & {"aten.mul.Tensor", "aten.add.Tensor", "aten.to.dtype"}


def test_fuse_attention_says_plainly_when_the_attention_is_fused_already(write_model):
    path = write_model(
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from torch import nn\n"
        "class Net(nn.Module):\n"
        "    def forward(self, q, k, v):\n"
        "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
        "def example_inputs():\n"
        "    return tuple(torch.randn(1, 2, 4, 8) for _ in range(3))\n"
    )
    report = rewrite_flow(
        open_document(f"{path}:Net"), RewriteRequest(RewriteSpec(builtin="fuse-attention"))
    )
    assert report.result.edit is None
    assert any("1 attention call is already fused" in w for w in report.result.found.warnings)
    assert any("already fused" in line for line in report.describe())


def test_fused_transformers_attention_says_how_to_open_it_written_out_and_that_works():
    """GPT-2 opens with SDPA: fuse-attention said so, not how to see the attention it
    fuses.  It names the spec that opens it eager, and that spec's attention is fused."""
    small = "hf:gpt2(n_layer=1, n_embd=32, n_head=2, vocab_size=64)"
    report = rewrite_flow(
        open_document(OpenRequest(small, inputs=("1x8:int64",))),
        RewriteRequest(RewriteSpec(builtin="fuse-attention"), dry_run=True),
    )
    (warning,) = [w for w in report.result.found.warnings if "already fused" in w]
    eager = warning.split("open ")[-1]
    assert (
        eager
        == 'hf:gpt2(n_layer=1, n_embd=32, n_head=2, vocab_size=64, attn_implementation="eager")'
    )
    doc = open_document(OpenRequest(eager, inputs=("1x8:int64",)))
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fuse-attention")))
    assert len(report.result.replaced) == 1 and report.check is not None and report.check.ok
    assert not [w for w in report.result.found.warnings if "already fused" in w]


def test_the_torch_fx_demo_is_meant_to_change_the_values() -> None:
    """relu(x) is not neg(x) + relu(y): its check informs, it does not fail (the window
    would hold it back and the command line refuse it)."""
    report = rewrite_flow(
        open_document("examples:negrelu"), RewriteRequest(RewriteSpec(builtin="negrelu"))
    )
    assert report.check is not None and not report.check.ok
    assert report.intended and not report.check_failed
    assert "found other values (as intended)" in report.check.describe(report.intended)


class _SmallOps(nn.Module):
    """Small ops (the check runs its three inputs as one vmapped run), and two that vmap
    cannot batch, switched on: a random op, a value read with .item()."""

    def __init__(self, odd: str = "") -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.odd = odd

    def forward(self, x, ids):
        y = torch.relu(self.fc(x)) * 2 + ids.float()[:, None]
        if self.odd == "random":
            y = y + torch.rand_like(y) * 0
        if self.odd == "item":
            y = y * y.abs().max().item()
        return y, y.sum(-1)


@pytest.mark.parametrize("odd", ["", "random", "item"])
def test_the_check_runs_its_inputs_batched_with_the_values_of_one_run_each(odd, monkeypatch):
    from fxstudio.core.graph.document import GraphDocument
    from fxstudio.core.graph.execution import run_nodes
    from fxstudio.core.patterns import check as check_module

    gm = fx.symbolic_trace(_SmallOps(odd).eval())
    doc = GraphDocument(gm, example_inputs=(torch.randn(2, 8), torch.tensor([1, 2])))
    batched: list = []
    real = check_module._batched
    monkeypatch.setattr(  # (watched, not changed)
        check_module, "_batched", lambda *a: batched.append(real(*a)) or batched[-1]
    )
    before = reference(doc)
    assert len(before.inputs) == 3
    with torch.no_grad():  # one run each: the very values (this process, this CPU)
        for inputs, outputs in zip(before.inputs, before.outputs, strict=True):
            each = run_nodes(gm, gm.graph, inputs)
            if odd != "random":
                assert all(torch.equal(a, b) for a, b in zip(outputs, each, strict=True))
    if odd:  # vmap refused: one run each, and the check still passes
        assert batched == [] or batched == [None]
    else:
        assert batched and batched[0] is not None
    rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="swap-activation:relu:relu")))
    assert check(doc, before, exact=True).ok
