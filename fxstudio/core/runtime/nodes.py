"""Per-node times from one profiled run, kept apart from the clean headline run.

The graph is compiled once more with a fast profiler range around every call node -- torch's
own ``Graph.python_code(record_func=True)`` codegen (``_RecordFunctionFast``, the mechanism of
``GraphModule.enrich_profiler_metadata``), not an Interpreter per node -- and run ``repeats``
times under ``torch.profiler``.  Then, for every call:

- CPU: a node's time is its range (the ops it ran); ops outside every node range are
  *unattributed*; the rest of the call's range (Python between the nodes) is the *gap*.
- CUDA: every kernel (and memcpy/memset) belongs to the op that launched it (the profiler's
  correlation id), that op to the node range around it; a node's time is the sum of its
  kernels; the whole is first kernel start to last kernel end; kernels launched outside
  any node are *unattributed*, and the idle/launch time between kernels is the *gap*.

So nodes + unattributed + gap = the profiled whole, call by call.  Each figure is the median
over the calls, with its IQR.

Example:
    >>> import torch
    >>> gm = torch.fx.symbolic_trace(torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU()))
    >>> raw = profile_calls(gm, (torch.randn(8, 64),), torch.device("cpu"), repeats=3)
    >>> sorted(raw.node_times), len(raw.whole_s)
    (['_0', '_1'], 3)
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

from fxstudio.core.fxcompat import set_forward_source
from fxstudio.core.process.noise import quiet_profiler
from fxstudio.core.runtime.timer import sync_for

FORWARD = "## fxstudio forward {} ##"  # one per profiled module, by its number
_NODE = re.compile(r"^## (\d+)\.(\d+) ##$")  # module number . node number
_CODEGEN_RANGE = re.compile(r"_RecordFunctionFast\('## (\d+) ##'\)")
_DEVICE_KINDS = (DeviceType.CUDA,)


def annotated(gm: fx.GraphModule, tag: int = 0) -> tuple[fx.GraphModule, list[str]]:
    """A copy of ``gm`` (weights shared) whose forward opens a profiler range per call node
    (named ``## tag.i ##``) inside one for the call (``FORWARD`` with ``tag``), and the node
    names by range number."""
    graph = copy.deepcopy(gm.graph)
    module = fx.GraphModule(gm, graph)
    code = graph.python_code(root_module="self", record_func=True)
    src = code.src.replace("## ENTER_GRAPH_PLACEHOLDER_KEY ##", FORWARD.format(tag))
    src = _CODEGEN_RANGE.sub(lambda m: f"_RecordFunctionFast('## {tag}.{m.group(1)} ##')", src)
    set_forward_source(module, src, code.globals)  # its own class; .code shows what runs
    return module, [n.name for n in graph.nodes]


@dataclass
class RawProfile:
    """What the profiled calls measured, one value per call."""

    device: str
    node_times: dict[str, list[float]]  # seconds per call, for every node that ran
    whole_s: list[float]  # the profiled whole of each call
    unattributed_s: list[float]
    gap_s: list[float]
    kernel_s: list[float]  # all op (CPU) / kernel (CUDA) time in the call
    wall_s: float  # wall time per call with the profiler on
    trace: Callable[[Path], None] | None = field(default=None, repr=False)

    @property
    def attributed(self) -> float:
        """Share of op/kernel time that belongs to a node."""
        total = sum(self.kernel_s)
        return 1.0 - sum(self.unattributed_s) / total if total > 0 else 1.0


def _sweep(
    events: list[Any], names: list[str], tag: int
) -> tuple[list[dict[str, Any]], dict[int, tuple[int, str | None]]]:
    """Walk the CPU events of the calling thread in time order (a stack of open ranges).

    Returns per call {"start","end","nodes":{name: s},"ops": s, "outside": s} and, for every
    op, its correlation id → (call number, node or None)."""
    cpu = [
        e for e in events if e.device_type() == DeviceType.CPU and e.linked_correlation_id() == 0
    ]
    ours = FORWARD.format(tag)
    forwards = [e for e in cpu if e.name() == ours]
    if not forwards:
        return [], {}
    thread = forwards[0].start_thread_id()
    cpu = [e for e in cpu if e.start_thread_id() == thread]
    cpu.sort(key=lambda e: (e.start_ns(), -e.duration_ns()))
    calls: list[dict[str, Any]] = []
    owner: dict[int, tuple[int, str | None]] = {}
    stack: list[tuple[int, int, str | None, bool]] = []  # end, call, node, is_op
    for e in cpu:
        start, end = e.start_ns(), e.start_ns() + e.duration_ns()
        while stack and stack[-1][0] <= start:
            stack.pop()
        name = e.name()
        if name == ours:
            calls.append({"start": start, "end": end, "nodes": {}, "ops": 0.0, "outside": 0.0})
            stack.append((end, len(calls) - 1, None, False))
            owner[e.correlation_id()] = (len(calls) - 1, None)
            continue
        if not stack:
            continue  # outside every call (the warm-up's stragglers)
        _, call, node, inside_op = stack[-1]
        hit = _NODE.match(name)
        if hit and not inside_op and int(hit.group(1)) == tag:
            index = int(hit.group(2))
            node = names[index] if index < len(names) else None
            if node is not None:
                nodes = calls[call]["nodes"]
                nodes[node] = nodes.get(node, 0.0) + e.duration_ns() * 1e-9
            owner[e.correlation_id()] = (call, node)
            stack.append((end, call, node, False))
            continue
        owner[e.correlation_id()] = (call, node)
        if not inside_op:  # a top-level op: its time is the op time of the call
            seconds = e.duration_ns() * 1e-9
            calls[call]["ops"] += seconds
            if node is None:
                calls[call]["outside"] += seconds
        stack.append((end, call, node, True))
    return calls, owner


def _attribute(events: list[Any], names: list[str], on_device: bool, tag: int) -> RawProfile:
    calls, owner = _sweep(events, names, tag)
    node_times: dict[str, list[float]] = {}
    whole: list[float] = []
    unattributed: list[float] = []
    gap: list[float] = []
    kernel: list[float] = []
    if not on_device:
        for c in calls:
            span = (c["end"] - c["start"]) * 1e-9
            parts = sum(c["nodes"].values())
            whole.append(span)
            unattributed.append(c["outside"])
            gap.append(span - parts - c["outside"])
            kernel.append(c["ops"])
            for name, s in c["nodes"].items():
                node_times.setdefault(name, []).append(s)
    else:
        per_call: list[dict[str, Any]] = [
            {"first": None, "last": None, "nodes": {}, "outside": 0.0, "all": 0.0} for _ in calls
        ]
        for e in events:
            if e.device_type() not in _DEVICE_KINDS:
                continue
            link = owner.get(e.linked_correlation_id())
            if link is None:
                continue
            call, node = link
            k = per_call[call]
            start, end = e.start_ns(), e.start_ns() + e.duration_ns()
            k["first"] = start if k["first"] is None else min(k["first"], start)
            k["last"] = end if k["last"] is None else max(k["last"], end)
            seconds = e.duration_ns() * 1e-9
            k["all"] += seconds
            if node is None:
                k["outside"] += seconds
            else:
                k["nodes"][node] = k["nodes"].get(node, 0.0) + seconds
        for k in per_call:
            if k["first"] is None:
                continue
            span = (k["last"] - k["first"]) * 1e-9
            whole.append(span)
            unattributed.append(k["outside"])
            gap.append(span - k["all"])
            kernel.append(k["all"])
            for name, s in k["nodes"].items():
                node_times.setdefault(name, []).append(s)
    # a node that ran in some calls but not others (none in a static graph): count it as 0
    for times in node_times.values():
        times.extend([0.0] * (len(whole) - len(times)))
    return RawProfile("", node_times, whole, unattributed, gap, kernel, 0.0)


def _renamed_trace(prof: Any, names: list[list[str]], labels: list[str]) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        tmp = path.with_name(path.name + ".raw")
        prof.export_chrome_trace(str(tmp))
        try:
            data = json.loads(tmp.read_text())
        finally:
            tmp.unlink(missing_ok=True)
        forwards = {FORWARD.format(tag): f"{label}forward" for tag, label in enumerate(labels)}
        for event in data.get("traceEvents", []):
            name = str(event.get("name", ""))
            if name in forwards:
                event["name"] = forwards[name]
            hit = _NODE.match(name)
            if hit and int(hit.group(1)) < len(names):
                tag, index = int(hit.group(1)), int(hit.group(2))
                if index < len(names[tag]):
                    event["name"] = labels[tag] + names[tag][index]
        path.write_text(json.dumps(data))

    return write


def profile_calls(
    gm: fx.GraphModule,
    inputs: tuple[Any, ...],
    device: torch.device,
    repeats: int = 9,
) -> RawProfile:
    """Run the annotated copy of ``gm`` ``repeats`` times under the profiler (after two
    unprofiled warm-up calls, and one profiled call that is dropped)."""
    return profile_interleaved([gm], inputs, device, repeats)[0]


def profile_interleaved(
    gms: list[fx.GraphModule],
    inputs: tuple[Any, ...],
    device: torch.device,
    repeats: int = 9,
    labels: list[str] | None = None,
) -> list[RawProfile]:
    """Profile several versions of a model in one profiler session, their calls interleaved
    (A B, B A, A B, …) so that drift of the machine falls on all alike; one raw profile each.
    ``labels`` prefix their node names in the trace (default: none for one module,
    ``"0:"``, ``"1:"``… for several)."""
    made = [annotated(gm, tag) for tag, gm in enumerate(gms)]
    if labels is None:
        labels = [""] if len(gms) == 1 else [f"{i}:" for i in range(len(gms))]
    sync = sync_for(device)
    on_device = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_device else [])
    wall = [0.0] * len(made)
    with torch.no_grad():
        for module, _ in made:
            for _ in range(2):
                module(*inputs)
        sync()
        with quiet_profiler(profile(activities=activities)) as prof:
            for module, _ in made:  # one profiled call each, dropped
                module(*inputs)
            sync()
            for r in range(repeats):
                order = range(len(made)) if r % 2 == 0 else reversed(range(len(made)))
                for i in order:
                    t0 = time.perf_counter()
                    made[i][0](*inputs)
                    sync()
                    wall[i] += time.perf_counter() - t0
    events = list(prof.profiler.kineto_results.events())
    names = [n for _, n in made]
    trace = _renamed_trace(prof, names, labels)
    out = []
    for tag, (_, node_names) in enumerate(made):
        raw = _attribute(events, node_names, on_device, tag)
        drop = len(raw.whole_s) - repeats  # the dropped first call
        if drop > 0:
            raw.whole_s, raw.unattributed_s = raw.whole_s[drop:], raw.unattributed_s[drop:]
            raw.gap_s, raw.kernel_s = raw.gap_s[drop:], raw.kernel_s[drop:]
            raw.node_times = {k: v[drop:] for k, v in raw.node_times.items()}
        raw.device = str(device)
        raw.wall_s = wall[tag] / repeats
        raw.trace = trace
        out.append(raw)
    return out
