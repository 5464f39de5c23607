"""Patterns made: from nodes the user boxed on the canvas (:func:`from_nodes`: values flowing
in become inputs, values flowing out outputs) or from a function (:func:`from_function`,
traced in the document's own dialect: ``symbolic_trace`` for ``fx``, ``torch.export`` for
``export``), typed in the Patterns dock (:func:`compile_function`) or named in a file
(:func:`load_function`).

Example:
    >>> import torch
    >>> def pattern(x, y):
    ...     return torch.relu(torch.neg(x) + y)
    >>> p = from_function(pattern)
    >>> [n.name for n in p.compute_nodes], p.input_names
    (['neg', 'add', 'relu'], ['x', 'y'])
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.errors import UserError
from fxstudio.core.graph.attributes import attribute
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.patterns.ops import dialect_of
from fxstudio.core.patterns.pattern import (
    DEFAULT_RULES,
    FX_RULES,
    Pattern,
    PatternError,
    Rules,
    identifier,
)
from fxstudio.core.process import modelcode

# --- patterns from a document's nodes --------------------------------------------------------


def from_nodes(
    doc: GraphDocument,
    names: Iterable[str],
    name: str = "pattern",
    rules: Rules = DEFAULT_RULES,
) -> Pattern:
    """The pattern the user boxed: ``names`` in graph order; the values they use from outside
    become inputs (in order of first use), the values used outside (or returned) outputs."""
    chosen_names = set(names)
    missing = chosen_names - set(doc.node_names())
    if missing:
        raise PatternError(f"There is no node named {', '.join(sorted(missing))}.")
    nodes = [n for n in doc.graph.nodes if n.name in chosen_names and n.op != "placeholder"]
    if any(n.op == "output" for n in nodes):
        raise PatternError("The output node cannot be part of a pattern; box the nodes before it.")
    if not nodes:
        raise PatternError("Box at least one operation (inputs alone are not a pattern).")
    chosen = set(nodes)
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    inputs: dict[fx.Node, fx.Node] = {}
    root: dict[str, Any] = {}
    gm = doc.graph_module

    def value(a: fx.Node) -> fx.Node:
        if a in env:
            return env[a]
        if a not in inputs:
            with _after_inputs(graph):
                p = graph.placeholder(identifier(a.name))
            p.meta = {k: v for k, v in a.meta.items() if k in ("val", "tensor_meta")}
            inputs[a] = p
        return inputs[a]

    for n in nodes:
        new = graph.node_copy(n, value)
        new.meta = {k: v for k, v in n.meta.items() if k in ("val", "tensor_meta", "stack_trace")}
        env[n] = new
        if n.op in ("call_module", "get_attr"):
            root[str(n.target)] = attribute(gm, str(n.target))
    # values used outside are outputs; so is a node nothing uses (an assert, a dead value):
    # a pattern has no dead code
    outs = [n for n in nodes if not n.users or any(u not in chosen for u in n.users)]
    graph.output(env[outs[0]] if len(outs) == 1 else tuple(env[o] for o in outs))
    pgm = fx.GraphModule(root, graph, class_name="Pattern")
    return Pattern(
        name,
        pgm,
        doc.request.chosen_frontend or dialect_of(doc.graph),
        rules,
        origin=tuple(n.name for n in nodes),
    )


def _after_inputs(graph: fx.Graph) -> Any:
    inputs = [n for n in graph.nodes if n.op == "placeholder"]
    if inputs:
        return graph.inserting_after(inputs[-1])
    return graph.inserting_before(next(iter(graph.nodes), None))


# --- patterns from code ----------------------------------------------------------------------


def from_function(
    fn: Callable[..., Any] | nn.Module | type,
    name: str | None = None,
    dialect: str = "fx",
    example_inputs: tuple[Any, ...] | None = None,
    rules: Rules = DEFAULT_RULES,
    source: str = "",
) -> Pattern:
    """Trace ``fn`` (a function, a module or a module class taking no arguments) as a pattern,
    the way the document it is for was captured.

    The export dialect runs ``fn``: its inputs are ``fn.example_inputs`` when given, else a
    2x2 float tensor per argument."""
    target = _as_traceable(fn)
    label = str(name or getattr(fn, "__name__", type(fn).__name__))
    try:
        # tracing patches nn.Module.__call__ for the whole process: a model run in another
        # thread meanwhile would go through this tracer (core.process.modelcode)
        with modelcode.one_turn():
            if dialect == "export":
                inputs = example_inputs or _example_inputs(fn, target)
                from fxstudio.core.model.capture import export_module

                gm = export_module(
                    _Wrap(target) if not isinstance(target, nn.Module) else target, inputs
                )
                gm = _drop_export_guards(gm)
            else:
                gm = fx.symbolic_trace(target)
    except UserError as exc:
        raise PatternError(f"The pattern {label} cannot be traced: {exc}") from exc
    except Exception as exc:
        raise PatternError(
            f"The pattern {label} cannot be traced ({type(exc).__name__}: {exc}). A pattern "
            "is straight-line tensor code: no branches on values, no loops over tensors."
        ) from exc
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return Pattern(label, gm, dialect, rules, source=source)


class _Wrap(nn.Module):
    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


def _as_traceable(fn: Any) -> Any:
    if inspect.isclass(fn) and issubclass(fn, nn.Module):
        try:
            return fn()
        except TypeError as exc:
            raise PatternError(
                f"The pattern class {fn.__name__} must be built without arguments ({exc})."
            ) from exc
    if isinstance(fn, nn.Module) or callable(fn):
        return fn
    raise PatternError(f"{fn!r} is not a function or module to trace as a pattern.")


def _example_inputs(fn: Any, target: Any) -> tuple[Any, ...]:
    given = getattr(fn, "example_inputs", None)
    if callable(given):
        given = given()
    if given is not None:
        return tuple(given) if isinstance(given, (tuple, list)) else (given,)
    call = target.forward if isinstance(target, nn.Module) else target
    n = len(inspect.signature(call).parameters)
    gen = torch.Generator().manual_seed(0)
    return tuple(torch.randn(2, 2, generator=gen) for _ in range(n))


def _drop_export_guards(gm: fx.GraphModule) -> fx.GraphModule:
    """``torch.export`` adds input checks and shape asserts; a pattern is only the compute."""
    for n in reversed(list(gm.graph.nodes)):
        guard = n.op == "call_module" and str(n.target).startswith("_guards")
        check = n.op == "call_function" and "assert" in getattr(n.target, "__name__", str(n.target))
        if (guard or check) and not n.users:
            gm.graph.erase_node(n)
    return gm


def load_function(text: str) -> tuple[Any, str]:
    """``"file.py:fn"`` or ``"pkg.module:fn"`` -> (the object, its source text)."""
    from fxstudio.core.errors import LoadError
    from fxstudio.core.model.loading import import_namespace
    from fxstudio.core.model.modelspec import parse_spec

    try:
        spec = parse_spec(text)
    except LoadError as exc:
        raise PatternError(f"{text}: {exc}") from exc
    if not spec.name:
        raise PatternError(f"Name the function: {text}:NAME (e.g. patterns.py:pattern).")
    namespace, _ = import_namespace(spec)
    fn = getattr(namespace, spec.name, None)
    if fn is None:
        defined = sorted(
            k for k, v in vars(namespace).items() if inspect.isfunction(v) and not k.startswith("_")
        )
        hint = f" It defines: {', '.join(defined)}." if defined else ""
        raise PatternError(f"{spec.location} has no '{spec.name}'.{hint}")
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        source = ""
    return fn, source


def compile_function(code: str, name: str | None = None) -> tuple[Callable[..., Any], str]:
    """A function typed into the Patterns dock: run the text, take the function named
    ``name`` (else the last one it defines)."""
    namespace: dict[str, Any] = {"torch": torch, "nn": nn, "F": torch.nn.functional}
    namespace["operator"] = __import__("operator")
    try:
        compiled = compile(code, "<pattern>", "exec")
    except SyntaxError as exc:
        raise PatternError(
            f"Line {exc.lineno}: {exc.msg}. Fix the function and try again."
        ) from exc
    before = set(namespace)
    try:
        exec(compiled, namespace)  # noqa: S102 - the user's own pattern code, run on request
    except Exception as exc:
        raise PatternError(f"Running the code raised {type(exc).__name__}: {exc}") from exc
    defined = [
        k
        for k, v in namespace.items()
        if k not in before and (inspect.isfunction(v) or inspect.isclass(v))
    ]
    if name is not None:
        if name not in namespace:
            raise PatternError(f"The code defines no '{name}'.")
        return namespace[name], code
    if not defined:
        raise PatternError("Write a function: def pattern(x): return torch.relu(x)")
    return namespace[defined[-1]], code


def one_node_pattern() -> Pattern:
    """The pattern of a :class:`~fxstudio.core.patterns.replacements.Job` whose matches are
    chosen node by node rather than matched (a built-in that picks dropouts, or conv +
    BatchNorm calls): one input, one node (``"node"``), its output -- what the replacement
    engine reads of a pattern."""
    return from_function(lambda x: torch.relu(x), "node", rules=FX_RULES)
