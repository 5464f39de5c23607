"""What a model file offers to open, read without running it; a bare ``file.py`` opens its
one obvious model; the Open dialog's checks say what is wrong before anything runs."""

import pytest

from fxstudio import cli
from fxstudio.core.errors import InputSpecError, LoadError
from fxstudio.core.model.loading import check_spec, load_model, model_names_in
from fxstudio.core.model.modelfiles import file_models

NET_AND_BLOCK = """\
import torch
from torch import nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
    def forward(self, x):
        return self.fc(x).relu()

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.a, self.b = Block(), Block()
    def forward(self, x):
        return self.b(self.a(x))

def example_inputs():
    return (torch.randn(2, 4),)

class Helper:
    pass
"""

TWO_MODELS_AND_A_FACTORY = """\
import torch.nn as nn

class Wide(nn.Sequential):
    pass

class Deep(Wide):
    pass

def small(depth=2) -> nn.Module:
    return nn.Linear(depth, depth)

def tiny():
    return Deep(nn.Linear(2, 2))

def helper(x):
    return Wide(x)
"""


def test_a_files_models_are_read_without_running_it(write_model):
    path = write_model(NET_AND_BLOCK + "raise SystemExit('the file was run')\n")
    found = file_models(path)
    assert found.names == ["Net", "Block"]  # the whole model first, its part after
    assert found.obvious == "Net"
    assert model_names_in(path) == ["Net", "Block"]


def test_factories_and_subclasses_of_modules_are_offered(write_model):
    found = file_models(write_model(TWO_MODELS_AND_A_FACTORY))
    # Deep subclasses Wide; small says it returns a module; tiny returns Deep(...); helper
    # needs an argument: not a factory.
    assert set(found.names) == {"Wide", "Deep", "small", "tiny"}
    assert found.obvious is None  # several whole models: none is obvious
    assert found.names[:2] == ["small", "tiny"]


def test_a_bare_path_opens_the_files_one_model(write_model):
    path = write_model(NET_AND_BLOCK)
    loaded = load_model(str(path))
    assert type(loaded.module).__name__ == "Net"
    assert loaded.spec.name == "Net"


def test_a_bare_path_with_several_models_names_them(write_model):
    path = write_model(TWO_MODELS_AND_A_FACTORY)
    with pytest.raises(LoadError, match="several models: small, tiny"):
        load_model(str(path))


def test_a_bare_path_opens_from_the_command_line(write_model, capsys):
    path = write_model(NET_AND_BLOCK)
    assert cli.main(["show", str(path), "--format", "code"]) == 0
    assert "relu" in capsys.readouterr().out


def test_check_spec_names_what_the_file_defines(write_model):
    path = write_model(NET_AND_BLOCK)
    check_spec(f"{path}:Net")
    check_spec(f"{path}:example_inputs")  # any name the file binds may be a factory
    with pytest.raises(LoadError) as caught:
        check_spec(f"{path}:Model")
    assert "has no 'Model'" in str(caught.value) and "It defines: Net, Block" in str(caught.value)
    with pytest.raises(LoadError, match="Did you mean: Net"):
        check_spec(f"{path}:Nett")
    with pytest.raises(LoadError, match="No such file"):
        check_spec(f"{path.parent / 'gone.py'}:Net")
    with pytest.raises(InputSpecError):
        check_spec(f"{path}:Net", ("1x3xx",))
    with pytest.raises(LoadError, match="no built-in example"):
        check_spec("examples:simpel")


def test_a_bare_path_that_is_not_there_says_so(tmp_path):
    with pytest.raises(LoadError, match="No such file"):
        load_model(str(tmp_path / "model.py"))
