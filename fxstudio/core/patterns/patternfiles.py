"""Pattern files: a pattern, its replacement and its rules as a plain Python file, which
``fxstudio rewrite --pattern FILE.py:pattern --replacement FILE.py:replacement`` reads too.

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "p.py")
    >>> write_pattern_file(path, "def pattern(x):\\n    return torch.relu(x)\\n",
    ...                    "def replacement(x):\\n    return torch.tanh(x)\\n",
    ...                    Rules(literals="any", commutative=False))
    >>> rules = read_pattern_file(path)[2]
    >>> rules.literals, rules.commutative
    ('any', False)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from fxstudio.core.patterns.pattern import PatternError, Rules
from fxstudio.core.process.files import atomic_write

HEADER = '''"""An fxstudio pattern: rewrite with
    fxstudio rewrite MODEL --pattern {name}:pattern --replacement {name}:replacement
"""

import operator

import torch
import torch.nn.functional as F
from torch import nn

RULES = {rules}
'''


def _named(code: str, name: str) -> str:
    """The code with its first function or class called ``name``."""
    return re.sub(r"^(def|class) \w+", rf"\1 {name}", code.strip(), count=1, flags=re.M)


def write_pattern_file(
    path: str | Path, pattern_code: str, replacement_code: str, rules: Rules
) -> None:
    text = HEADER.format(name=Path(path).name, rules=repr(rules.to_json()))
    text += "\n\n" + _named(pattern_code, "pattern") + "\n"
    if replacement_code.strip():
        text += "\n\n" + _named(replacement_code, "replacement") + "\n"
    try:
        ast.parse(text)
    except SyntaxError as exc:
        raise PatternError(
            f"The pattern or replacement is not Python (line {exc.lineno})."
        ) from exc
    atomic_write(path, text)


def _segment(source: str, tree: ast.Module, name: str) -> str:
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return ast.get_source_segment(source, node) or ""
    return ""


def read_pattern_file(path: str | Path) -> tuple[str, str, Rules]:
    """(pattern code, replacement code, rules) from a pattern file."""
    try:
        source = Path(path).read_text()
    except OSError as exc:
        raise PatternError(f"Cannot read {path}: {exc.strerror}.") from exc
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise PatternError(f"{path} line {exc.lineno}: {exc.msg}.") from exc
    pattern = _segment(source, tree, "pattern")
    if not pattern:
        raise PatternError(f"{path} defines no function named pattern.")
    rules = Rules()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "RULES" for t in node.targets
        ):
            try:
                rules = Rules.from_json(ast.literal_eval(node.value))
            except ValueError as exc:
                raise PatternError(f"{path}: RULES is not a dictionary of values.") from exc
    return pattern, _segment(source, tree, "replacement"), rules
