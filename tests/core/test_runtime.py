"""Running and timing (no QApplication; no timing assertions -- only what a run reports)."""

from __future__ import annotations

import pytest
import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.runtime.devices import DeviceError, available, resolve
from fxstudio.core.runtime.ondevice import RunError, profile_whole
from fxstudio.core.runtime.timer import time_calls
from fxstudio.core.sessions.documents import open_document


def test_the_timer_counts_its_calls_and_keeps_the_first_apart() -> None:
    calls = []
    t = time_calls(lambda: calls.append(1), min_time=0.02, min_blocks=9)
    assert len(t.times_s) >= 9 and t.block >= 1
    timed = t.runs
    assert len(calls) >= timed + 1  # the first call and the warm-up are not in the runs
    assert t.min_s <= t.median_s and t.iqr_s >= 0 and t.first_call_s >= 0


def test_the_timer_sets_threads_and_puts_them_back() -> None:
    before = torch.get_num_threads()
    seen = []
    t = time_calls(lambda: seen.append(torch.get_num_threads()), min_time=0.01, n_threads=1)
    assert set(seen) == {1} and t.threads == 1
    assert torch.get_num_threads() == before


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_a_missing_device_is_said_before_anything_runs() -> None:
    with pytest.raises(DeviceError, match="--device cpu"):
        resolve("cuda")
    with pytest.raises(DeviceError, match="not a device name"):
        resolve("gpu0")
    assert [d.name for d in available()][0] == "cpu"


def test_profile_checks_outputs_and_stamps_the_environment() -> None:
    doc = open_document("examples:resnet")
    code = doc.code()
    result = profile_whole(doc, "cpu", threads=1, min_time=0.05)
    assert result.check.ok and result.items == 1
    assert result.env["torch"] == torch.__version__ and result.env["threads"] == 1
    out = result.to_json()
    assert {"median_s", "iqr_s", "min_s", "runs", "throughput"} <= set(out["whole"])
    assert doc.code() == code  # the document is as it was


def test_a_cast_run_is_compared_with_cpu_float32_and_leaves_the_model_alone() -> None:
    doc = open_document("examples:simple")
    weight = next(doc.graph_module.parameters())
    result = profile_whole(doc, "cpu", dtype="bfloat16", min_time=0.02)
    assert result.check.max_rel_diff is not None and result.check.max_rel_diff < 0.1
    assert "cast to bfloat16" in result.notes[0]
    assert next(doc.graph_module.parameters()).dtype == torch.float32
    assert next(doc.graph_module.parameters()) is weight


def test_nan_outputs_fail_the_check() -> None:
    class Bad(nn.Module):
        def forward(self, x):
            return torch.log(x - 10)

    doc = GraphDocument(fx.symbolic_trace(Bad()), example_inputs=(torch.rand(3),))
    result = profile_whole(doc, min_time=0.01)
    assert not result.check.ok and result.check.nonfinite == 3


def test_no_inputs_is_a_clear_message() -> None:
    doc = GraphDocument(fx.symbolic_trace(nn.ReLU()))
    with pytest.raises(RunError, match="--input"):
        profile_whole(doc, min_time=0.01)


def test_the_command_line(tmp_path, capsys) -> None:
    from fxstudio import cli

    out = tmp_path / "p.json"
    assert (
        cli.main(
            [
                "profile",
                "examples:negrelu",
                "--min-time",
                "0.05",
                "--threads",
                "1",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    assert "median" in capsys.readouterr().out
    import json

    data = json.loads(out.read_text())
    assert data["whole"]["threads"] == 1 and data["check"]["ok"]
    if not torch.cuda.is_available():
        assert cli.main(["profile", "examples:negrelu", "--device", "cuda"]) == 2
        assert "no CUDA device" in capsys.readouterr().err
