"""Hostile and broken model files headless, in real processes: exit 2 and one message, no
library noise, and Ctrl+C stops a runaway model at its line."""

import signal
import subprocess
import sys

from tests.conftest import ROOT, run_fxstudio


def _error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def test_sys_exit_while_importing(write_model):
    path = write_model("import sys\nsys.exit(3)\n")
    result = run_fxstudio("show", f"{path}:Net")
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(
        f"fxstudio: error: Running model.py called sys.exit(3) at {path}:2"
    )


def test_absurd_input_is_a_user_error():
    result = run_fxstudio("show", "examples:simple", "--input", "100000x100000x100")
    assert result.returncode == 2, result.stderr
    assert "Out of memory while making the example inputs" in result.stderr
    assert "it asked for 3.6 TiB" in result.stderr and "smaller --input" in result.stderr
    assert "internal error" not in result.stderr


def test_a_broken_pt2_file_gets_one_message_and_no_library_noise(tmp_path):
    bad = tmp_path / "cut.pt2"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    result = run_fxstudio("show", str(bad))
    assert result.returncode == 2
    lines = _error_lines(result.stderr)
    assert len(lines) == 1 and lines[0].startswith(f"fxstudio: error: {bad} is not a readable")
    loud = run_fxstudio("show", str(bad), "--debug")  # --debug shows everything
    assert "Traceback" in loud.stderr and len(_error_lines(loud.stderr)) > 3


def test_library_warnings_do_not_reach_the_user(write_model):
    path = write_model(
        "import warnings, torch\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.relu(x)\n"
        "def example_inputs():\n"
        "    warnings.warn('deprecated: call it differently', DeprecationWarning)\n"
        "    warnings.warn('the model author says hello')\n"
        "    return (torch.randn(2),)\n"
    )
    result = run_fxstudio("show", f"{path}:Net")
    assert result.returncode == 0, result.stderr
    assert "deprecated" not in result.stderr
    assert "the model author says hello" in result.stderr  # the user's own warning shows


def test_ctrl_c_stops_a_model_that_never_finishes_importing(write_model):
    path = write_model("import sys\nprint('looping', flush=True)\nwhile True:\n    pass\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fxstudio", "show", f"{path}:Net"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # it is in the loop now (what a model prints goes to stderr: stdout is for data)
        assert proc.stderr.readline().strip() == "looping"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130 and out == ""
    assert err.startswith(f"fxstudio: Stopped (Ctrl+C) while running model.py at {path}:")
    assert "Traceback" not in err


def test_a_thread_the_model_leaves_running_does_not_keep_the_command_alive(write_model):
    """The model file starts a non-daemon thread that never ends: the command prints its
    table and exits anyway (Python alone would wait for that thread forever)."""
    path = write_model(
        "import threading, time, torch\n"
        "threading.Thread(target=lambda: time.sleep(10**6), name='forever').start()\n"
        "class Net(torch.nn.Module):\n"
        "    def forward(self, x):\n        return x + 1\n"
        "def example_inputs():\n    return (torch.randn(2, 3),)\n"
    )
    result = run_fxstudio("show", f"{path}:Net")
    assert result.returncode == 0, result.stderr
    assert "add" in result.stdout
