"""``fxstudio profile`` headless: per node, against a baseline, exports, refusals."""

import json
import math

import pytest
import torch

from fxstudio import cli
from tests.conftest import run_fxstudio


def test_per_node_json_trace_and_csv(tmp_path, capsys) -> None:
    out, trace, table = tmp_path / "p.json", tmp_path / "t.json", tmp_path / "p.csv"
    explorer, netron = tmp_path / "me.json", tmp_path / "netron.json"
    args = ["profile", "examples:resnet", "--threads", "1", "--min-time", "0.1", "--per-node"]
    args += ["--calls", "9", "--json", str(out), "--trace", str(trace), "--csv", str(table)]
    args += ["--model-explorer", str(explorer), "--netron", str(netron)]
    assert cli.main(args) == 0
    assert "per node (9 profiled calls" in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert {"env", "whole", "nodes", "modules", "unattributed_s"} <= set(data)
    shares = sum(n["share"] for n in data["nodes"])
    rest = (data["unattributed_s"] + data["gap_s"]) / data["profile"]["whole_s"]
    assert math.isclose(shares + rest, 1.0, rel_tol=1e-9)
    root = next(m for m in data["modules"] if m["path"] == "")
    assert math.isclose(root["time_s"], sum(n["time_s"] for n in data["nodes"]), rel_tol=1e-9)
    assert "layer1_0_conv1" in {e.get("name") for e in json.loads(trace.read_text())["traceEvents"]}
    assert table.read_text().startswith("name,op,target")
    # Model Explorer node data: graph id -> results keyed by FX node name, each node's ms
    results = json.loads(explorer.read_text())["graph"]["results"]
    assert set(results) == {n["name"] for n in data["nodes"]}
    conv = next(n for n in data["nodes"] if n["name"] == "layer1_0_conv1")
    assert math.isclose(results["layer1_0_conv1"]["value"], conv["time_s"] * 1e3)
    # Netron metrics: an attachment of node metrics, targets the node names
    metrics = json.loads(netron.read_text())
    assert metrics["signature"] == "netron:attachment"
    assert {m["target"] for m in metrics["metrics"]} == set(results)
    assert {(m["kind"], m["name"], m["type"]) for m in metrics["metrics"]} == {
        ("node", "time", "float32")
    }
    # an existing output is not replaced without --force, and stays as it was
    before = out.read_text()
    assert cli.main(["profile", "examples:simple", "--json", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and out.read_text() == before


def test_against_a_baseline_compares_a_rewritten_session(tmp_path, capsys) -> None:
    session = tmp_path / "folded.fxstudio"
    assert (
        cli.main(["rewrite", "examples:resnet", "--builtin", "fold-conv-bn", "-o", str(session)])
        == 0
    )
    out = tmp_path / "c.json"
    args = ["profile", str(session), "--against", "examples:resnet", "--threads", "1"]
    args += ["--min-time", "0.2", "--json", str(out)]
    assert cli.main(args) == 0
    assert "before vs after (interleaved A/B, 9 replicates a side)" in capsys.readouterr().out
    compare = json.loads(out.read_text())["compare"]
    assert {"speedup", "ci_low", "ci_high", "significant"} <= set(compare)
    assert compare["ci_low"] <= compare["speedup"] <= compare["ci_high"]
    assert compare["max_abs_diff"] < 1e-4


def test_what_cannot_be_asked_is_refused(capsys) -> None:
    assert cli.main(["profile", "examples:simple", "--trace", "t.json"]) == 2
    assert "--per-node" in capsys.readouterr().err
    if not torch.cuda.is_available():
        assert cli.main(["profile", "examples:simple", "--cold-l2"]) == 2
        assert "CUDA mode" in capsys.readouterr().err
    assert cli.main(["profile", "examples:simple", "--per-node", "--compile", "eager"]) == 2
    assert "Per-node times" in capsys.readouterr().err
    assert cli.main(["profile", "examples:simple", "--against", "examples:resnet"]) == 2
    assert "different inputs" in capsys.readouterr().err


def test_numbers_out_of_range_are_refused_where_they_are_parsed(capsys) -> None:
    """Each numeric option says its range and exits 2 before any model is built."""
    cases = [
        (["--min-time", "-1"], "--min-time: -1 is out of range: give a number of seconds above 0"),
        (["--min-time", "0"], "above 0"),
        (["--batch", "0"], "--batch: 0 is out of range: give a whole number 1 or more"),
        (["--threads", "0"], "--threads: 0 is out of range: give a whole number from 1 to"),
        (["--calls", "-3"], "--calls: -3 is out of range"),
        (["--replicates", "3"], "--replicates: 3 is out of range: give a whole number 9 or more"),
        (["--threads", "two"], "--threads: 'two' is not a whole number"),
    ]
    for extra, said in cases:
        assert cli.main(["profile", "examples:no_such_example", *extra]) == 2, extra
        err = capsys.readouterr().err
        assert said in err, (extra, err)
        assert "no_such_example" not in err  # refused before the model was looked at


#: What torch's profiler printed on the user's terminal from C++ (Kineto): its start and
#: stop, the CUDA driver it did not find, and -- started from a worker thread, as the window's
#: Run dock starts it -- its initialisation in another thread than torch's import.
PROFILER_NOISE = (
    "profiler_start",
    "profiler_stop",
    "gpuGetDeviceCount failed",
    "External init callback must run in same thread",
)


@pytest.mark.parametrize(
    ("command", "ran"),
    [
        (("profile", "examples:simple", "--per-node", "--min-time", "0.05"), "per node ("),
        (("memory", "examples:simple", "--measure"), "measured"),
    ],
)
def test_the_profilers_own_lines_stay_off_the_terminal(command, ran) -> None:
    done = run_fxstudio(*command)
    assert done.returncode == 0, done.stderr
    assert ran in done.stdout  # the profiler ran
    assert [n for n in PROFILER_NOISE if n in done.stderr] == [], done.stderr


def test_a_profile_run_in_a_worker_thread_keeps_them_off_too_and_the_rest_on() -> None:
    """The window profiles in a worker thread (Run, Run this module): the first start there
    says "External init callback must run in same thread", which no log level reaches."""
    import subprocess
    import sys

    script = (
        "import sys, threading\n"
        "from fxstudio.core.process.noise import quiet_libraries\n"
        "quiet_libraries()\n"
        "from fxstudio.core.flows import open_document\n"
        "from fxstudio.core.runtime.profiling import ProfileOptions, profile\n"
        "doc = open_document('examples:simple')\n"
        "options = ProfileOptions(per_node=True, min_time=0.05)\n"
        "worker = threading.Thread(target=lambda: profile(doc, options))\n"
        "worker.start(); worker.join()\n"
        "print('the rest still shows', file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    assert [n for n in PROFILER_NOISE if n in done.stderr] == [], done.stderr
    assert "the rest still shows" in done.stderr
