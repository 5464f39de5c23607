"""fxstudio's rewrite against torch.fx's own ``replace_pattern`` on the same case, compared in
this process (same kernels, same weights): a replacement module calling its own submodule, an
ATen call with a default left out, a replacement owning a parameter on an export graph.
Where the two differ on purpose, the test says why."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.fx as fx
import torch.nn.functional as F
from torch import nn
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.model.capture import export_module
from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.patterns.making import from_function
from fxstudio.core.patterns.matcher import find
from fxstudio.core.patterns.pattern import DEFAULT_RULES, FX_RULES
from fxstudio.core.patterns.replace import rewrite
from fxstudio.core.patterns.replacements import function_replacement, replacement_module
from fxstudio.core.sessions.documents import open_document
from fxstudio.core.sessions.sessionfile import save_session

aten = torch.ops.aten


def _both(gm: fx.GraphModule, pattern, replacement, x: tuple, rules=DEFAULT_RULES, dialect="fx"):
    """(torch.fx's rewritten module, fxstudio's document) for one case, each on its own copy
    of ``gm``; ``replacement`` is the very module object both get."""
    theirs = copy.deepcopy(gm)
    traced = from_function(pattern, dialect=dialect, example_inputs=x, rules=rules)
    done = fx.replace_pattern(theirs, traced.graph_module, replacement)
    doc = GraphDocument(copy.deepcopy(gm), example_inputs=x)
    ours = rewrite(doc, traced, function_replacement(replacement))
    assert len(ours.replaced) == len(done) > 0
    return theirs, doc, ours


# --- a. a replacement module calling a submodule of its own -----------------------------------


class _Sigmoided(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sigmoid = nn.Sigmoid()
        self.submod = nn.ReLU()

    def forward(self, x):
        return self.submod(self.sigmoid(x))


class _Tanhed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.tanh = nn.Tanh()
        self.submod = nn.ReLU()

    def forward(self, x):
        return self.submod(self.tanh(x))


class _Plus1(_Sigmoided):
    def forward(self, x):
        return super().forward(x + 1)


@pytest.mark.parametrize("rules", [FX_RULES, DEFAULT_RULES], ids=["fx-rules", "default"])
def test_replaces_referenced_submodules_as_torch_fx_does(rules):
    """torch.fx's own test (test_subgraph_rewriter_replaces_referenced_submodules): the
    replacement's ``tanh`` is copied in, the pattern's ``sigmoid`` goes, and ``submod``,
    which pattern and replacement both name, is the model's."""
    model = _Plus1()
    x = (torch.randn(3, 4),)
    theirs, doc, _ = _both(fx.symbolic_trace(model), _Sigmoided(), _Tanhed(), x, rules)
    gm = doc.graph_module
    torch.testing.assert_close(gm(*x), theirs(*x))
    assert isinstance(gm.get_submodule("tanh"), nn.Tanh)
    assert gm.get_submodule("submod") is doc.graph_module.submod
    assert not hasattr(gm, "sigmoid") and not hasattr(theirs, "sigmoid")
    assert dict(gm.named_children()).keys() == dict(theirs.named_children()).keys()


_LINEAR_CLASS = """
class Projected(nn.Module):
    def __init__(self):
        super().__init__()
        self.submod = nn.Linear(4, 4)

    def forward(self, x):
        return self.submod(x)
"""

_NEG_RELU = "def pattern(x):\n    return torch.relu(torch.neg(x))\n"


class _TwoPlaces(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.submod = nn.Linear(4, 4)  # the model's own: the replacement's gets another name

    def forward(self, x):
        return torch.relu(torch.neg(x)) + torch.relu(torch.neg(self.submod(x)))


def test_a_replacement_class_calling_its_own_submodule_is_copied_in_and_undone(tmp_path):
    """A replacement written as a module class (typed in the dock, kept by a session as its
    code) calling ``self.submod``: its Linear goes into the model under a free name -- the
    model has a ``submod`` of its own -- once for both places, as torch.fx's copy does; undo
    takes it out, redo puts the same weights back, and the session makes them again."""
    x = torch.randn(2, 4)
    gm = fx.symbolic_trace(_TwoPlaces())
    doc = GraphDocument(copy.deepcopy(gm), example_inputs=(x,))
    spec = RewriteSpec(pattern_code=_NEG_RELU, replacement_code=_LINEAR_CLASS)
    report = rewrite_flow(doc, RewriteRequest(spec, allow_difference=True))
    assert len(report.result.replaced) == 2
    namespace = {"nn": nn}
    exec(_LINEAR_CLASS, namespace)  # noqa: S102 - the test's own code
    replacement = replacement_module(namespace["Projected"])  # the same weights (seeded)
    theirs = copy.deepcopy(gm)
    assert len(fx.replace_pattern(theirs, from_function(_NEG_RELU_FN).graph_module, replacement))
    # torch.fx's copy goes under `submod` -- which the model has, so torch.fx calls the
    # model's Linear instead (its "existing attribute takes precedence"); fxstudio names the
    # replacement's own `submod_1`.  Against the replacement's weights, by hand:
    lin = doc.graph_module.get_submodule("submod_1")
    own = doc.graph_module.get_submodule("submod")
    torch.testing.assert_close(lin.weight, replacement.submod.weight)
    torch.testing.assert_close(doc.graph_module(x), lin(x) + lin(own(x)))
    assert own is not lin
    torch.testing.assert_close(own.weight, gm.get_submodule("submod").weight)
    edit = report.result.edit
    edit.undo()
    assert not hasattr(doc.graph_module, "submod_1") and "torch.neg" in doc.code()
    edit.redo()
    assert doc.graph_module.get_submodule("submod_1") is lin
    session = tmp_path / "projected.fxstudio"
    (tmp_path / "model.py").write_text(
        "import torch\nfrom torch import nn\n"
        "class TwoPlaces(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.submod = nn.Linear(4, 4)\n"
        "    def forward(self, x):\n"
        "        return torch.relu(torch.neg(x)) + torch.relu(torch.neg(self.submod(x)))\n"
        "def example_inputs():\n    return (torch.randn(2, 4),)\n"
    )
    saved = open_document(f"{tmp_path / 'model.py'}:TwoPlaces")
    rewrite_flow(saved, RewriteRequest(spec, allow_difference=True))
    save_session(saved, session)
    again = open_document(str(session))
    assert not again.notes, again.notes
    torch.testing.assert_close(again.graph_module(x), saved.graph_module(x))


def _NEG_RELU_FN(x):  # noqa: N802 - the pattern above, as a function
    return torch.relu(torch.neg(x))


def test_a_replacement_class_needs_no_arguments():
    class Needs(nn.Module):
        def __init__(self, width: int) -> None:
            super().__init__()
            self.lin = nn.Linear(width, width)

        def forward(self, x):
            return self.lin(x)

    from fxstudio.core.patterns.pattern import PatternError

    with pytest.raises(PatternError, match="built without arguments"):
        function_replacement(Needs)


# --- b. an ATen call with a default left out ---------------------------------------------------


class _Pools(nn.Module):
    """Two spellings of one call: torch.export's (defaults left out, all positional) and one
    calling the ATen op with a keyword."""

    def forward(self, x):
        a = aten.max_pool2d_with_indices.default(x, [2, 2], stride=[2, 2])[0]
        return a + F.max_pool2d(x, 2)


def _pool_pattern(x):  # 3 positional + 1 keyword, a default spelled out
    return aten.max_pool2d_with_indices.default(x, [2, 2], [2, 2], padding=[0, 0])


def _pool_replacement(x):
    return aten.max_pool2d_with_indices.default(x, [2, 2], [2, 2], [0, 0], [1, 1], True)


@pytest.mark.parametrize("dialect", ["fx", "export"])
def test_an_aten_call_with_a_default_left_out_matches_as_under_fx_rules(dialect):
    """``max_pool2d_with_indices(x, [2, 2], stride=[2, 2])`` is the pattern's
    ``(x, [2, 2], [2, 2], padding=[0, 0])``: the default rules bind both by the schema (every
    argument, defaults spelled out or not, a number for an ``int[2]`` as the list), so they
    find what torch.fx's rules find -- and rewrite it to the same values."""
    x = (torch.randn(1, 2, 8, 8),)
    model = _Pools()
    gm = export_module(model, x) if dialect == "export" else fx.symbolic_trace(model)
    pools = [n for n in gm.graph.nodes if n.target == aten.max_pool2d_with_indices.default]
    assert pools, gm.code
    traced = from_function(_pool_pattern, dialect=dialect, example_inputs=x, rules=FX_RULES)
    theirs = SubgraphMatcher(traced.graph_module.graph).match(gm.graph)
    ours_fx = find(gm, traced).matches
    ours = find(gm, traced.with_rules(DEFAULT_RULES)).matches
    assert len(ours) >= len(ours_fx) == len(theirs) >= 1
    spelled = from_function(_pool_pattern, dialect="fx")  # as written, whatever the dialect
    assert len(find(gm, spelled).matches) == len(pools)
    fx_result, doc, _ = _both(gm, _pool_pattern, _pool_replacement, x, FX_RULES)
    torch.testing.assert_close(doc.graph_module(*x), fx_result(*x))


def test_a_number_for_a_fixed_size_list_is_that_list():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(aten.max_pool2d.default, (x, 2), {"padding": 0}))
    gm = fx.GraphModule(nn.Module(), g)

    def pattern(x):
        return aten.max_pool2d.default(x, [2, 2], [], [0, 0], [1, 1], False)

    assert len(find(gm, from_function(pattern)).matches) == 1
    assert not find(gm, from_function(pattern, rules=FX_RULES)).matches  # torch.fx: 2 != [2, 2]


# --- c. a replacement owning a parameter, on an export graph ---------------------------------


class _Bare(nn.Module):
    """A model whose weight is ``self.weight`` (as the pattern's and the replacement's)."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4))
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x):
        return torch.relu(F.linear(x, self.weight, self.bias)) * 2


class _Nested(nn.Module):
    """The same, its weights in a submodule (``lin.weight``)."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.lin(x)) * 2


class _LinearRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4))
        self.bias = nn.Parameter(torch.randn(4))

    def forward(self, x):
        return torch.relu(F.linear(x, self.weight, self.bias))


class _LinearSigmoid(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4) * 3)  # its own, unlike the model's
        self.scale = nn.Parameter(torch.randn(4) * 3)

    def forward(self, x):
        return torch.sigmoid(F.linear(x, self.weight)) * self.scale


@pytest.mark.parametrize("dialect", ["export", "fx"])
def test_a_replacement_parameter_the_pattern_names_too_is_the_matched_tensor(dialect):
    """Pattern and replacement both own ``self.weight``: in the replacement it stands for the
    tensor the pattern's matched -- the model's -- as in torch.fx's result (which finds it by
    name in the model); ``self.scale``, the replacement's alone, is copied in.  The
    replacement's own random ``weight`` (3 times larger) used to be copied in instead."""
    torch.manual_seed(0)
    x = (torch.randn(2, 4),)
    model = _Bare().eval()
    gm = export_module(model, x) if dialect == "export" else fx.symbolic_trace(model)
    replacement = _LinearSigmoid()
    theirs, doc, _ = _both(gm, _LinearRelu(), replacement, x, FX_RULES, dialect)
    torch.testing.assert_close(doc.graph_module(*x), theirs(*x))
    expected = torch.sigmoid(F.linear(x[0], model.weight)) * replacement.scale * 2
    torch.testing.assert_close(doc.graph_module(*x), expected)


def test_the_matched_tensor_is_bound_whatever_the_model_calls_it():
    """The model's weight is ``lin.weight``: torch.fx finds no ``weight`` in the model and
    copies the replacement's own; fxstudio takes the tensor the pattern matched."""
    torch.manual_seed(0)
    x = (torch.randn(2, 4),)
    model = _Nested().eval()
    gm = export_module(model, x)
    replacement = _LinearSigmoid()
    pattern = from_function(_LinearRelu(), dialect="export", example_inputs=x)
    doc = GraphDocument(copy.deepcopy(gm), example_inputs=x)
    assert len(rewrite(doc, pattern, function_replacement(replacement)).replaced) == 1
    expected = torch.sigmoid(F.linear(x[0], model.lin.weight)) * replacement.scale * 2
    torch.testing.assert_close(doc.graph_module(*x), expected)
    assert not any(p is replacement.weight for p in doc.graph_module.parameters())


def test_a_replacement_attribute_of_another_kind_is_its_own():
    """The pattern's ``self.act`` is a ReLU, the replacement's a GELU: the replacement means
    its own (torch.fx would call the model's ReLU, finding ``act`` by name)."""

    class Act(nn.Module):
        def __init__(self, act: nn.Module) -> None:
            super().__init__()
            self.act = act

        def forward(self, x):
            return self.act(x) + 1

    x = (torch.randn(2, 4),)
    doc = GraphDocument(fx.symbolic_trace(Act(nn.ReLU())), example_inputs=x)
    done = rewrite(doc, from_function(_Only(nn.ReLU())), function_replacement(_Only(nn.GELU())))
    assert len(done.replaced) == 1
    torch.testing.assert_close(doc.graph_module(*x), F.gelu(x[0]) + 1)


class _Only(nn.Module):
    def __init__(self, act: nn.Module) -> None:
        super().__init__()
        self.act = act

    def forward(self, x):
        return self.act(x)
