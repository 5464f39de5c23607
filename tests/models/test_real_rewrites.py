"""Pattern rewriting on real models: torchvision classifiers and transformers models."""

import subprocess
import sys

import pytest
import torch
from torch import nn
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.patterns.builtins import run_builtin
from fxstudio.core.patterns.check import check, reference
from fxstudio.core.patterns.making import from_nodes
from fxstudio.core.patterns.matcher import find
from fxstudio.core.patterns.ops import dialect_of
from fxstudio.core.patterns.pattern import DEFAULT_RULES, FX_RULES
from fxstudio.core.sessions.documents import open_document
from tests.models.test_real_models import HF_MODELS, needs_torchvision, needs_transformers


def _oracle(doc, limit=40):
    """Every distinct two-node chain of the graph, as a pattern: our matches under torch.fx's
    rules are SubgraphMatcher's, one for one; and on export graphs the default rules (ATen
    calls bound by their schema, spellings and argument order aside) find every one of them
    too.  (In fx graphs the default rules match submodules by type: a pattern of one relu
    module and one conv finds every relu -> conv, and one of those may claim a node first.)"""
    gm = doc.graph_module
    export = dialect_of(gm.graph) == "export"
    seen = set()
    for node in gm.graph.nodes:
        if not node.op.startswith("call"):
            continue
        for p in node.all_input_nodes:
            if not p.op.startswith("call"):
                continue
            key = (p.op, str(p.target), node.op, str(node.target))
            if key in seen:
                continue
            seen.add(key)
            pattern = from_nodes(doc, [p.name, node.name], rules=FX_RULES)
            ours = [frozenset(m.nodes.values()) for m in find(gm, pattern).matches]
            theirs = [
                frozenset(
                    g.name for q, g in m.nodes_map.items() if q.op not in ("placeholder", "output")
                )
                for m in SubgraphMatcher(pattern.graph_module.graph).match(gm.graph)
            ]
            assert ours == theirs, key
            if export:
                default = pattern.with_rules(DEFAULT_RULES)
                found = {frozenset(m.nodes.values()) for m in find(gm, default).matches}
                assert set(ours) <= found, key
            if len(seen) >= limit:
                return len(seen)
    return len(seen)


@needs_torchvision
@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
@pytest.mark.parametrize("frontend", ["fx", "export"])
def test_oracle_on_torchvision(name, frontend):
    doc = open_document(OpenRequest(f"torchvision.models:{name}", frontend, ("1x3x224x224",)))
    assert _oracle(doc) > 5


@needs_transformers
@pytest.mark.parametrize("factory", ["gpt2_tiny", "bert_tiny"])
def test_oracle_on_a_transformer(factory):
    doc = open_document(OpenRequest(f"{HF_MODELS}:{factory}", "export"))
    assert _oracle(doc) > 5


@needs_torchvision
@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0"])
def test_fold_conv_bn_on_torchvision(name):
    doc = open_document(OpenRequest(f"torchvision.models:{name}", inputs=("1x3x224x224",)))
    pairs = sum(isinstance(m, nn.BatchNorm2d) for m in doc.graph_module.modules())
    before = reference(doc)
    done = run_builtin(doc, "fold-conv-bn")
    skipped = len(done.skipped) + len(done.found.skipped)
    assert len(done.replaced) + skipped >= pairs - skipped  # every pair folded or skipped
    left = sum(isinstance(m, nn.BatchNorm2d) for m in doc.graph_module.modules())
    assert left == pairs - len(done.replaced)
    result = check(doc, before, exact=False)
    assert result.ok, result.describe()
    if name.startswith("resnet"):
        assert left == 0


@needs_torchvision
@pytest.mark.slow
def test_the_command_line_folds_resnet18(tmp_path):
    out = tmp_path / "r18.py"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fxstudio",
            "rewrite",
            "torchvision.models:resnet18",
            "--input",
            "1x3x224x224",
            "--builtin",
            "fold-conv-bn",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "20 replaced" in done.stdout and "Check passed" in done.stdout
    assert "BatchNorm" not in out.read_text()
    sys.path.insert(0, str(tmp_path))
    try:
        import r18

        module = r18.load()
    finally:
        sys.path.remove(str(tmp_path))
    assert not any(isinstance(m, nn.BatchNorm2d) for m in module.modules())
    assert module(torch.randn(1, 3, 224, 224)).shape == (1, 1000)
