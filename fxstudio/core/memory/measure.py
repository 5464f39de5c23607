"""Memory measured in a real run, node by node: what each node allocated, what its kernel
used as scratch and gave back, the live activation bytes after each node, and the peak.

The quantity is the estimate's (:mod:`fxstudio.core.memory.estimate`): live activation bytes
-- the inputs and every value the graph makes -- with parameters and buffers left out (they
were there before the run).  The graph runs node by node
(:func:`~fxstudio.core.graph.execution.run_nodes`, each value dropped after its last user as
the generated code's ``x = None`` lines drop it, a value no node reads at once), in eval mode
and without autograd, after one warm-up run (one-time allocations: weight packs, handles).

- **CPU**: ``torch.profiler`` with ``profile_memory=True`` records each allocation and free
  of the CPU allocator (``[memory]`` events with byte deltas; the CPU allocator caches
  nothing, so each is one tensor's bytes).  A profiler range marks each node's run and,
  apart, the frees after it; the events are put in order and summed into the live-bytes
  timeline -- the peak is the highest point of that sum, scratch included.
- **CUDA**: the caching allocator's counters, the device synchronised around each node:
  ``memory_allocated`` before and after, ``max_memory_allocated`` after
  ``reset_peak_memory_stats`` for the highest point inside the node.  The allocator hands out
  blocks of 512 bytes (and a cached large block whole when splitting it would leave under
  1 MiB), so each tensor counts rounded up: ``rounding_bytes`` says by how much (the
  allocator's ``requested_bytes`` beside ``memory_allocated``).

Per node (:class:`NodeMeasure`), named and ordered as the estimate's nodes (the output node
left out): ``bytes`` (what its run left allocated: its output's new storage),
``scratch_bytes`` (what its kernels took above that and gave back before the node ended:
workspace, a weight repacked for the kernel; the estimate sees outputs only),
``running_bytes`` (live as it ends, the values it read last still held), ``live_bytes`` (after
the frees that follow it: the timeline).  The whole run: ``peak_bytes``, the highest
``running_bytes`` -- the estimate's peak, measured -- and ``allocated_peak_bytes``, the
allocator's highest point, scratch included; ``plain_peak_bytes``, the allocator's peak in a
plain run of the whole model (its generated code).

Example:
    >>> import torch
    >>> gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU()))
    >>> m = measure(gm, (torch.ones(2, 4),))
    >>> m.nodes, m.peak_bytes, m.peak_node  # float32: 4 bytes each
    ({'input_1': 32, '_0': 64, '_1': 64}, 160, '_1')
    >>> m.timeline  # input; linear; relu, then the linear's output freed
    (32, 96, 96)
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import torch
import torch.fx as fx
from torch.profiler import ProfilerActivity, profile, record_function

from fxstudio.core.errors import UserError
from fxstudio.core.fxcompat import tree_leaves, tree_map
from fxstudio.core.graph.execution import Current, Plan, run_nodes
from fxstudio.core.process import modelcode
from fxstudio.core.process.files import atomic_write
from fxstudio.core.process.guard import allocation_failure, format_bytes, out_of_memory
from fxstudio.core.process.noise import quiet_profiler
from fxstudio.core.results import Json
from fxstudio.core.runtime.devices import resolve

#: The CUDA caching allocator's block: every tensor's bytes are rounded up to a multiple.
CUDA_BLOCK = 512
#: Names of the profiler ranges that mark the phases of a node (``fxmem.run.7``).
RANGE = "fxmem"
#: The allocators whose ``[memory]`` events count as the CPU's.
CPU_DEVICE_TYPES = ("CPU", "MKLDNN", "IDEEP")


class MeasureError(UserError):
    """A graph that cannot be measured here (no weights, no profiler, no such device)."""


@dataclass(frozen=True)
class NodeMeasure:
    """One node's bytes as measured (see the module's docstring); ``peak_bytes``: the
    allocator's highest point while it ran, scratch included."""

    name: str
    bytes: int
    scratch_bytes: int
    running_bytes: int
    live_bytes: int
    freed_bytes: int
    peak_bytes: int
    rounding_bytes: int = 0  # CUDA: of ``bytes``, what the allocator gave above the request


@dataclass(frozen=True)
class MeasuredMemory:
    """A measured run.  ``peak_bytes``: the highest live activation bytes as a node ends (the
    values: inputs and what the graph made), at ``peak_node``; ``allocated_peak_bytes``: the
    allocator's highest point, kernels' scratch included, at ``allocated_peak_node``;
    ``nodes``: the bytes each node allocated; ``timeline``: each node's ``live_bytes``, in
    execution order."""

    device: str
    how: str
    peak_bytes: int
    peak_node: str
    allocated_peak_bytes: int
    allocated_peak_node: str
    inputs_bytes: int
    nodes: dict[str, int]
    timeline: tuple[int, ...]
    details: tuple[NodeMeasure, ...]
    plain_peak_bytes: int | None = None

    def to_json(self) -> Json:
        return {
            "device": self.device,
            "how": self.how,
            "peak_bytes": self.peak_bytes,
            "peak_node": self.peak_node,
            "allocated_peak_bytes": self.allocated_peak_bytes,
            "allocated_peak_node": self.allocated_peak_node,
            "inputs_bytes": self.inputs_bytes,
            "plain_peak_bytes": self.plain_peak_bytes,
            "nodes": [asdict(d) for d in self.details],
        }

    def write(self, path: str) -> None:
        atomic_write(path, json.dumps(self.to_json(), indent=1))

    def describe(self) -> str:
        """The peak in words (``19.5 MiB at node 'add' on cpu``), the allocator's with
        scratch where it is higher."""
        text = f"peak {format_bytes(self.peak_bytes)} at node '{self.peak_node}' on {self.device}"
        if self.allocated_peak_bytes > self.peak_bytes:
            text += (
                f"; with kernels' scratch {format_bytes(self.allocated_peak_bytes)} at "
                f"'{self.allocated_peak_node}'"
            )
        return text


class _Row(NamedTuple):
    """A node's activation bytes before it, as it ends, at the highest point while it ran,
    after the frees that follow it."""

    name: str
    began: int
    ran: int
    high: int
    after: int
    rounding: int = 0


def _result(
    device: str, how: str, rows: list[_Row], inputs_bytes: int, plain: int | None = None
) -> MeasuredMemory:
    details = tuple(
        NodeMeasure(
            r.name,
            bytes=r.ran - r.began,
            scratch_bytes=max(r.high - max(r.began, r.ran), 0),
            running_bytes=r.ran,
            live_bytes=r.after,
            freed_bytes=r.ran - r.after,
            peak_bytes=max(r.high, r.ran),
            rounding_bytes=r.rounding,
        )
        for r in rows
    )
    top = max(details, key=lambda d: d.running_bytes, default=None)
    high = max(details, key=lambda d: d.peak_bytes, default=None)
    return MeasuredMemory(
        device,
        how,
        top.running_bytes if top else 0,
        top.name if top else "",
        high.peak_bytes if high else 0,
        high.name if high else "",
        inputs_bytes,
        {d.name: d.bytes for d in details},
        tuple(d.live_bytes for d in details),
        details,
        plain,
    )


def measure(gm: fx.GraphModule, inputs: tuple[Any, ...], device: str = "cpu") -> MeasuredMemory:
    """Run ``gm`` on ``inputs`` node by node on ``device`` and measure its activation bytes
    (see the module's docstring).  A module on another device is copied there; ``gm`` itself
    is left as it was (its submodules in eval mode for the run, then back).  A model that
    cannot be run here raises :class:`MeasureError` (out of memory: what it asked for)."""
    target = resolve(device)
    if target.type not in ("cpu", "cuda"):
        raise MeasureError(
            f"Memory is measured on the CPU (profiler) or a CUDA device, not {target.type}: "
            "use --device cpu or cuda."
        )
    _check_real(gm, inputs)
    marks = _Marks()
    try:
        with modelcode.one_turn():  # the model's code runs in one thread at a time
            module = gm
            if any(t.device != target for t in _tensors(gm)):
                module = copy.deepcopy(gm).to(target)
            given = tuple(tree_map(lambda x: _to(x, target), inputs))
            plan = _plan(module)
            with plan.eval_mode(), torch.no_grad():
                run_nodes(module, module.graph, given, at=marks, plan=plan)  # warm-up
                if target.type == "cuda":
                    return _measure_cuda(plan, given, target, marks)
                return _measure_cpu(plan, given, marks)
    except UserError:
        raise
    except Exception as exc:
        oom, requested = allocation_failure(exc)
        if oom:
            raise out_of_memory(
                f"measuring the model's memory on {target}", requested, None
            ) from exc
        at = f" at node '{marks.node.name}'" if marks.node is not None else ""
        raise MeasureError(
            f"Running the model on {target} to measure its memory failed{at}: "
            f"{type(exc).__name__}: {exc}. The estimate does not need a run."
        ) from exc
    finally:
        if target.type == "cuda":
            torch.cuda.empty_cache()


def real_inputs(inputs: tuple[Any, ...]) -> Iterator[Any]:
    """``inputs`` with each shape-only (meta) tensor made real: floats random, integers and
    booleans zeros (a valid token id, index, mask) -- what a run measured at other sizes
    runs on."""
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_meta:
            if x.is_floating_point() or x.is_complex():
                yield torch.randn(x.shape, dtype=x.dtype)
            else:
                yield torch.zeros(x.shape, dtype=x.dtype)
        else:
            yield x


def _to(x: Any, device: torch.device) -> Any:
    return x.to(device) if isinstance(x, torch.Tensor) else x


def _plan(module: fx.GraphModule) -> Plan:
    """The run's plan, a value no node reads dropped as soon as it is made (as the generated
    code drops it; ``fx.Interpreter`` keeps it to the end)."""
    plan = Plan(module, module.graph)
    for node in plan.nodes:
        if not node.users and node.op not in ("placeholder", "output"):
            plan.last_use.setdefault(node, []).append(node)
    return plan


def _tensors(gm: fx.GraphModule) -> Iterator[torch.Tensor]:
    yield from gm.parameters()
    yield from gm.buffers()


def _check_real(gm: fx.GraphModule, inputs: tuple[Any, ...]) -> None:
    if any(t.is_meta for t in _tensors(gm)):
        raise MeasureError(
            "This model was opened without its weights (structure only): there is nothing "
            "to run, so nothing to measure. Use the estimate, or open it with its weights."
        )
    if any(isinstance(x, torch.Tensor) and x.is_meta for x in tree_leaves(inputs)):
        raise MeasureError(
            "The inputs are shapes only (meta tensors): give real inputs to measure a run."
        )


class _Marks(Current):
    """The node a run is at, telling ``on_start(node)`` as each node begins (after the frees
    of the node before)."""

    def __init__(self) -> None:
        self.on_start: Callable[[fx.Node], None] | None = None
        self._node: fx.Node | None = None

    @property
    def node(self) -> fx.Node | None:
        return self._node

    @node.setter
    def node(self, node: fx.Node | None) -> None:
        self._node = node
        if node is not None and self.on_start is not None:
            self.on_start(node)


def _storage_bytes(value: Any, seen: set[int]) -> int:
    """The bytes of the storages ``value`` holds that are not in ``seen`` (then added)."""
    total = 0
    for t in tree_leaves(value):
        if isinstance(t, torch.Tensor) and not t.is_meta:
            storage = t.untyped_storage()
            if storage.data_ptr() not in seen:
                seen.add(storage.data_ptr())
                total += storage.nbytes()
    return total


# --- CPU: the profiler's memory events -------------------------------------------------------


def _measure_cpu(plan: Plan, inputs: tuple[Any, ...], marks: _Marks) -> MeasuredMemory:
    if not torch.profiler.kineto_available():
        raise MeasureError(
            "This build of torch has no profiler (kineto), so CPU memory cannot be measured: "
            "use a standard torch build, or the estimate."
        )
    index = {node: i for i, node in enumerate(plan.nodes)}
    opened: list[Any] = []
    inputs_at: dict[int, int] = {}
    seen: set[int] = set()

    def enter(name: str) -> None:
        if opened:
            opened.pop().__exit__(None, None, None)
        r = record_function(name)
        r.__enter__()
        opened.append(r)

    def start(node: fx.Node) -> None:
        enter(f"{RANGE}.run.{index[node]}")

    marks.on_start = start

    def made(node: fx.Node, value: Any) -> None:
        if node.op == "placeholder":
            inputs_at[index[node]] = _storage_bytes(value, seen)
        enter(f"{RANGE}.free.{index[node]}")

    with quiet_profiler(profile(activities=[ProfilerActivity.CPU], profile_memory=True)) as prof:
        try:
            out = run_nodes(plan.module, plan.graph, inputs, made, marks, plan)
        finally:
            if opened:
                opened.pop().__exit__(None, None, None)
    del out  # held until the profile ended: the graph's output is live at its end
    phases, deltas = _events(prof)
    how = (
        "torch.profiler memory events (the CPU allocator: each tensor's bytes, no cache), "
        "node by node"
    )
    measured = _timeline(plan, phases, deltas, inputs_at, "cpu", how)
    with quiet_profiler(profile(activities=[ProfilerActivity.CPU], profile_memory=True)) as prof:
        out = plan.module(*inputs)
    del out
    live = plain = 0
    for _, nbytes in _events(prof)[1]:
        live += nbytes
        plain = max(plain, live)
    return dataclasses.replace(measured, plain_peak_bytes=plain + measured.inputs_bytes)


def _events(prof: profile) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]]]:
    """The ranges this module opened ``(start_ns, node index, "run"|"free")`` and the CPU
    allocator's events ``(time_ns, bytes)``, each in time order."""
    results = prof.profiler.kineto_results if prof.profiler is not None else None
    if results is None:
        raise MeasureError("The profiler recorded nothing: measure again, or use the estimate.")
    phases, deltas = [], []
    for e in results.events():
        name = e.name()
        if name == "[memory]":
            if str(e.device_type()).rpartition(".")[2] in CPU_DEVICE_TYPES:
                deltas.append((e.start_ns(), e.nbytes()))  # type: ignore[attr-defined]
        elif name.startswith(RANGE + "."):
            _, phase, i = name.split(".")
            phases.append((e.start_ns(), int(i), phase))
    phases.sort()
    deltas.sort(key=lambda d: d[0])
    return phases, deltas


def _timeline(
    plan: Plan,
    phases: list[tuple[int, int, str]],
    deltas: list[tuple[int, int]],
    inputs_at: dict[int, int],
    device: str,
    how: str,
) -> MeasuredMemory:
    """Sum the allocator's events phase by phase (an event belongs to the last phase begun
    before it) into each node's figures."""
    n = len(plan.nodes)
    run: list[list[int]] = [[] for _ in range(n)]
    free: list[list[int]] = [[] for _ in range(n)]
    starts = [p[0] for p in phases]
    for t, nbytes in deltas:
        k = bisect.bisect_right(starts, t) - 1
        if k < 0:
            continue  # before the first node: not the graph's
        _, i, phase = phases[k]
        (run if phase == "run" else free)[i].append(nbytes)
    live, rows = 0, []
    for i, node in enumerate(plan.nodes):
        if node.op == "output":
            continue
        began = live
        live += inputs_at.get(i, 0)  # an input appears at its placeholder
        high = live
        for d in run[i]:
            live += d
            high = max(high, live)
        ran = live
        live += sum(free[i])
        rows.append(_Row(node.name, began, ran, high, live))
    return _result(device, how, rows, sum(inputs_at.values()))


# --- CUDA: the caching allocator's counters --------------------------------------------------


def _measure_cuda(
    plan: Plan, inputs: tuple[Any, ...], device: torch.device, marks: _Marks
) -> MeasuredMemory:
    cuda = torch.cuda
    index = {node: i for i, node in enumerate(plan.nodes)}
    inputs_at: dict[int, int] = {}
    seen: set[int] = set()
    # per node: allocated when it began, after it ran, the highest inside, after its frees;
    # the bytes asked for when it began and after it ran
    began, ran, high, after, asked, got = ([0] * len(plan.nodes) for _ in range(6))
    current: list[int] = []

    def allocated() -> int:
        cuda.synchronize(device)
        return cuda.memory_allocated(device)

    def requested() -> int:
        return int(cuda.memory_stats(device).get("requested_bytes.all.current", 0))

    def start(node: fx.Node) -> None:
        now = allocated()
        if current:
            after[current[-1]] = now
        i = index[node]
        current.append(i)
        began[i] = after[i] = ran[i] = now
        asked[i] = got[i] = requested()
        cuda.reset_peak_memory_stats(device)

    marks.on_start = start

    def made(node: fx.Node, value: Any) -> None:
        i = index[node]
        if node.op == "placeholder":
            inputs_at[i] = _storage_bytes(value, seen)
        ran[i] = allocated()
        high[i] = cuda.max_memory_allocated(device)
        got[i] = requested()

    base = allocated()  # parameters, buffers, the inputs, library workspaces: before the run
    given = _storage_bytes(inputs, set())
    out = run_nodes(plan.module, plan.graph, inputs, made, marks, plan)
    if current:
        i = current[-1]
        after[i] = allocated()
        high[i] = max(high[i], cuda.max_memory_allocated(device))
    offset = given - base  # allocated + offset: the activation bytes, inputs counted
    rows, seen_inputs = [], 0
    for i, node in enumerate(plan.nodes):
        if node.op == "output":
            continue
        pending = given - seen_inputs  # inputs count from their placeholder
        seen_inputs += inputs_at.get(i, 0)
        now = offset - (given - seen_inputs)
        rounding = (ran[i] - began[i]) - (got[i] - asked[i])
        before = began[i] + offset - pending
        rows.append(_Row(node.name, before, ran[i] + now, high[i] + now, after[i] + now, rounding))
    del out
    cuda.reset_peak_memory_stats(device)
    start_plain = allocated()
    plan.module(*inputs)
    plain = cuda.max_memory_allocated(device) - start_plain + given
    how = (
        "CUDA caching allocator: memory_allocated / max_memory_allocated around each node, "
        "synchronised (blocks of 512 bytes)"
    )
    return _result(str(device), how, rows, given, plain)
