"""A graph run node by node without ``fx.Interpreter``'s cost per node, and the thread count
for runs that only keep the books (shapes, the rewrite check).

:func:`run_nodes` computes what ``fx.Interpreter(module, graph=graph).run(*inputs)`` computes
-- the same calls on the same values, in graph order, each value dropped after its last use
-- without looking each submodule up by its dotted path at every call or entering a context
per node: about four times faster on a graph of thousands of small nodes, and, unlike a
compiled ``forward``, it needs no ``compile()`` of the graph's code (which holds the GIL for a
second at 20,000 nodes).

:func:`bookkeeping_threads` bounds torch's threads for a run whose ops are small: such ops gain
nothing from a second thread, and when another process keeps the cores busy, OpenMP threads
wait on each other at every op (a whole-model run took 34 s instead of 2.5 s).

Example:
    >>> import torch
    >>> gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU()))
    >>> x = torch.ones(1, 2)
    >>> bool((run_nodes(gm, gm.graph, (x,)) == gm(x)).all())
    True
    >>> with bookkeeping_threads(gm, (x,)) as n:
    ...     n
    1
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
import torch.fx as fx
from torch import nn
from torch.fx.node import map_arg

from fxstudio.core.fxcompat.modules import tensors_of

#: Ops on fewer elements than this run on one thread anyway (ATen's grain size for splitting
#: an op among threads); a model whose weights and inputs come to fewer elements per node
#: than this is run on one thread when only its shapes or a comparison are wanted.
SMALL_OP_ELEMENTS = 32_768


def small_ops(module: nn.Module, graph: fx.Graph, inputs: tuple[Any, ...]) -> bool:
    """Whether ``module``'s ops are small: its weights and ``inputs`` come to fewer than
    :data:`SMALL_OP_ELEMENTS` elements per node that computes something."""
    return Plan(module, graph).small_ops(inputs)


class Plan:
    """What every run of ``graph`` with ``module``'s submodules reads: the submodules by
    path (one walk of the module tree), the nodes, and after which node each value is
    dropped -- made once for several runs."""

    def __init__(self, module: nn.Module, graph: fx.Graph) -> None:
        self.module, self.graph = module, graph
        self.modules = dict(module.named_modules(remove_duplicate=False))
        self.nodes = list(graph.nodes)
        self._weights: int | None = None  # elements, all weights told (small_ops)
        self.last_use: dict[fx.Node, list[fx.Node]] = {}
        seen: set[fx.Node] = set()
        for node in reversed(self.nodes):  # a value is dropped after the last node reading it
            for used in node.all_input_nodes:
                if used not in seen:
                    seen.add(used)
                    self.last_use.setdefault(node, []).append(used)

    @contextlib.contextmanager
    def eval_mode(self) -> Iterator[None]:
        """:func:`~fxstudio.core.graph.modes.eval_mode` from the submodules already read:
        those in training mode are put in eval mode for the while, then back."""
        training = [m for m in self.modules.values() if m.training]
        for m in training:
            m.training = False
        try:
            yield
        finally:
            for m in training:
                m.training = True

    def small_ops(self, inputs: tuple[Any, ...]) -> bool:
        """:func:`small_ops`, from the submodules already read (their weights counted once
        for all the runs)."""
        if self._weights is None:
            self._weights = sum(t.numel() for t in tensors_of(self.modules.values()))
        given = sum(t.numel() for t in inputs if isinstance(t, torch.Tensor))
        calls = sum(1 for n in self.nodes if n.op.startswith("call_")) or 1
        return (self._weights + given) / calls < SMALL_OP_ELEMENTS


@contextlib.contextmanager
def bookkeeping_threads(
    module: nn.Module, inputs: tuple[Any, ...], graph: fx.Graph | None = None
) -> Iterator[int]:
    """Run a bookkeeping run of ``module`` (shapes from a real run, the rewrite check) on one
    thread when its ops are small (:func:`small_ops`), else on as many as now; yields the
    count and puts the one before back.  (torch's count is the process's: the run is the
    only torch work this guard expects while it lasts on its thread.)"""
    graph = graph if graph is not None else getattr(module, "graph", None)
    if not isinstance(graph, fx.Graph):
        yield torch.get_num_threads()
        return
    with threads(1 if small_ops(module, graph, inputs) else None) as n:
        yield n


def bookkeeping_count(plan: Plan, inputs: tuple[Any, ...]) -> int | None:
    """The threads :func:`bookkeeping_threads` would run ``plan`` on (None: as many as now)."""
    return 1 if plan.small_ops(inputs) else None


@contextlib.contextmanager
def threads(n: int | None) -> Iterator[int]:
    """Run with ``n`` torch threads (``None``: as now); the count before is put back."""
    before = torch.get_num_threads()
    if n is not None and n != before:
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


class Current:
    """The node a run is at (to say where it failed)."""

    node: fx.Node | None = None


def run_nodes(
    module: nn.Module,
    graph: fx.Graph,
    inputs: tuple[Any, ...],
    on_value: Callable[[fx.Node, Any], None] | None = None,
    at: Current | None = None,
    plan: Plan | None = None,
) -> Any:
    """Run ``graph`` with ``module``'s submodules and attributes on ``inputs`` (as
    ``fx.Interpreter`` does, input and output processing included) and return its output.
    ``on_value(node, value)`` sees each node's value as it is made; ``at.node`` is the node
    being run (the one that raised, if one did); ``plan``: made already for this module and
    graph (several runs)."""
    plan = plan if plan is not None else Plan(module, graph)
    modules, last_use = plan.modules, plan.last_use
    env: dict[fx.Node, Any] = {}
    given = iter(graph.process_inputs(*inputs))
    get = env.__getitem__
    at = at if at is not None else Current()
    for node in plan.nodes:
        at.node = node
        op, target = node.op, node.target
        if op == "placeholder":
            value = placeholder_value(node, given)
        elif op == "call_module":
            value = modules[target](*map_arg(node.args, get), **map_arg(node.kwargs, get))
        elif op == "call_function":
            value = target(*map_arg(node.args, get), **map_arg(node.kwargs, get))
        elif op == "call_method":  # a function's locals: the receiver is not held after
            value = _call_method(target, map_arg(node.args, get), map_arg(node.kwargs, get))
        elif op == "get_attr":
            value = _attribute(modules, str(target))
        elif op == "output":
            return graph.process_outputs(map_arg(node.args[0], get))
        else:
            raise RuntimeError(f"node '{node.name}' has an op fx does not know: {op}")
        env[node] = value
        if on_value is not None:
            on_value(node, value)
        value = None  # env holds it, and drops it after its last use
        for used in last_use.get(node, ()):
            del env[used]
    return None


def _call_method(name: str, args: Any, kwargs: Any) -> Any:
    this, *rest = args
    return getattr(this, name)(*rest, **kwargs)


def placeholder_value(node: fx.Node, given: Iterator[Any]) -> Any:
    """A placeholder's value: the next of ``given`` (all the rest for ``*args``), else its
    default."""
    if str(node.target).startswith("*"):
        return list(given)
    try:
        return next(given)
    except StopIteration:
        if node.args:
            return node.args[0]
        raise RuntimeError(
            f"Expected positional argument for parameter {node.target}, but one was not passed in!"
        ) from None


def _attribute(modules: dict[str, nn.Module], target: str) -> Any:
    """A submodule, or an attribute of the submodule that holds it (read now: a run on fake
    tensors swaps the weights for a while)."""
    if target in modules:
        return modules[target]
    owner, _, name = target.rpartition(".")
    if owner in modules:
        return getattr(modules[owner], name)
    value: Any = modules[""]
    for part in target.split("."):
        value = getattr(value, part)
    return value
