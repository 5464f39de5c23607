"""The code passes ruff's lint rules, is ruff-formatted, and fxstudio/core and fxstudio/qt
type-check with mypy (pyproject.toml's settings)."""

import shutil
import subprocess

import pytest

from tests.conftest import ROOT

RUFF = shutil.which("ruff", path=str(ROOT / ".venv" / "bin")) or shutil.which("ruff")


MYPY = shutil.which("mypy", path=str(ROOT / ".venv" / "bin")) or shutil.which("mypy")


@pytest.mark.skipif(MYPY is None, reason="mypy is not installed")
def test_mypy_on_core_and_qt():
    """fxstudio/core and fxstudio/qt type-check (pyproject.toml's [tool.mypy]: the files
    and settings)."""
    result = subprocess.run([MYPY], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed")
@pytest.mark.parametrize("args", [["check"], ["format", "--check"]])
def test_ruff(args):
    result = subprocess.run(
        [RUFF, *args, "fxstudio", "tests"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
