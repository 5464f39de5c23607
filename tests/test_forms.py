"""The window's Designer forms and the code that uses them agree, checked without Qt: each
``child(parent, QClass, "objectName")`` (fxstudio.qt.forms) names a widget, layout or action
of the form its module loads (``load_form("name", ...)``, ``ui/name.ui``) with that class, and
the attribute it is kept in is declared on the class with the same type (mypy checks the
assignment against the declaration) -- so a renamed or retyped widget in a .ui fails here,
not in the user's window."""

from __future__ import annotations

import ast
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.conftest import ROOT

QT = ROOT / "fxstudio" / "qt"
UI = ROOT / "ui"


def form_objects(path: Path) -> dict[str, str]:
    """objectName -> class of every widget, layout and action of a .ui file."""
    tree = ET.parse(path)
    found = {}
    for tag in ("widget", "layout"):
        for element in tree.iter(tag):
            found[element.get("name", "")] = element.get("class", "")
    for element in tree.iter("action"):
        found[element.get("name", "")] = "QAction"
    return found


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def _called(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and _name(node.func) == name


def form_problems(source: str, forms: dict[str, dict[str, str]], where: str = "") -> list[str]:
    """What a module's use of its form gets wrong (``forms``: form name -> its objects)."""
    tree = ast.parse(source)
    loaded = {
        _string(call.args[0])
        for call in ast.walk(tree)
        if _called(call, "load_form") and isinstance(call, ast.Call) and call.args
    }
    children = [c for c in ast.walk(tree) if _called(c, "child") and isinstance(c, ast.Call)]
    if not loaded and not children:
        return []
    problems: list[str] = []
    if len(loaded) != 1 or None in loaded:
        return [f"{where}: loads {sorted(map(str, loaded))}: one form by name expected"]
    form = next(iter(loaded))
    assert form is not None
    if form not in forms:
        return [f"{where}: ui/{form}.ui does not exist"]
    objects = forms[form]
    for call in ast.walk(tree):
        if _called(call, "findChild") or _called(call, "findChildren"):
            problems.append(f"{where}:{call.lineno}: look a form's children up with child()")
    for call in children:
        assert isinstance(call, ast.Call)
        cls = _name(call.args[1]) if len(call.args) == 3 else None
        name = _string(call.args[2]) if len(call.args) == 3 else None
        if cls is None or name is None:
            problems.append(f"{where}:{call.lineno}: child(parent, Class, 'objectName') expected")
        elif name not in objects:
            problems.append(f"{where}:{call.lineno}: ui/{form}.ui has no {name!r}")
        elif objects[name] != cls:
            problems.append(
                f"{where}:{call.lineno}: {name!r} is a {objects[name]} in ui/{form}.ui, not {cls}"
            )
    for klass in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
        declared = {
            s.target.id: ast.unparse(s.annotation)
            for s in klass.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        }
        for node in ast.walk(klass):
            if not (isinstance(node, ast.Assign) and _called(node.value, "child")):
                continue
            assert isinstance(node.value, ast.Call)
            for target in node.targets:
                if not (isinstance(target, ast.Attribute) and _name(target.value) == "self"):
                    continue
                cls = _name(node.value.args[1])
                if declared.get(target.attr) != cls:
                    problems.append(
                        f"{where}:{node.lineno}: {klass.name}.{target.attr} is not declared "
                        f"on the class as {cls} (it is {declared.get(target.attr)})"
                    )
    return problems


def all_forms() -> dict[str, dict[str, str]]:
    return {path.stem: form_objects(path) for path in UI.glob("*.ui")}


def test_the_code_and_the_forms_agree():
    forms = all_forms()
    problems, used = [], set()
    for path in sorted(QT.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        problems += form_problems(source, forms, str(path.relative_to(ROOT)))
        used |= {
            _string(c.args[0])
            for c in ast.walk(ast.parse(source))
            if isinstance(c, ast.Call) and _called(c, "load_form") and c.args
        }
    assert not problems, "\n".join(problems)
    assert used == set(forms), f"forms no window loads: {sorted(set(forms) - used)}"


def test_the_check_catches_what_it_forbids():
    forms = {"f": {"okEdit": "QLineEdit", "box": "QComboBox"}}
    good = """
class A(QDialog):
    edit: QLineEdit

    def __init__(self):
        load_form("f", self)
        self.edit = child(self, QLineEdit, "okEdit")
        child(self, QComboBox, "box").clear()
"""
    assert form_problems(good, forms) == []
    retyped = good.replace('QComboBox, "box"', 'QSpinBox, "box"')
    assert "is a QComboBox" in form_problems(retyped, forms)[0]
    renamed = good.replace('"okEdit"', '"oldEdit"')
    assert "has no 'oldEdit'" in form_problems(renamed, forms)[0]
    undeclared = good.replace("    edit: QLineEdit\n", "")
    assert "not declared" in form_problems(undeclared, forms)[0]
    misdeclared = good.replace("    edit: QLineEdit\n", "    edit: QComboBox\n")
    assert "not declared" in form_problems(misdeclared, forms)[0]
    looked_up = good + '        self.findChild(QComboBox, "box")\n'
    assert "child()" in form_problems(looked_up, forms)[0]
