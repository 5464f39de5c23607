"""fxstudio.core must work with PySide6 unimportable (the core never imports Qt)."""

import subprocess
import sys

SCRIPT = r"""
import importlib, pkgutil, sys

class NoQt:
    def find_spec(self, name, path=None, target=None):
        if name == "PySide6" or name.startswith("PySide6.") or name.startswith("shiboken6"):
            raise ImportError(f"{name} is not allowed in fxstudio.core")
        return None

sys.meta_path.insert(0, NoQt())
import fxstudio.core
names = [m.name for m in pkgutil.walk_packages(fxstudio.core.__path__, "fxstudio.core.")]
for name in names:
    importlib.import_module(name)
from fxstudio.core.sessions.documents import open_document
doc = open_document("examples:resnet")
assert len(doc.rows()) == len(doc.graph.nodes)
assert not any(m.startswith("PySide6") for m in sys.modules)
print("ok", len(names))
"""


def test_core_imports_and_works_without_pyside6():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")
    assert int(result.stdout.split()[1]) >= 5  # every core module was imported


def test_the_blocker_works():
    script = SCRIPT.replace(
        "import fxstudio.core\n", "import fxstudio.core\nimport fxstudio.qt.selection\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode != 0 and "not allowed" in result.stderr
