"""The import lines of generated code: the globals its ``forward`` names, the torch submodules
it reaches into, and the modules whose import registers the custom operators it calls.

Example:
    >>> import torch
    >>> imports_for({"torch": torch}, "y = torch.relu(x)")
    ['import torch']
"""

from __future__ import annotations

import re
import sys
import types
from typing import Any

import torch.fx as fx

from fxstudio.core.errors import UserError
from fxstudio.core.fxcompat import is_op_overload, op_name, op_registrar


class CodegenError(UserError):
    """The model cannot be written as a standalone Python module."""


#: The names fxstudio imports model files under (and a script's): not importable elsewhere.
USER_MODULES = ("fxstudio_user_", "fxstudio_examples_", "__main__")


class CustomOps:
    """The operators outside torch that generated code calls (``torch.ops.NS.OP``), by the
    module whose import registers them: a fresh process that imports only torch has no
    ``torch.ops.transformers.grouped_mm_fallback`` until ``transformers.integrations.moe``
    is imported."""

    def __init__(self) -> None:
        self.by_module: dict[str, set[str]] = {}
        self.unknown: set[str] = set()

    def add(self, graph: fx.Graph) -> None:
        for node in graph.nodes:
            if node.op != "call_function" or not is_op_overload(node.target):
                continue
            op = f"torch.ops.{op_name(node.target)}"
            module = op_registrar(node.target)
            if module == "torch":
                continue
            if module is None:
                self.unknown.add(op)
            elif module.startswith(USER_MODULES):
                raise CodegenError(
                    f"The graph calls {op}, an operator your model file registers, which a "
                    "standalone module cannot import. Register it in an importable module, "
                    "or save the model as .pt2."
                )
            else:
                self.by_module.setdefault(module, set()).add(op)

    def lines(self) -> list[str]:
        """The imports, after a comment that says why they are there."""
        if not self.by_module:
            return []
        lines = ["", "# The forward calls operators that importing these modules registers:"]
        for module, ops in sorted(self.by_module.items()):
            lines.append(f"import {module}  # {', '.join(sorted(ops))}")
        return lines

    def packages(self) -> list[str]:
        return sorted({m.split(".")[0] for m in self.by_module} - {"torch"})

    def notes(self) -> list[str]:
        return [
            f"The forward calls {op}, and fxstudio could not tell which module registers it: "
            "import that module (or torch.ops.load_library its library) before load()."
            for op in sorted(self.unknown)
        ]


def imports_for(globals_: dict[str, Any], code: str | None = None) -> list[str]:
    """Import lines for the globals generated code uses (all of them when ``code`` is None)."""
    lines = []
    for name, value in sorted(globals_.items()):
        if code is not None and not re.search(rf"\b{re.escape(name)}\b", code):
            continue
        if isinstance(value, types.ModuleType):
            lines.append(
                f"import {value.__name__}"
                if value.__name__ == name
                else f"import {value.__name__} as {name}"
            )
            if code is not None and value.__name__ == name:
                lines.extend(submodule_imports(value, code))
        elif name in ("inf", "nan") and isinstance(value, float):
            lines.append(f"from math import {name}")
        elif name == "NoneType":
            lines.append("NoneType = type(None)")
        else:
            module = getattr(value, "__module__", None)
            qual = getattr(value, "__qualname__", getattr(value, "__name__", None))
            if not module or not qual or module.startswith(USER_MODULES):
                raise CodegenError(
                    f"The graph calls {name} ({module or '?'}.{qual or '?'}), defined in your "
                    "model "
                    "file, which a standalone module cannot import. Move it into an importable "
                    "module, or save the model as .pt2."
                )
            head = qual.split(".")[0]
            line = f"from {module} import {head}" + (f" as {name}" if head != name else "")
            lines.append(line)
    return lines


def submodule_imports(module: types.ModuleType, code: str) -> list[str]:
    """``import torch.nn.attention.flex_attention`` where the code calls
    ``torch.nn.attention.flex_attention.flex_attention``: ``import torch`` alone does not import
    every submodule, and in a fresh process the attribute is missing until one does.

    >>> import torch.nn.attention.flex_attention
    >>> submodule_imports(torch, "y = torch.nn.attention.flex_attention.flex_attention(q)")
    ['import torch.nn.attention.flex_attention']
    """
    lines = []
    for chain in set(re.findall(rf"\b{re.escape(module.__name__)}((?:\.\w+)+)", code)):
        deepest: str | None = None
        value: Any = module
        for part in chain.strip(".").split("."):
            value = getattr(value, part, None)
            if not isinstance(value, types.ModuleType):
                break
            if sys.modules.get(value.__name__) is value:
                deepest = value.__name__
        if deepest and not deepest.startswith(ALWAYS_IMPORTED):
            lines.append(f"import {deepest}")
    return lines


#: Submodules ``import torch`` imports itself (and torch.ops, which is not a module to import).
ALWAYS_IMPORTED = ("torch._C", "torch.ops", "torch.nn.functional", "torch.fx", "torch.nn.modules")


def import_block(lines: Any) -> list[str]:
    """``import`` lines, then ``from`` lines, then assignments, each group sorted."""
    unique = set(lines)
    plain = sorted(x for x in unique if x.startswith("import "))
    froms = sorted(x for x in unique if x.startswith("from "))
    rest = sorted(unique - set(plain) - set(froms))
    return plain + froms + rest
