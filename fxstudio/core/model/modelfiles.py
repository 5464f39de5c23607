"""What a model file offers to open, read with :mod:`ast` (the file is not run): its
``nn.Module`` classes and the factory functions that build one, and which of them is the
obvious model -- the one a bare ``my_model.py`` opens.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "m.py"
    >>> _ = f.write_text(
    ...     "from torch import nn\\n"
    ...     "class Block(nn.Module): pass\\n"
    ...     "class Net(nn.Module):\\n"
    ...     "    def __init__(self):\\n"
    ...     "        super().__init__()\\n"
    ...     "        self.b = Block()\\n"
    ... )
    >>> found = file_models(f)
    >>> found.names, found.obvious
    (['Net', 'Block'], 'Net')
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

#: Base classes (their last dotted part) that make a class an ``nn.Module``.
MODULE_BASES = frozenset({"Module", "Sequential", "ModuleList", "ModuleDict", "PreTrainedModel"})
NOT_FACTORIES = frozenset({"example_inputs", "main"})


@dataclass(frozen=True)
class FileModels:
    """The models a file offers: ``names`` (the ones no other builds first -- the whole
    models -- then the parts), the ``obvious`` one if there is one, and ``defined``: every
    name the file binds at top level (a factory we cannot recognise is still openable)."""

    names: list[str] = field(default_factory=list)
    obvious: str | None = None
    defined: frozenset[str] = frozenset()
    star_import: bool = False  # ``from x import *``: any name may be there
    problem: str = ""  # why the file could not be read, if it could not

    def has(self, name: str) -> bool:
        return self.star_import or name in self.defined

    def choices(self) -> str:
        """``Net, Block`` -- for messages."""
        return ", ".join(self.names)

    def to_choose(self) -> tuple[str, ...]:
        """The models a bare path to the file leaves the user to choose from: every one when
        it defines several and none is obvious (a bare path then opens none of them)."""
        return tuple(self.names) if self.obvious is None and len(self.names) > 1 else ()


def file_models(path: str | os.PathLike[str]) -> FileModels:
    """The ``nn.Module`` classes and factories ``path`` defines at top level (see the
    module docstring); a file that cannot be read or parsed gives none, and says why."""
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read())
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
        return FileModels(problem=f"{os.path.basename(path)} cannot be read: {exc}")
    classes: dict[str, ast.ClassDef] = {}
    for node in tree.body:  # in file order: a subclass of an earlier model is one too
        if isinstance(node, ast.ClassDef) and any(
            _last(base) in MODULE_BASES or _last(base) in classes for base in node.bases
        ):
            classes[node.name] = node
    factories = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and _is_factory(node, classes)
    }
    found: dict[str, ast.AST] = {**classes, **factories}
    used = {  # what another candidate builds or subclasses: parts of a bigger model
        n.id if isinstance(n, ast.Name) else n.attr
        for name, node in found.items()
        for n in ast.walk(node)
        if isinstance(n, (ast.Name, ast.Attribute))
        and (n.id if isinstance(n, ast.Name) else n.attr) != name
    }
    whole = [n for n in found if n not in used and not n.startswith("_")]
    parts = [n for n in found if n not in whole]
    obvious = whole[0] if len(whole) == 1 else ("Model" if "Model" in whole else None)
    return FileModels(
        whole + parts,
        obvious,
        frozenset(_bound_names(tree)),
        any(
            isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in tree.body
        ),
    )


def _last(expr: ast.expr) -> str:
    """``torch.nn.Module`` -> ``Module``; ``Generic[T]`` -> ``Generic``."""
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    return ast.unparse(expr).split(".")[-1]


def _is_factory(node: ast.FunctionDef, classes: dict[str, ast.ClassDef]) -> bool:
    """A public top-level function callable with no arguments that says it returns a
    module (its annotation) or returns one of the file's module classes, built."""
    if node.name.startswith("_") or node.name in NOT_FACTORIES:
        return False
    args = node.args
    if len(args.posonlyargs) + len(args.args) > len(args.defaults) or any(
        d is None for d in args.kw_defaults
    ):
        return False
    if node.returns is not None:
        returned = _last(node.returns)
        return returned in MODULE_BASES or returned in classes
    return any(
        isinstance(n, ast.Return)
        and isinstance(n.value, ast.Call)
        and _last(n.value.func) in classes
        for n in ast.walk(node)
    )


def _bound_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names
