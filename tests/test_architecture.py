"""The shape of the code, checked: the layers go one way (import-linter's contracts in
pyproject.toml), no import cycles (imports inside functions count), no module past 800
lines (one past 500 is reported), no private name used across modules, torch's private APIs
only in core/fxcompat/."""

import ast
import shutil
import subprocess
import warnings
from collections.abc import Iterator

import grimp
import networkx as nx
import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "fxstudio"
#: A module past REPORT_LINES is reported (a warning in pytest's summary): see whether it holds
#: two ideas.  Past MAX_LINES it fails.  Split by idea, never by count: moving logic elsewhere
#: only to get under a number is the wrong split.
REPORT_LINES = 500
MAX_LINES = 800
#: The longest chain of core modules importing core modules (see the test below).
MAX_CORE_CHAIN = 11
LINT_IMPORTS = shutil.which("lint-imports", path=str(ROOT / ".venv" / "bin")) or shutil.which(
    "lint-imports"
)
#: Underscored names of the standard library that are its public API.
STDLIB_PUBLIC = ("os._exit", "sys._current_frames")


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.skipif(LINT_IMPORTS is None, reason="import-linter is not installed")
def test_the_layers_go_one_way():
    result = subprocess.run([LINT_IMPORTS], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_import_cycles_counting_imports_inside_functions():
    graph = grimp.build_graph("fxstudio", include_external_packages=False)
    imports = nx.DiGraph()
    for module in graph.modules:
        imports.add_node(module)
        for imported in graph.find_modules_directly_imported_by(module):
            imports.add_edge(module, imported)
    cycles = [sorted(c) for c in nx.strongly_connected_components(imports) if len(c) > 1]
    assert cycles == []


def longest_core_chain() -> list[str]:
    """The longest chain of ``fxstudio.core`` modules each importing the next (imports inside
    functions count; a package's ``__init__`` is a module), measured with grimp as a longest
    path in the import DAG (networkx's ``dag_longest_path``).  Its length is the number of
    imports in it, one fewer than its modules."""
    graph = grimp.build_graph("fxstudio", include_external_packages=False)
    imports = nx.DiGraph()
    for module in graph.modules:
        if module == "fxstudio.core" or module.startswith("fxstudio.core."):
            imports.add_node(module)
            for imported in graph.find_modules_directly_imported_by(module):
                if imported == "fxstudio.core" or imported.startswith("fxstudio.core."):
                    imports.add_edge(module, imported)
    return list(nx.dag_longest_path(imports))


def test_the_domain_is_on_the_ground_floor():
    """No core module sits on a tall tower of imports: the longest chain of core modules
    importing core modules (:func:`longest_core_chain`) is at most ``MAX_CORE_CHAIN``
    imports.  A low module importing a high one for one small helper is what makes a tower:
    move the helper down instead."""
    chain = longest_core_chain()
    shown = " -> ".join(m.removeprefix("fxstudio.core.") for m in chain)
    assert len(chain) - 1 <= MAX_CORE_CHAIN, f"{len(chain) - 1} imports: {shown}"


def test_no_module_holds_two_ideas():
    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in _modules()
    }
    long = {path: n for path, n in sizes.items() if n > REPORT_LINES}
    if long:
        warnings.warn(
            f"modules over {REPORT_LINES} lines (do they hold two ideas?): {long}", stacklevel=1
        )
    too_long = {path: n for path, n in long.items() if n > MAX_LINES}
    assert too_long == {}, f"modules over {MAX_LINES} lines: split them by idea"


def _names_defined(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_no_private_name_is_used_across_modules():
    """A name imported from another module, or an attribute read off another module's
    object, is public; torch's private APIs go through core/fxcompat/ alone."""
    found = []
    for path in _modules():
        if path.relative_to(PACKAGE).parts[:2] == ("core", "fxcompat"):
            continue
        where = path.relative_to(ROOT)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        own = _names_defined(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if any(_private(part) for part in node.module.split(".")):
                    found.append(f"{where}:{node.lineno} from {node.module} import …")
                found += [
                    f"{where}:{node.lineno} from {node.module} import {a.name}"
                    for a in node.names
                    if _private(a.name)
                ]
            elif isinstance(node, ast.Import):
                found += [
                    f"{where}:{node.lineno} import {a.name}"
                    for a in node.names
                    if any(_private(part) for part in a.name.split("."))
                ]
            elif isinstance(node, ast.Attribute) and _private(node.attr):
                base = node.value
                if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                    continue
                text = ast.unparse(node)
                if node.attr in own or text.startswith(("torch.ops.", *STDLIB_PUBLIC)):
                    continue
                found.append(f"{where}:{node.lineno} {text}")
    assert found == []


def test_the_checks_above_catch_what_they_forbid(tmp_path):
    """The private-name check is not vacuous: it sees a private import and attribute."""
    source = "from torch.fx.graph_module import _forward_from_src\nx = graph._codegen\n"
    tree = ast.parse(source)
    privates = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert any(_private(a.name) for a in privates[0].names)
    attributes = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    assert attributes and _private(attributes[0].attr)
    assert attributes[0].attr not in _names_defined(tree)


#: The flows (``fxstudio.core.flows``), the document and the errors: the front door that
#: the command line and the window call (see the flows' package docstring).
FRONT_DOOR = ("fxstudio.core.flows", "fxstudio.core.errors", "fxstudio.core.graph.document")

#: Besides the front door, the core modules the command line may import: its options and
#: messages (guard, noise, progress, request, files), the edit language, the table view,
#: the built-ins' listing, and the devices (the run options' ``--threads`` range, read when
#: the parser is built: without importing every flow).
CLI_ALLOWED = (
    "fxstudio.core.edits",
    "fxstudio.core.graph.graphviews",
    "fxstudio.core.graph.request",
    "fxstudio.core.patterns.builtins",
    "fxstudio.core.process.guard",
    "fxstudio.core.process.noise",
    "fxstudio.core.process.progress",
    "fxstudio.core.runtime.devices",
    "fxstudio.core.process.files",
    "fxstudio.core.wording",
)

#: Besides the front door, the core modules the window imports today, sorted.  This list
#: may only shrink: a flow the window needs goes through ``fxstudio.core.flows`` (a new
#: import outside this list fails the test below).  What stays is the ground floor every
#: part of the window shares, not one feature's:
#:
#: - ``edits``: the edit language and the ``Edit`` an undo step wraps (the edit controller's
#:   QUndoCommands call the edits themselves, as ``fxstudio edit`` does)
#: - ``graph.graphviews``: how a graph reads to a user (rows, targets, the module tree), the
#:   document's own views
#: - ``graph.snapshots``: the document read once for a worker thread (the copies every
#:   worker runs on)
#: - ``model.request``: ``OpenRequest``, what every flow is asked with, and the session suffix
#: - ``process.collector``, ``process.guard``, ``process.progress``: the plumbing of threads,
#:   stopping, progress, memory and errors that the workers share
#: - ``saving.files``: writing a file atomically (the picture export, the checks before it)
#: - ``wording``: the window's words for a result's lines
QT_ALLOWED = (
    "fxstudio.core.edits",
    "fxstudio.core.graph.graphviews",
    "fxstudio.core.edits.snapshots",
    "fxstudio.core.graph.request",
    "fxstudio.core.process.collector",
    "fxstudio.core.process.guard",
    "fxstudio.core.process.progress",
    "fxstudio.core.process.files",
    "fxstudio.core.wording",
)


def core_imported_by(prefixes: tuple[str, ...]) -> set[str]:
    """The ``fxstudio.core`` modules that modules named ``prefixes`` (a name, or a name and
    what lies under it) import directly -- imports inside functions count (grimp)."""
    graph = grimp.build_graph("fxstudio", include_external_packages=False)
    found = set()
    for module in graph.modules:
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            found |= {
                imported
                for imported in graph.find_modules_directly_imported_by(module)
                if imported == "fxstudio.core" or imported.startswith("fxstudio.core.")
            }
    return found


def _outside(imported: set[str], allowed: tuple[str, ...]) -> list[str]:
    return sorted(
        m
        for m in imported
        if m not in allowed
        and not any(m == door or m.startswith(door + ".") for door in FRONT_DOOR)
    )


@pytest.mark.parametrize(
    ("who", "prefixes", "allowed"),
    [
        ("the command line", ("fxstudio.cli",), CLI_ALLOWED),
        ("the window", ("fxstudio.qt",), QT_ALLOWED),
    ],
)
def test_the_cli_and_the_window_come_in_by_the_front_door(who, prefixes, allowed):
    """``fxstudio.cli*`` and ``fxstudio.qt`` import from the core only its front door
    (``core.flows``, the document, the errors) and a named list each."""
    if prefixes == ("fxstudio.cli",):
        graph = grimp.build_graph("fxstudio", include_external_packages=False)
        prefixes = tuple(m for m in graph.modules if m.startswith("fxstudio.cli"))
    imported = core_imported_by(prefixes)
    outside = _outside(imported, allowed)
    print(f"{who} imports, besides the front door and its list: {outside}")
    assert outside == [], (
        f"{who} imports core modules outside fxstudio.core.flows and its list: {outside} "
        "(call the flow, or add what it needs to the flows)"
    )
    unused = sorted(set(allowed) - imported)
    assert unused == [], f"{who} no longer imports {unused}: take them off its list"


#: How many core modules define the names the window and the command line use (each name
#: traced through re-exports to the module that defines it): what a newcomer must read to
#: follow them.  Caps that may only come down -- the window's to 30, as flows that do the work
#: replace names relayed from rooms below; the command line's to 25.
WINDOW_DEFINING_MODULES = 73
CLI_DEFINING_MODULES = 30


def _module_file(module: str):
    path = ROOT / (module.replace(".", "/") + ".py")
    if path.exists():
        return path
    path = ROOT / module.replace(".", "/") / "__init__.py"
    return path if path.exists() else None


def _top_level(body: list) -> Iterator[ast.stmt]:
    """A module's statements, with those under a top-level ``if`` or ``try`` (``if
    TYPE_CHECKING:``: what a lazy ``__getattr__`` hands out is imported there for mypy)."""
    for node in body:
        if isinstance(node, ast.If | ast.Try):
            yield from _top_level(node.body)
        else:
            yield node


def _top_level_names(module: str, cache: dict) -> dict:
    """``name -> None`` (defined in ``module``) or ``(module, name)`` (imported from an
    fxstudio module), for the names ``module`` binds at its top level."""
    if module not in cache:
        names: dict = {}
        path = _module_file(module)
        tree = ast.parse(path.read_text()) if path else ast.Module(body=[], type_ignores=[])
        for node in _top_level(tree.body):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names[node.name] = None
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(
                    (n.id, None) for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)
                )
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if node.module.startswith("fxstudio."):
                        names.setdefault(alias.asname or alias.name, (node.module, alias.name))
        cache[module] = names
    return cache[module]


def defining_module(module: str, name: str, cache: dict) -> str:
    """The module that defines ``name`` as ``from module import name`` finds it: followed
    through re-exports; a submodule is itself."""
    for _ in range(50):
        bound = _top_level_names(module, cache)
        if name not in bound and _module_file(f"{module}.{name}") is not None:
            return f"{module}.{name}"
        if bound.get(name) is None:
            return module
        module, name = bound[name]
    return module


def core_defining_modules(prefix: str) -> set[str]:
    """The core modules that define the names the modules under ``prefix`` import (imports
    inside functions count)."""
    cache: dict = {}
    found = set()
    for path in PACKAGE.rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        if not (module == prefix or module.startswith(prefix + ".")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fxstudio.core"):
                found |= {defining_module(node.module, a.name, cache) for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("fxstudio.core")}
    return found


@pytest.mark.parametrize(
    ("prefix", "cap"),
    [("fxstudio.qt", WINDOW_DEFINING_MODULES), ("fxstudio.cli", CLI_DEFINING_MODULES)],
)
def test_the_core_modules_behind_the_window_and_the_command_line_are_counted(prefix, cap):
    """The names the window and the command line import, each traced to the core module
    that defines it: at most ``cap`` modules (a relay through the flows hides nothing)."""
    found = core_defining_modules(prefix)
    print(f"{prefix} uses names of {len(found)} core modules: {sorted(found)}")
    assert len(found) <= cap, (
        f"{prefix} now uses names defined in {len(found)} core modules (at most {cap}): "
        f"{sorted(found)}"
    )


def test_a_relayed_name_is_counted_where_it_is_defined():
    """The count follows a re-export to its source: ``OpenRequest`` from the flows is the
    graph's, ``open_document`` is the sessions'."""
    cache: dict = {}
    assert defining_module("fxstudio.core.flows", "OpenRequest", cache) == (
        "fxstudio.core.graph.request"
    )
    assert defining_module("fxstudio.core.flows", "open_document", cache) == (
        "fxstudio.core.sessions.documents"
    )
    assert defining_module("fxstudio.core", "flows", cache) == "fxstudio.core.flows"
