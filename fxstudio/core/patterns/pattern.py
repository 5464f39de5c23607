"""A pattern: a small graph to find, and for each of its nodes how strictly it must match.

Made from nodes the user boxed on the canvas or from a function
(:mod:`fxstudio.core.patterns.making`).

:class:`Rules` say how a pattern node matches; :data:`FX_RULES` are torch.fx's own
(``SubgraphMatcher``: op and target, submodules by attribute name, literals exactly, arguments
as written), :data:`DEFAULT_RULES` what a user means (submodules by type, ``torch.relu`` =
``F.relu`` = ``x.relu()`` = ``nn.ReLU``, ``a + b`` = ``b + a``, keywords = positions).

Example:
    >>> import torch, torch.fx as fx
    >>> def pattern(x, y):
    ...     return torch.relu(torch.neg(x) + y)
    >>> p = Pattern("pattern", fx.symbolic_trace(pattern))
    >>> [n.name for n in p.compute_nodes], p.input_names, p.rule("add") == DEFAULT_RULES
    (['neg', 'add', 'relu'], ['x', 'y'], True)
    >>> print(p.code())
    def pattern(x, y):
        neg = torch.neg(x)
        add = neg + y
        relu = torch.relu(add)
        return relu
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from typing import Any

import torch.fx as fx
from torch import nn

from fxstudio.core.errors import UserError
from fxstudio.core.graph.attributes import attribute
from fxstudio.core.results import Json


class PatternError(UserError):
    """A pattern that cannot be made or used as given.  Nothing was changed."""


MODULE_RULES = ("type", "name", "attrs")  # match a submodule by its class, its name, class+attrs
LITERAL_RULES = ("exact", "any", "bind")  # a literal as written, any value, any value passed on


@dataclass(frozen=True)
class Rules:
    """How one pattern node matches a graph node."""

    module: str = "type"  # MODULE_RULES
    attrs: tuple[str, ...] = ()  # with module="attrs": the constructor attributes to compare
    literals: str = "exact"  # LITERAL_RULES
    spelling: str = "equivalent"  # "exact": the very target; "equivalent": any spelling of it
    commutative: bool = True  # add/mul: the two arguments in either order
    arguments: str = "normalize"  # "exact": positional and keyword apart (torch.fx)
    outside_users: bool = False  # an inner node may also be used outside the match (kept)
    same_shape: bool = False  # the graph node's recorded shape must be the pattern node's
    same_dtype: bool = False

    def to_json(self) -> Json:
        default = Rules()
        return {
            f.name: list(v) if isinstance(v, tuple) else v
            for f in fields(self)
            if (v := getattr(self, f.name)) != getattr(default, f.name)
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Rules:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise PatternError(f"Unknown pattern rules: {', '.join(sorted(unknown))}.")
        values: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items()
        }
        rules = cls(**values)
        rules.check()
        return rules

    def check(self) -> None:
        if self.module not in MODULE_RULES:
            raise PatternError(
                f"Match a submodule by {', '.join(MODULE_RULES)}, not {self.module}."
            )
        if self.literals not in LITERAL_RULES:
            raise PatternError(f"Match a literal {', '.join(LITERAL_RULES)}, not {self.literals}.")
        if self.spelling not in ("exact", "equivalent"):
            raise PatternError(f"Spelling is exact or equivalent, not {self.spelling}.")
        if self.arguments not in ("exact", "normalize"):
            raise PatternError(f"Arguments are exact or normalize, not {self.arguments}.")


#: torch.fx's SubgraphMatcher / replace_pattern rules
FX_RULES = Rules(module="name", spelling="exact", commutative=False, arguments="exact")
DEFAULT_RULES = Rules()


@dataclass
class Pattern:
    """A pattern graph (placeholders = inputs, the output node's values = outputs)."""

    name: str
    graph_module: fx.GraphModule
    dialect: str = "fx"
    rules: Rules = DEFAULT_RULES
    node_rules: dict[str, Rules] = field(default_factory=dict)  # per pattern node name
    source: str = ""  # the code it was traced from, if any
    origin: tuple[str, ...] = ()  # the document nodes it was made from, if any

    def __post_init__(self) -> None:
        check_graph(self.graph_module.graph)

    @property
    def graph(self) -> fx.Graph:
        return self.graph_module.graph

    def rule(self, name: str) -> Rules:
        return self.node_rules.get(name, self.rules)

    @property
    def inputs(self) -> list[fx.Node]:
        return [n for n in self.graph.nodes if n.op == "placeholder"]

    @property
    def input_names(self) -> list[str]:
        return [n.name for n in self.inputs]

    @property
    def outputs(self) -> list[fx.Node]:
        out = next(n for n in reversed(self.graph.nodes) if n.op == "output")
        return list(out.all_input_nodes)

    @property
    def compute_nodes(self) -> list[fx.Node]:
        return [n for n in self.graph.nodes if n.op not in ("placeholder", "output")]

    def with_rules(self, rules: Rules, nodes: Iterable[str] | None = None) -> Pattern:
        """The same pattern with ``rules`` for every node (or only for ``nodes``)."""
        rules.check()
        if nodes is None:
            return replace(self, rules=rules, node_rules={})
        return replace(self, node_rules={**self.node_rules, **dict.fromkeys(nodes, rules)})

    def code(self) -> str:
        """The pattern as the Python a user would pass to ``torch.fx.replace_pattern``."""
        return pattern_code(self.graph_module, self.name)

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "dialect": self.dialect,
            "code": self.source or self.code(),
            "rules": self.rules.to_json(),
            "node_rules": {k: v.to_json() for k, v in self.node_rules.items()},
        }


def check_graph(graph: fx.Graph) -> None:
    """A pattern must compute something, use every input and have no dead code (what the
    matcher needs to anchor it)."""
    compute = [n for n in graph.nodes if n.op not in ("placeholder", "output")]
    if not compute:
        raise PatternError("A pattern needs at least one operation, not only inputs.")
    outputs = next((n for n in reversed(graph.nodes) if n.op == "output"), None)
    if outputs is None or not outputs.all_input_nodes:
        raise PatternError("A pattern must return the values it computes.")
    for n in graph.nodes:
        if n.op != "output" and not n.users:
            what = "input" if n.op == "placeholder" else "value"
            raise PatternError(
                f"The pattern's {what} '{n.name}' is never used: a pattern uses every input "
                "and returns or uses every value it computes."
            )


# --- the pattern as code ---------------------------------------------------------------------


def pattern_code(gm: fx.GraphModule, name: str) -> str:
    """``def name(inputs): ...`` (a class when submodules are called) -- readable Python
    without fx's ``x = None`` clean-up lines."""
    fn_name = identifier(name) if name.isidentifier() else "pattern"
    src = gm.graph.python_code("self").src
    body = [
        re.sub(r";\s+(\w+ = )+None$", "", line)
        for line in src.splitlines()
        if line.strip() and not line.strip().startswith("# ")
    ]
    modules = [n for n in gm.graph.nodes if n.op in ("call_module", "get_attr")]
    if not modules:
        head = (
            body[0]
            .replace("def forward(self, ", f"def {fn_name}(")
            .replace("def forward(self)", f"def {fn_name}()")
        )
        return "\n".join([head, *body[1:]])
    out = ["class Pattern(nn.Module):", "    def __init__(self):", "        super().__init__()"]
    for path in dict.fromkeys(str(n.target) for n in modules):
        value = attribute(gm, path)
        made = repr(value) if isinstance(value, nn.Module) and "\n" not in repr(value) else None
        where = path.replace(".", "_")
        if made is not None:
            out.append(f"        self.{where} = nn.{made}")
        else:
            out.append(f"        self.{where} = ...  # {type(value).__name__}")
    code = "\n".join("    " + line for line in body)
    for path in dict.fromkeys(str(n.target) for n in modules):
        code = code.replace(f"self.{path}", f"self.{path.replace('.', '_')}")
    return "\n".join([*out, "", code])


def identifier(name: str) -> str:
    """``name`` as a Python identifier (``layer1.0`` -> ``layer1_0``)."""
    return re.sub(r"\W", "_", name) or "x"
