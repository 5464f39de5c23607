"""Real models nobody here wrote: torchvision classifiers and transformers models."""

import importlib.util

import pytest
import torch

from fxstudio import cli
from fxstudio.core.fxcompat import tree_leaves
from fxstudio.core.graph.modes import eval_mode
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.graph.shapes import node_shape
from fxstudio.core.model.capture import CaptureOptions, capture
from fxstudio.core.model.loading import load_model
from fxstudio.core.saving.export import export
from fxstudio.core.saving.verify import one_thread, run_standalone
from fxstudio.core.sessions.documents import open_document
from tests.core.test_export import original_outputs

HF_MODELS = "tests/models/hf_models.py"


def _torchvision_classifiers():
    if importlib.util.find_spec("torchvision") is None:
        return []
    try:
        import torchvision.models as tvm
    except Exception:  # torchvision built for another torch
        return []
    return sorted(tvm.list_models(module=tvm))


TORCHVISION = _torchvision_classifiers()
needs_torchvision = pytest.mark.skipif(not TORCHVISION, reason="torchvision is not importable")


@needs_torchvision
@pytest.mark.slow
@pytest.mark.parametrize("name", TORCHVISION or ["none"])
def test_torchvision_classifier_opens_and_saves_as_python(tmp_path, name):
    """Every torchvision classifier that symbolic tracing accepts opens as ``fxstudio show``
    opens it (a shape on every module call, 1000 classes out) and saves as a standalone
    ``.py`` that computes the model's own outputs bit for bit -- the reference is the model as
    torchvision builds it, run eagerly in eval mode (each model built twice, captured once)."""
    size = {"inception_v3": 299}.get(name, 224)
    spec, inputs = f"torchvision.models:{name}", [f"1x3x{size}x{size}"]
    reference = load_model(spec, inputs, 0)  # in train mode, as built
    try:
        torch.fx.symbolic_trace(reference.module)
    except Exception as exc:
        pytest.skip(f"torch.fx.symbolic_trace does not accept {name}: {type(exc).__name__}")
    with eval_mode(reference.module), torch.no_grad(), one_thread():
        out = reference.module(*reference.example_inputs)
    expected = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
    example = reference.example_inputs
    del reference, out

    doc = open_document(OpenRequest(spec, inputs=tuple(inputs)))
    nodes = list(doc.graph_module.graph.nodes)
    produced = nodes[-1].args[0]
    produced = produced if isinstance(produced, torch.fx.Node) else produced[0]
    shape = node_shape(produced)
    assert (shape[-1] if isinstance(shape, tuple) else shape[0][-1]) == 1000
    assert all(node_shape(n) is not None for n in nodes if n.op == "call_module")
    assert len(doc.rows()) == len(nodes)  # what fxstudio show prints, a row a node

    out_py = tmp_path / f"{name}.py"
    export(doc, out_py)
    check = run_standalone(out_py, example, expected)
    assert check.bitwise_equal, check


needs_transformers = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None, reason="transformers is not installed"
)


@needs_transformers
@pytest.mark.parametrize("factory", ["gpt2_tiny", "bert_tiny"])
def test_transformers_model_through_export(factory, capsys):
    loaded = load_model(f"{HF_MODELS}:{factory}")
    cap = capture(loaded, CaptureOptions(frontend="export"))
    gm = cap.graph_module
    gm.graph.lint()
    with torch.no_grad():
        expected = loaded.module(*loaded.example_inputs).last_hidden_state
        got = gm(*loaded.example_inputs)
    got = got.last_hidden_state if hasattr(got, "last_hidden_state") else got[0]
    torch.testing.assert_close(got, expected)
    shaped = [n for n in gm.graph.nodes if n.op == "call_function" and node_shape(n) is not None]
    assert len(shaped) > 50
    assert cli.main(["show", f"{HF_MODELS}:{factory}", "--frontend", "export"]) == 0
    out = capsys.readouterr().out
    assert "1x16x64" in out and len(out.splitlines()) == len(gm.graph.nodes) + 2


@needs_transformers
def test_transformers_fx_failure_is_a_clear_message(capsys):
    assert cli.main(["show", f"{HF_MODELS}:gpt2_tiny"]) == 2
    err = capsys.readouterr().err
    assert "Symbolic tracing failed" in err and "--frontend export" in err


@needs_transformers
@pytest.mark.parametrize("factory", ["gpt2_tiny", "bert_tiny"])
def test_transformers_model_saved_as_python_round_trips(tmp_path, factory):
    spec = f"{HF_MODELS}:{factory}"
    doc = open_document(OpenRequest(spec, "export"))
    out = tmp_path / f"{factory}.py"
    result = export(doc, out)
    assert any("returns a dict" in n for n in result.notes)
    inputs, expected = original_outputs(spec)
    check = run_standalone(out, inputs, expected)
    assert check.bitwise_equal, check


@needs_torchvision
def test_resnet18_captured_by_export_folds_all_twenty_conv_bn_pairs():
    from fxstudio.core.patterns.apply import RewriteRequest, RewriteSpec, rewrite_flow

    doc = open_document(OpenRequest("torchvision.models:resnet18", "export", ("1x3x64x64",)))
    report = rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin="fold-conv-bn")))
    assert len(report.result.replaced) == 20 and not report.result.skipped
    assert report.check is not None and report.check.ok, report.check.describe()


@needs_torchvision
@pytest.mark.parametrize("name, size", [("resnet18", 224), ("inception_v3", 299)])
def test_a_torchvision_builder_opens_at_the_size_its_weights_were_trained_on(name, size):
    loaded = load_model(f"torchvision.models:{name}")
    assert tuple(loaded.example_inputs[0].shape) == (1, 3, size, size)
    assert any(f"input 1x3x{size}x{size}" in note for note in loaded.notes)
