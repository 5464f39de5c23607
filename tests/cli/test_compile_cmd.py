"""``fxstudio compile`` headless: the breaks at their lines (``--explain``), the compiled graph's
kernels with their nodes and the speed-up, JSON, refusals."""

import json
import os
import subprocess
import sys

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
