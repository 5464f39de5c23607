"""Each package's docstring is its map: it names every module the package holds (as
``name``, :mod:`.name` or :mod:`~...name`), so a newcomer reading ``__init__.py`` sees the
whole room, and a module added without a word there fails here."""

import ast
import re

import pytest

from tests.conftest import ROOT

PACKAGES = sorted(
    p.parent for p in (ROOT / "fxstudio").rglob("__init__.py") if "__pycache__" not in p.parts
)


def _members(package):
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    subpackages = {p.parent.name for p in package.glob("*/__init__.py")}
    return modules | subpackages


def _named(docstring: str, name: str) -> bool:
    return re.search(rf"(``|:mod:`[.~\w]*?\.?|`){re.escape(name)}(``|`|/)", docstring) is not None


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_package_docstring_names_its_modules(package):
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    missing = sorted(m for m in _members(package) if not _named(docstring, m))
    assert missing == [], f"{package.relative_to(ROOT)}/__init__.py does not name {missing}"


def test_the_check_sees_a_module_left_out():
    text = "The modules: ``ops`` (what an op is), :mod:`.values` and :mod:`~x.y.steps`."
    assert _named(text, "ops") and _named(text, "values") and _named(text, "steps")
    assert not _named(text, "op") and not _named(text, "matcher")


def test_every_package_is_in_the_wheel():
    """``pyproject.toml`` names the packages a wheel (and the bundle) holds, one by one: a
    package added without its line there works from the checkout and is missing from an
    install."""
    tomllib = pytest.importorskip("tomllib")
    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {".".join(p.relative_to(ROOT).parts) for p in PACKAGES}
    assert found - listed == set(), f"add to [tool.setuptools] packages: {sorted(found - listed)}"
