"""A failed torch.export says what can help: a model that fails on its inputs when simply run
gets the inputs and how to give others (no frontend or leaf module can fix it); a model that
runs gets the advice about tracing."""

import pytest
import torch

from fxstudio.core.errors import CaptureError
from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.model.failures import eager_failure
from fxstudio.core.sessions.documents import open_document

WRONG_SIZE = (
    "import torch\n"
    "class Net(torch.nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = torch.nn.Linear(16, 4)\n"
    "    def forward(self, x):\n"
    "        if x.shape[-1] != 16:\n"
    "            raise ValueError(f'expects 16 features, got {x.shape[-1]}')\n"
    "        return self.fc(x)\n"
)

UNTRACEABLE = (  # runs eagerly; torch.export's fake tensors have no .numpy()
    "import torch\n"
    "class Net(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        return torch.from_numpy(x.numpy() * 2)\n"
)


def test_a_model_that_refuses_its_inputs_says_so_with_the_inputs(write_model):
    path = write_model(WRONG_SIZE)
    with pytest.raises(CaptureError) as info:
        open_document(OpenRequest(f"{path}:Net", "export", ("2x5",)))
    text = str(info.value)
    assert "fails on its example inputs when simply run" in text
    assert "expects 16 features, got 5" in text and "2x5:float32" in text
    assert "--input" in text and "--frontend fx" not in text
    assert info.value.location.lineno == 8


def test_a_model_that_runs_gets_the_tracing_advice(write_model):
    path = write_model(UNTRACEABLE)
    with pytest.raises(CaptureError) as info:
        open_document(OpenRequest(f"{path}:Net", "export", ("2x3",)))
    text = str(info.value)
    assert "torch.export failed" in text and "runs on these inputs without torch.export" in text
    assert "--frontend fx" in text


def test_large_models_are_checked_on_fake_tensors():
    linear = torch.nn.Linear(16, 4)
    assert isinstance(eager_failure(linear, (torch.zeros(2, 5),), real=False), RuntimeError)
    assert eager_failure(linear, (torch.zeros(2, 16),), real=False) is True

    class Nonzero(torch.nn.Module):
        def forward(self, x):
            return torch.nonzero(x)

    # fake tensors cannot tell the output's size: no verdict, rather than a wrong one
    assert eager_failure(Nonzero(), (torch.zeros(2, 5),), real=False) is False
