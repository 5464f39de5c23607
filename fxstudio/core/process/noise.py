"""Keep the libraries' own chatter away from the user; ``--debug`` shows all of it.

torch, transformers and friends print warnings with tracebacks, deprecation notices and log
records (``W1201 ... torch/export/__init__.py:348] Traceback ...``) while fxstudio works for
the user.  What the user should read is fxstudio's one message; the rest is noise to them.
torch's profiler (Kineto) writes from C++ straight to the process's stderr: its log level
is set before it starts, and what no level reaches is held back around its start and stop
(:func:`quiet_profiler`).
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import sys
import tempfile
import threading
import warnings
from collections.abc import Iterator
from typing import Any

#: Modules whose warnings are never the user's business (their code's are).
LIBRARIES = (
    "torch", "transformers", "timm", "torchvision", "huggingface_hub", "safetensors",
    "onnx", "onnxscript", "accelerate", "fxstudio", "networkx", "pygraphviz",
)  # fmt: skip


_quiet = False  # quiet_libraries ran (not --debug): native chatter is filtered too
_native = threading.Lock()  # one redirect of the process's stderr at a time

#: What torch's profiler writes to the process's stderr from C++ that its log level does
#: not reach: the first start in a thread other than the one that imported torch (a worker's,
#: in the window) says "ERROR: External init callback must run in same thread as
#: registerClient (…)"; and Kineto's own log lines, should a level let them through.
KINETO_NOISE = re.compile(
    r"(ERROR: External init callback must run in same thread"
    r"|(VERBOSE|INFO|WARNING|STAGE|ERROR|USDT):\S+ \S+ \d+:\d+ \w+\.cpp:\d+\])"
)


def quiet_libraries() -> None:
    """Process-wide, for the command line and the window (unless ``--debug``): drop the
    libraries' warnings and their log records below ERROR, and every deprecation notice.
    The user's own warnings (from their model file) still show."""
    global _quiet
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")  # read when torch's C++ starts
    # torch's profiler (Kineto) logs "profiler_start", "gpuGetDeviceCount failed with code
    # 35" (no CUDA driver) and more to stderr at each start and stop; read when it starts,
    # 6 is past its last severity (VERBOSE 0 ... USDT 5): none of it
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    _quiet = True
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # read when transformers starts
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category)
    pattern = "(" + "|".join(LIBRARIES) + r")(\.|$)"
    warnings.filterwarnings("ignore", module=pattern)
    import torch  # noqa: F401 - it sets its loggers' levels when imported: set them after

    for name in LIBRARIES:
        if name != "fxstudio":
            logging.getLogger(name).setLevel(logging.ERROR)


@contextlib.contextmanager
def quiet_torch_logs() -> Iterator[None]:
    """Silence torch's log records and stderr prints (fake-tensor and export chatter).

    Errors reach the user as one :class:`CaptureError`, not as a wall of log lines (export
    prints partial graphs of a failure straight to ``sys.stderr``).
    """
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logging.disable(previous)


@contextlib.contextmanager
def quiet_profiler(session: Any) -> Iterator[Any]:
    """``with quiet_profiler(torch.profiler.profile(...)) as prof:`` -- the profiler started
    and stopped with what its C++ writes to stderr meanwhile held back, and passed on but
    for its own lines (:data:`KINETO_NOISE`); what runs in between writes as ever."""
    with native_stderr_without(KINETO_NOISE):
        session.__enter__()
    try:
        yield session
    finally:
        with native_stderr_without(KINETO_NOISE):
            session.__exit__(None, None, None)


@contextlib.contextmanager
def native_stderr_without(noise: re.Pattern[str]) -> Iterator[None]:
    """The process's stderr (file descriptor 2, where C++ writes) held while the block runs,
    then passed on without the lines ``noise`` matches -- after :func:`quiet_libraries`
    only (``--debug`` shows all), and by one thread at a time (another runs as it is)."""
    if not _quiet or not _native.acquire(blocking=False):
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
        with tempfile.TemporaryFile() as held:
            os.dup2(held.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
                held.seek(0)
                lines = held.read().decode(errors="replace").splitlines(keepends=True)
                kept = "".join(line for line in lines if not noise.match(line))
                if kept:
                    os.write(2, kept.encode())
    finally:
        _native.release()
