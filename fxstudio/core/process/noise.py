"""Keep the libraries' own chatter away from the user; ``--debug`` shows all of it.

torch, transformers and friends print warnings with tracebacks, deprecation notices and log
records (``W1201 ... torch/export/__init__.py:348] Traceback ...``) while fxstudio works for
the user.  What the user should read is fxstudio's one message; the rest is noise to them.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import warnings
from collections.abc import Iterator

#: Modules whose warnings are never the user's business (their code's are).
LIBRARIES = (
    "torch", "transformers", "timm", "torchvision", "huggingface_hub", "safetensors",
    "onnx", "onnxscript", "accelerate", "fxstudio", "networkx", "pygraphviz",
)  # fmt: skip


def quiet_libraries() -> None:
    """Process-wide, for the command line and the window (unless ``--debug``): drop the
    libraries' warnings and their log records below ERROR, and every deprecation notice.
    The user's own warnings (from their model file) still show."""
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")  # read when torch's C++ starts
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
