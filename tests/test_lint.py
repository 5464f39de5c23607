"""The code passes ruff's lint rules and is ruff-formatted (pyproject.toml's settings)."""

import shutil
import subprocess

import pytest

from tests.conftest import ROOT

RUFF = shutil.which("ruff", path=str(ROOT / ".venv" / "bin")) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed")
@pytest.mark.parametrize("args", [["check"], ["format", "--check"]])
def test_ruff(args):
    result = subprocess.run(
        [RUFF, *args, "fxstudio", "tests"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
