"""Edits written as text: the command line's ``fxstudio edit -e`` and argument fields.  Each
edit's text form is declared here (:func:`~fxstudio.core.edits.registry.text_form`), once:
the list of edits (:data:`COMMANDS`) and :func:`run_command` read them."""

from __future__ import annotations

import ast
import inspect
import re
from typing import Any

import torch

from fxstudio.core.edits.engine import Edit
from fxstudio.core.edits.registry import TEXT_FORMS, text_form, usage
from fxstudio.core.edits.steps import Ref
from fxstudio.core.edits.user import (
    add_input,
    delete,
    insert,
    insert_module,
    paste,
    rename,
    rewire,
    set_inputs,
    set_outputs,
    set_target,
    splice,
)
from fxstudio.core.errors import EditError
from fxstudio.core.graph.attributes import attribute
from fxstudio.core.graph.document import GraphDocument


def parse_arguments(doc: GraphDocument, text: str) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``"1, dim=-1, x"`` -> ``((1, Ref("x")), {"dim": -1})``: Python literals, tuples and
    lists, ``torch.float16``-style dtypes, None, and node names for other nodes' values."""
    text = text.strip()
    if not text:
        return (), {}
    try:
        call = ast.parse(f"f({text})", mode="eval").body
        assert isinstance(call, ast.Call)

        def value(node: ast.expr) -> Any:
            if isinstance(node, ast.Name):
                if node.id in doc.node_index():
                    return Ref(node.id)
                if node.id in ("None", "True", "False"):
                    return ast.literal_eval(node)
                raise EditError(f"'{node.id}' is neither a node nor a Python value.")
            if isinstance(node, (ast.Tuple, ast.List)):  # may hold node names
                items = [value(e) for e in node.elts]
                return tuple(items) if isinstance(node, ast.Tuple) else items
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "torch"
            ):
                found = getattr(torch, node.attr, None)
                if isinstance(found, (torch.dtype, torch.memory_format, torch.layout)):
                    return found  # torch.float16, torch.channels_last...
                raise EditError(f"torch.{node.attr} is not a dtype, layout or memory format.")
            return ast.literal_eval(node)

        return tuple(value(a) for a in call.args), {
            k.arg: value(k.value) for k in call.keywords if k.arg is not None
        }
    except (SyntaxError, ValueError, AssertionError) as exc:
        raise EditError(
            f"'{text}' are not arguments fxstudio can read: write Python values and node "
            f"names separated by commas, e.g. 1, dim=-1 ({type(exc).__name__})."
        ) from None


def parse_kwargs(doc: GraphDocument, text: str) -> dict[str, Any]:
    """``"dim=-1, keepdim=True"`` or ``"{'dim': -1}"`` -> ``{"dim": -1, ...}``."""
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        try:
            tree = ast.parse(text, mode="eval").body
        except SyntaxError:
            raise EditError(f"'{text}' is not a dictionary fxstudio can read.") from None
        if not isinstance(tree, ast.Dict) or not all(
            isinstance(k, ast.Constant) for k in tree.keys
        ):
            raise EditError(f"'{text}' is not a dictionary of names to values.")
        text = ", ".join(
            f"{k.value}={ast.get_source_segment(text, v)}"  # type: ignore[union-attr]
            for k, v in zip(tree.keys, tree.values, strict=True)
        )
    args, kwargs = parse_arguments(doc, text)
    if args:
        raise EditError("Write keyword arguments as name=value, e.g. dim=-1.")
    return kwargs


def parse_input_declaration(text: str) -> tuple[str, str | None, Any]:
    """A new input written as ``NAME[:TYPE] [DEFAULT]`` or ``NAME: TYPE = DEFAULT``: its name,
    annotation (``None``: none) and default (``inspect.Signature.empty``: none).

    >>> parse_input_declaration("scale: float = 1.0")
    ('scale', 'float', 1.0)
    >>> parse_input_declaration("scale:float 1.0")
    ('scale', 'float', 1.0)
    >>> parse_input_declaration("mask")[:2]
    ('mask', None)
    """
    m = _DECLARATION.match(text.strip())
    if m is None:
        raise EditError(
            f"'{text}' is not an input: write its name, optionally a type and a default, e.g. "
            "scale, scale: float or scale: float = 1.0."
        )
    name, type_name, default = m.group("name"), m.group("type"), (m.group("default") or "")
    value: Any = inspect.Signature.empty
    if default:
        try:
            value = ast.literal_eval(default)
        except (ValueError, SyntaxError):
            raise EditError(f"'{default}' is not a Python value.") from None
    return name, type_name or None, value


_DECLARATION = re.compile(
    r"^(?P<name>[A-Za-z_]\w*)\s*(?::\s*(?P<type>[A-Za-z_][\w.]*(?:\[[^\]]*\])?))?"
    r"\s*(?:=?\s*(?P<default>\S.*))?$"
)


def add_input_from_text(doc: GraphDocument, text: str) -> Edit:
    """:func:`~fxstudio.core.edits.user.add_input` from a declaration (see
    :func:`parse_input_declaration`): the window's *Add input*, ``fxstudio edit -e input``."""
    name, annotation, default = parse_input_declaration(text)
    if default is inspect.Signature.empty:
        return add_input(doc, name, annotation)
    return add_input(doc, name, annotation, default)


# --- the text forms, in the order the list of edits shows them --------------------------------


@text_form("delete", "delete NODE [NODE ...]", "delete (users take the node's input when it fits)")
def _delete(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    return delete(doc, text.split()[1:])


@text_form("rename", "rename NODE NEW", "give a node a new name", words=2)
def _rename(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    return rename(doc, rest[0], rest[1])


@text_form(
    "set_target", "target NODE TARGET", "call another function / method / submodule", words=2
)
def _target(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    return set_target(doc, rest[0], rest[1])


@text_form("set_inputs", "args NODE ARGUMENTS", "set the arguments, e.g.: args add x, 2.0", words=2)
def _args(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    args, kwargs = parse_arguments(doc, text.split(None, 2)[2])
    return set_inputs(doc, rest[0], args, kwargs)


@text_form(
    "insert",
    "insert NODE TARGET [ARGUMENTS]",
    "a new node fed by NODE: torch.sigmoid, .softmax dim=-1,",
    "nn.Linear(16, 8), or a weight such as fc1.weight",
    words=2,
)
def _insert(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    node, target = rest[0], rest[1]
    extra = text.split(None, 3)[3] if len(rest) > 2 else ""
    if target.startswith("nn."):
        return insert_module(doc, target, [Ref(node)], after=node)
    if target.startswith("."):
        args, kwargs = parse_arguments(doc, extra)
        return insert(doc, "call_method", target[1:], [Ref(node), *args], kwargs)
    if attribute(doc.graph_module, target) is not None and not extra:
        return insert(doc, "get_attr", target)
    args, kwargs = parse_arguments(doc, extra)
    return insert(doc, "call_function", target, [Ref(node), *args], kwargs)


@text_form(
    "splice",
    "splice PRODUCER USER TARGET",
    "insert TARGET on the edge from PRODUCER to USER (USER *:",
    "after PRODUCER, every user of PRODUCER taking its value)",
    words=3,
)
def _splice(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    target = text.split(None, 3)[3]
    op = "call_module" if target.startswith("nn.") else "call_function"
    if target.startswith("."):
        op, target = "call_method", target[1:]
    return splice(doc, rest[0], None if rest[1] == "*" else rest[1], op, target)


@text_form(
    "rewire",
    "connect SOURCE USER [ARGUMENT]",
    "USER's argument (args[1], dim; args[0] by default) takes",
    "SOURCE's value",
    words=2,
)
def _connect(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    return rewire(doc, rest[1], rest[2] if len(rest) > 2 else "args[0]", rest[0])


@text_form("add_input", "input NAME[:TYPE] [DEFAULT]", "a new input, e.g.: input scale:float 1.0")
def _input(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    return add_input_from_text(doc, text.split(None, 1)[1])


@text_form("set_outputs", "outputs NODE [NODE ...]", "what the graph returns")
def _outputs(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    return set_outputs(doc, text.split()[1:])


@text_form(
    "paste", "paste NODE [NODE ...]", "copies of the nodes (new names), after the last of them"
)
def _paste(doc: GraphDocument, text: str, rest: list[str]) -> Edit:
    return paste(doc, text.split()[1:])


#: The edits written as text, one form a line (``fxstudio edit --help``).
COMMANDS = usage()


def run_command(doc: GraphDocument, text: str) -> Edit:
    """One edit written as a line of text (the command line's ``fxstudio edit -e``); the
    forms are listed in :data:`COMMANDS`."""
    words = text.split(None, 3)
    if not words:
        raise EditError("An empty edit command.")
    verb, rest = words[0], words[1:]
    form = TEXT_FORMS.get(verb)
    if form is None:
        raise EditError(f"Unknown edit '{verb}'. The edits are:\n{COMMANDS}")
    if len(rest) < form.words:
        raise EditError(f"'{text}' is not a complete edit. The edits are:\n{COMMANDS}")
    return form.parse(doc, text, rest)
