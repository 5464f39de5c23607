import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "resources" / "examples"


#: A model symbolic tracing cannot follow (it branches on a size) and torch.export can.
SIZE_BRANCH = (
    "import torch\n"
    "class Net(torch.nn.Module):\n"
    "    def forward(self, x):\n"
    "        if x.shape[-1] % 2:\n"
    "            return x * 2\n"
    "        return x + 1\n"
    "def example_inputs():\n    return (torch.randn(2, 3),)\n"
)


@pytest.fixture
def write_model(tmp_path):
    """Write a model file into a temporary folder and return its path."""

    def write(source: str, name: str = "model.py") -> Path:
        path = tmp_path / name
        path.write_text(source)
        return path

    return write


def run_fxstudio(
    *args: str,
    cwd: Path | None = None,
    env: dict | None = None,
    preexec: Callable[[], None] | None = None,
):
    """Run ``python -m fxstudio ARGS`` in a real process (``preexec``: run in it before
    Python starts, e.g. to limit its memory)."""
    import subprocess

    full_env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "fxstudio", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=full_env,
        timeout=600,
        preexec_fn=preexec,
    )


MODELS = ROOT / "tests" / "models"


def pytest_collection_modifyitems(config, items):
    """Every test of ``tests/models`` (real torchvision, timm, transformers and diffusers
    models, built and run) is ``slow``, as are those marked so elsewhere (the timm sweep of
    ``tests/core/test_zoo.py``, a 32-layer transformer on the canvas): ``pytest -m "not slow
    and not bundle"`` is the quick loop."""
    for item in items:
        if MODELS in Path(item.path).parents:
            item.add_marker(pytest.mark.slow)
