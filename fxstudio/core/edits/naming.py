"""Names, targets and submodules for new nodes: valid unique names, functions resolved from
text, modules built from a constructor."""

from __future__ import annotations

import difflib
import importlib
import operator
import re
from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F  # noqa: N812

from fxstudio.core.edits.steps import NodeSpec, check_name, node_of, refs_in, reserved
from fxstudio.core.errors import EditError
from fxstudio.core.fxcompat import used_names
from fxstudio.core.graph.attributes import attribute
from fxstudio.core.graph.document import GraphDocument

# --- names and targets ---------------------------------------------------------------------------


def name_base(text: str) -> str:
    """``text`` made an identifier to number names from (``layer1.0.conv`` -> ``layer1_0_conv``)."""
    base = re.sub(r"\W", "_", text).strip("_") or "node"
    return f"_{base}" if base[0].isdigit() else base


def unique_name(
    doc: GraphDocument, base: str, also: set[str] | frozenset[str] = frozenset()
) -> str:
    """``base``, or ``base_N``: a name no node has (nor had: fx never reuses one), nor ``also``."""
    base = name_base(base)
    taken = set(doc.node_index()) | used_names(doc.graph) | set(also)
    if base not in taken and not reserved(base):
        return base
    i = 1
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"


def resolve_function(text: str) -> Callable[..., Any]:
    """``"torch.relu"``, ``"torch.nn.functional.gelu"``, ``"operator.add"`` -> the callable.

    A name that is not there is refused with the names close to it:

    >>> resolve_function("torch.rleu")
    Traceback (most recent call last):
    ...
    fxstudio.core.errors.EditError: torch has no function 'rleu'. Did you mean torch.relu?
    """
    text = text.strip()
    if text.startswith("F."):
        text = "torch.nn.functional." + text[2:]
    parts = text.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except Exception:  # not a module (ImportError), or one that fails to import
            continue
        for j in range(i, len(parts)):
            try:
                obj = getattr(obj, parts[j])
            except AttributeError:
                owner = ".".join(parts[:j])
                raise EditError(
                    f"{owner} has no function '{parts[j]}'."
                    + did_you_mean(parts[j], _public(obj), f"{owner}.")
                ) from None
        if callable(obj):
            return obj
        raise EditError(f"'{text}' is not a function.")
    if len(parts) == 1 and hasattr(operator, text):
        return getattr(operator, text)
    close = ""
    if len(parts) == 1:  # a bare name: perhaps torch's, torch.nn.functional's or operator's
        for prefix, module in (
            ("torch.", torch),
            ("torch.nn.functional.", F),
            ("operator.", operator),
        ):
            close = close or did_you_mean(text, _public(module), prefix)
    return_hint = close or (
        " Write its full name, e.g. torch.relu, torch.nn.functional.gelu or operator.add."
    )
    raise EditError(f"There is no function '{text}'.{return_hint}")


def did_you_mean(word: str, names: Iterable[str], prefix: str = "") -> str:
    """`` Did you mean torch.relu?`` -- the up to three ``names`` closest to ``word`` (after
    ``prefix``), or ``""`` when none is close."""
    close = difflib.get_close_matches(word, list(names), n=3, cutoff=0.7)
    if not close:
        return ""
    spelled = [f"{prefix}{c}" for c in close]
    listed = spelled[0] if len(spelled) == 1 else f"{', '.join(spelled[:-1])} or {spelled[-1]}"
    return f" Did you mean {listed}?"


def _public(obj: Any) -> list[str]:
    try:
        return [n for n in dir(obj) if not n.startswith("_")]
    except Exception:
        return []


def resolve_target(doc: GraphDocument, name: str, op: str, text: str) -> Any:
    """What node ``name`` (a ``op`` node) calls when its target is set to ``text``: a function,
    a method's name, a submodule's or a weight's path -- or an :class:`EditError` saying what
    is not there, with the close names that are."""
    gm = doc.graph_module
    if op == "call_function":
        return resolve_function(text)
    if op == "call_method":
        if not text.isidentifier():
            raise EditError(
                f"'{text}' is not a method name: {name} calls a method of its first argument; "
                "write one word, e.g. sigmoid or view."
            )
        if not hasattr(torch.Tensor, text):
            raise EditError(
                f"Tensors have no method '{text}'." + did_you_mean(text, _public(torch.Tensor))
            )
        return text
    if op == "call_module":
        if isinstance(attribute(gm, text), nn.Module) and text:
            return text
        paths = [p for p, _ in gm.named_modules() if p]
        example = f"give a submodule's path, e.g. {doc.node(name).target}"
        if attribute(gm, text.split(".")[0]) is None:  # perhaps a function was meant
            try:
                fn = resolve_function(text)
            except EditError as exc:
                if "." in text and not str(exc).startswith("There is no"):
                    said = str(exc).rstrip(".?")
                    end = "?" if str(exc).endswith("?") else ""
                    raise EditError(f"{said}{end} ({name} calls a submodule: {example}).") from None
            else:
                fn_name = getattr(fn, "__name__", text)
                raise EditError(
                    f"'{text}' is a function, and {name} calls a submodule: {example}; or "
                    f"insert a call of {fn_name} with Edit ▸ Insert node."
                ) from None
        raise EditError(f"The model has no submodule '{text}'." + did_you_mean(text, paths))
    if op == "get_attr":
        if text and attribute(gm, text) is not None:  # a weight, a buffer, a constant
            return text
        weights = [p for p, _ in gm.named_parameters()] + [p for p, _ in gm.named_buffers()]
        raise EditError(
            f"The model has no parameter or buffer '{text}'." + did_you_mean(text, weights)
        )
    raise EditError(f"A {op} node has no target to change.")


# --- helpers ------------------------------------------------------------------------------------


def _snake(name: str) -> str:
    """``Linear`` -> ``linear``, ``BatchNorm2d`` -> ``batch_norm2d``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def module_path_of(doc: GraphDocument, module: nn.Module) -> str:
    """A new submodule's name, from its class (``Linear`` -> ``linear``), free both as an
    attribute of the model and as a node name (its call_module node takes the same name)."""
    return _unique_attr(doc.graph_module, unique_name(doc, _snake(type(module).__name__)))


def _unique_attr(gm: nn.Module, base: str) -> str:
    base = re.sub(r"\W", "_", base) or "module"
    if not hasattr(gm, base):
        return base
    i = 1
    while hasattr(gm, f"{base}_{i}"):
        i += 1
    return f"{base}_{i}"


def new_spec(
    doc: GraphDocument,
    op: str,
    target: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    after: str | None,
    base: str,
    name: str | None = None,
) -> NodeSpec:
    """A node to create; ``name`` is taken as given (checked), else made from ``base``."""
    if name is not None:
        check_name(doc, name)
    used = refs_in((args, kwargs))
    for ref in used:
        node_of(doc, ref)
    if after is None:
        order = {n: i for i, n in enumerate(doc.node_names())}
        after = max(used, key=order.__getitem__) if used else _last_placeholder(doc)
    if after is None:
        raise EditError("The graph has no inputs to place a new node after: add an input first.")
    anchor = node_of(doc, after)
    if anchor.op == "output":
        raise EditError("Nothing can come after the output node.")
    meta = {}
    stack = enclosing_modules(anchor)
    if stack:  # drawn in the same module as the node it follows
        meta["nn_module_stack"] = stack
    return NodeSpec(name or unique_name(doc, base), op, target, args, kwargs, None, meta, after)


def enclosing_modules(node: Any) -> dict[str, Any]:
    """The modules whose code made ``node`` (its ``nn_module_stack``), less the module a
    ``call_module`` node calls: what a node put in its place runs inside."""
    stack = dict(node.meta.get("nn_module_stack") or {})
    if node.op == "call_module" and stack:
        last = next(reversed(stack))
        if str(stack[last][0]) == str(node.target):
            del stack[last]
    return stack


def _last_placeholder(doc: GraphDocument) -> str | None:
    last = None
    for n in doc.graph.nodes:
        if n.op == "placeholder":
            last = n.name
    return last


_MODULE_SCOPE = {"nn": nn, "torch": torch}


def build_module(constructor: str, seed: int = 0) -> nn.Module:
    """``"nn.Linear(16, 8)"`` -> a module, its weights drawn from ``seed``."""
    text = constructor.strip()
    if not re.match(r"^(nn|torch\.nn)\.[A-Za-z_][\w.]*\(.*\)$", text, re.S):
        raise EditError(
            f"'{constructor}' is not a module constructor. Write e.g. nn.LeakyReLU(0.1) or "
            "nn.Linear(16, 8)."
        )
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            module = eval(text, {"__builtins__": {}}, dict(_MODULE_SCOPE))  # noqa: S307
    except Exception as exc:
        raise EditError(f"{constructor} failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(module, nn.Module):
        raise EditError(f"{constructor} is not an nn.Module.")
    return module
