"""``fxstudio compile`` headless: the breaks at their lines (``--explain``), the compiled graph's
kernels with their nodes and the speed-up, JSON, refusals; a model with graph breaks that
cannot be captured, compiled as torch.compile does."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from fxstudio import cli
from tests.core.test_compiling import BRANCHY


def test_explain_prints_and_writes_the_breaks(write_model, tmp_path, capsys):
    path = write_model(BRANCHY)
    out = tmp_path / "breaks.json"
    assert cli.main(["compile", "--explain", f"{path}:Branchy", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "3 graphs" in text and f"{path}:12" in text and f"{path}:14" in text
    data = json.loads(out.read_text())
    assert data["graphs"] == 3 and [b["line"] for b in data["graph_breaks"]] == [12, 14]


def test_compile_writes_the_speedup_and_the_kernels_with_their_nodes(tmp_path, capsys):
    out = tmp_path / "compiled.json"
    argv = ["compile", "examples:negrelu", "--min-time", "0.1", "--json", str(out)]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert "no graph breaks" in text and "kernels" in text and "eager" in text
    data = json.loads(out.read_text())
    assert data["graphs"] == 1 and data["graph_breaks"] == []
    assert {"compile_s", "eager", "compiled", "speedup", "unattributed_s"} <= set(data)
    made = [k for k in data["kernels"] if k["nodes"]]
    assert len(made) == 1 and set(made[0]["nodes"]) == {"neg", "relu", "add", "mul"}
    total = sum(k["time_s"] for k in data["kernels"]) + data["unattributed_s"]
    assert total == pytest.approx(data["profiled_s"])


def test_no_cxx_compiler_is_said_plainly_and_nothing_is_written(tmp_path):
    """A machine without a C++ compiler: inductor cannot build its CPU kernels (caches off,
    so it must try)."""
    out = tmp_path / "compiled.json"
    env = {
        **os.environ,
        "CXX": str(tmp_path / "no-such-g++"),
        "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1",
    }
    argv = [sys.executable, "-m", "fxstudio", "compile", "examples:negrelu", "--json", str(out)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr
    assert "C++ compiler" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


def test_bad_choices_and_a_broken_model_are_exit_2(tmp_path, capsys):
    assert cli.main(["compile", "--explain", str(tmp_path / "nope.py:M")]) == 2
    assert "No such file" in capsys.readouterr().err
    assert cli.main(["compile", "examples:simple", "--device", "cuda:7"]) == 2
    assert "cuda" in capsys.readouterr().err.lower()


BREAKS = textwrap.dedent("""
    import torch
    from torch import nn

    class Breaks(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            h = torch.relu(self.fc(x))
            if h.sum() > 0:
                h = h * 2 + 1
            print("h is", h.shape)
            return torch.tanh(h)

    def example_inputs():
        return (torch.randn(2, 8),)
""")


def test_a_model_with_graph_breaks_is_compiled_as_torch_compile_does(write_model, tmp_path, capsys):
    # neither symbolic tracing nor export captures it whole (a branch on a tensor's value):
    # the eager model is compiled, timed against eager, its kernels grouped by Dynamo graph
    path = write_model(BREAKS, "breaks.py")
    out = tmp_path / "breaks.json"
    argv = ["compile", f"{path}:Breaks", "--min-time", "0.05", "--json", str(out)]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert f"{path}:12 (if h.sum() > 0:)" in text and f"{path}:14 (print(" in text
    assert "of the eager model" in text and "95 % CI" in text
    assert "graph 1: 2 kernels" in text and "graph 3: 1 kernel" in text
    assert "at breaks.py:13" in text and "Not captured as a document" in text
    assert "h is torch.Size" not in text  # the model's own print, muted
    data = json.loads(out.read_text())
    assert data["compiled_from"] == "eager model" and data["compiled_graphs"] == 3
    assert [b["line"] for b in data["graph_breaks"]] == [12, 14]
    s = data["speedup"]
    assert s["ci_low"] <= s["speedup"] <= s["ci_high"]
    lines = {k["graph"]: {at["line"] for at in k["lines"]} for k in data["kernels"]}
    assert set(lines) == {0, 1, 2} and lines[1] == {13} and lines[2] == {15}
    assert all(k["ops"] and k["nodes"] == [] for k in data["kernels"])
    total = sum(k["time_s"] for k in data["kernels"]) + data["unattributed_s"]
    assert total == pytest.approx(data["profiled_s"])
