"""The crash log: a process that dies of a fatal signal leaves its threads' stacks, a killed
one leaves its start line, a clean exit leaves nothing; the next start finds them."""

import os
import signal
import subprocess
import sys
import textwrap

from fxstudio.core.process.crashlog import KEEP, CrashLog

RUN = textwrap.dedent(
    """
    import sys, threading, time
    from pathlib import Path
    from fxstudio.core.process.crashlog import CrashLog
    log = CrashLog(Path(sys.argv[1]))
    log.start()
    how = sys.argv[2]
    if how == "clean":
        log.end()
    elif how == "crash":
        threading.Thread(target=time.sleep, args=(30,), name="worker", daemon=True).start()
        import faulthandler
        faulthandler._sigsegv()
    else:
        print("ready", flush=True)
        time.sleep(60)
    """
)


def run(folder, how):
    return subprocess.Popen(
        [sys.executable, "-c", RUN, str(folder), how],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_crash_leaves_every_threads_stack_and_the_next_start_says_where(tmp_path):
    proc = run(tmp_path, "crash")
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    crash = CrashLog(tmp_path).collect()
    assert crash is not None and crash.traced
    assert crash.path.name.startswith("crashed-") and not list(tmp_path.glob("crash-*.log"))
    text = crash.path.read_text()
    assert "Fatal Python error: Segmentation fault" in text and "Thread 0x" in text
    assert "closed unexpectedly" in crash.describe() and str(crash.path) in crash.describe()
    assert CrashLog(tmp_path).collect() is None  # told once


def test_a_clean_exit_leaves_nothing_and_a_running_window_is_left_alone(tmp_path):
    proc = run(tmp_path, "clean")
    proc.communicate(timeout=60)
    assert proc.returncode == 0 and list(tmp_path.iterdir()) == []
    alive = run(tmp_path, "wait")
    try:
        assert alive.stdout.readline().strip() == "ready"
        assert CrashLog(tmp_path).collect() is None  # that window runs: not a crash
        assert (tmp_path / f"crash-{alive.pid}.log").exists()
        os.kill(alive.pid, signal.SIGKILL)
        alive.wait(timeout=60)
        crash = CrashLog(tmp_path).collect()
        assert crash is not None and not crash.traced and "without a word" in crash.describe()
    finally:
        alive.kill()
        alive.communicate()


def test_only_the_last_logs_are_kept(tmp_path):
    for i in range(KEEP + 3):
        path = tmp_path / f"crash-{999_990_000 + i}.log"  # no such processes
        path.write_text("fxstudio started\n")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    crash = CrashLog(tmp_path).collect()
    assert crash is not None and crash.path.name.endswith(f"{999_990_000 + KEEP + 2}.log")
    assert len(list(tmp_path.glob("crashed-*.log"))) == KEEP
