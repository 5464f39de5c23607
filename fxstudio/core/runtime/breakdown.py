"""The profiled run turned into what the panel and ``--json`` show: one row per node (time,
spread, share, FLOPs, bytes, roofline), one per module of the document's module tree, and the
unattributed and gap rows -- adding up.

A node's time is the mean over the *middle half* of the profiled calls (the calls whose whole
lies between the quartiles of the wholes): robust like a median, and, unlike per-node
medians, additive -- so nodes + unattributed + gap equals the profiled whole exactly, and a
module's time is exactly the sum of the nodes under it.  The spread shown per node is its IQR
over all calls.

Example:
    >>> middle_calls([5.0, 1.0, 2.0, 100.0, 3.0])   # the calls between the quartiles
    [2, 4, 0]
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import torch.fx as fx

from fxstudio.core.graph.graphviews import ModuleGroup, format_target, module_path
from fxstudio.core.results import Json
from fxstudio.core.runtime.flops import Work
from fxstudio.core.runtime.nodes import RawProfile
from fxstudio.core.runtime.roofline import Peaks
from fxstudio.core.runtime.timer import iqr, median

SLOW_PROFILE = 1.10  # profiled whole ÷ clean headline above this: the profile distorts


def middle_calls(wholes: list[float]) -> list[int]:
    """The calls whose whole lies between the quartiles (all of them when fewer than 4)."""
    order = sorted(range(len(wholes)), key=lambda i: wholes[i])
    if len(order) < 4:
        return order
    quarter = len(order) // 4
    return order[quarter : len(order) - quarter]


@dataclass(frozen=True)
class NodeTime:
    name: str
    op: str
    target: str
    module: str
    time_s: float
    iqr_s: float
    share: float
    flops: int
    bytes: int
    flops_per_s: float | None
    bytes_per_s: float | None
    bound: str | None  # compute / memory / invalid / None
    peak_share: float | None
    from_cache: bool
    times_s: tuple[float, ...] = field(repr=False, default=())

    def to_json(self) -> Json:
        return {
            "name": self.name,
            "op": self.op,
            "target": self.target,
            "module": self.module,
            "time_s": self.time_s,
            "iqr_s": self.iqr_s,
            "share": self.share,
            "flops": self.flops,
            "bytes": self.bytes,
            "flops_per_s": self.flops_per_s,
            "bytes_per_s": self.bytes_per_s,
            "bound": self.bound,
            "peak_share": self.peak_share,
            "from_cache": self.from_cache,
            "times_s": list(self.times_s),
        }


@dataclass(frozen=True)
class ModuleTime:
    path: str
    type_name: str
    time_s: float
    share: float
    flops: int
    nodes: int
    names: tuple[str, ...] = field(repr=False, default=())  # the profiled nodes under it

    def to_json(self) -> Json:
        return {
            "path": self.path,
            "type": self.type_name,
            "time_s": self.time_s,
            "share": self.share,
            "flops": self.flops,
            "nodes": self.nodes,
        }


@dataclass
class NodeProfile:
    device: str
    nodes: list[NodeTime]  # in graph order
    modules: list[ModuleTime]  # the tree, parents before children; "" is the whole model
    whole_s: float  # the profiled whole (middle-half mean)
    median_whole_s: float  # the median of the profiled wholes, for comparison
    unattributed_s: float
    gap_s: float
    attributed: float  # share of op/kernel time inside a node
    calls: int
    wall_s: float  # wall time per call with the profiler on
    clean_s: float  # the clean headline median it is compared with
    peaks: Peaks
    raw: RawProfile = field(repr=False)

    @property
    def profiled_over_clean(self) -> float:
        return self.whole_s / self.clean_s if self.clean_s > 0 else 0.0

    @property
    def overhead(self) -> float:
        """Wall time per call with the profiler on ÷ the clean headline."""
        return self.wall_s / self.clean_s if self.clean_s > 0 else 0.0

    @property
    def parts_s(self) -> float:
        return sum(n.time_s for n in self.nodes) + self.unattributed_s + self.gap_s

    @cached_property
    def _by_name(self) -> dict[str, NodeTime]:
        return {n.name: n for n in self.nodes}

    def node(self, name: str) -> NodeTime | None:
        return self._by_name.get(name)

    def top(self, k: int = 10) -> list[NodeTime]:
        return sorted(self.nodes, key=lambda n: -n.time_s)[:k]

    def warnings(self) -> list[str]:
        out = []
        if self.profiled_over_clean > SLOW_PROFILE:
            out.append(
                f"the profiled run is {self.profiled_over_clean:.2f}× the clean one: the "
                "profiler's cost is in these node times (shares still hold roughly; use the "
                "headline for the total)"
            )
        bad = [n.name for n in self.nodes if n.bound == "invalid"]
        if bad:
            out.append(
                f"{len(bad)} node(s) measured above the device's peak FLOP/s -- a measurement "
                f"error, not a fast node: {', '.join(bad[:5])}"
            )
        if self.attributed < 0.99:
            out.append(f"only {self.attributed:.1%} of op time was inside a node's range")
        return out

    def to_json(self) -> Json:
        return {
            "nodes": [n.to_json() for n in self.nodes],
            "modules": [m.to_json() for m in self.modules],
            "unattributed_s": self.unattributed_s,
            "gap_s": self.gap_s,
            "profile": {
                "device": self.device,
                "whole_s": self.whole_s,
                "median_whole_s": self.median_whole_s,
                "parts_s": self.parts_s,
                "attributed": self.attributed,
                "calls": self.calls,
                "wall_s": self.wall_s,
                "clean_s": self.clean_s,
                "profiled_over_clean": self.profiled_over_clean,
                "overhead": self.overhead,
                "peaks": self.peaks.to_json(),
                "warnings": self.warnings(),
            },
        }

    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(
            [
                "name",
                "op",
                "target",
                "module",
                "time_s",
                "iqr_s",
                "share",
                "flops",
                "bytes",
                "flops_per_s",
                "bytes_per_s",
                "bound",
                "peak_share",
            ]
        )
        for n in self.nodes:
            w.writerow(
                [
                    n.name,
                    n.op,
                    n.target,
                    n.module,
                    f"{n.time_s:.9f}",
                    f"{n.iqr_s:.9f}",
                    f"{n.share:.6f}",
                    n.flops,
                    n.bytes,
                    n.flops_per_s or "",
                    n.bytes_per_s or "",
                    n.bound or "",
                    n.peak_share or "",
                ]
            )
        for label, s in (("(unattributed)", self.unattributed_s), ("(gap)", self.gap_s)):
            w.writerow(
                [
                    label,
                    "",
                    "",
                    "",
                    f"{s:.9f}",
                    "",
                    f"{s / self.whole_s:.6f}" if self.whole_s else "0",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                ]
            )
        return out.getvalue()

    def write_trace(self, path: Path) -> None:
        """The profiled calls as a Chrome/Perfetto trace, node ranges named by node."""
        assert self.raw.trace is not None
        self.raw.trace(path)

    def describe(self, top: int = 10) -> str:
        lines = [
            f"per node ({self.calls} profiled calls, separate from the headline): profiled whole "
            f"{self.whole_s * 1e3:.3f} ms = nodes {sum(n.time_s for n in self.nodes) * 1e3:.3f} + "
            f"unattributed {self.unattributed_s * 1e3:.3f} + gap {self.gap_s * 1e3:.3f} ms; "
            f"{self.attributed:.1%} of op time attributed; profiled ÷ clean "
            f"{self.profiled_over_clean:.2f}×",
            f"  peaks: {format_rate(self.peaks.flops_per_s, 'FLOP/s')}, "
            f"{format_rate(self.peaks.bytes_per_s, 'B/s')} ({self.peaks.source})",
            f"  {'node':<28} {'time':>10} {'±IQR':>9} {'share':>6} {'FLOP/s':>10} bound",
        ]
        for n in self.top(top):
            bound = n.bound or ""
            if n.peak_share is not None and n.bound != "invalid":
                bound += f" {n.peak_share:.0%}"
            lines.append(
                f"  {n.name[:28]:<28} {n.time_s * 1e3:>7.3f} ms {n.iqr_s * 1e3:>6.3f} ms "
                f"{n.share:>6.1%} {format_rate(n.flops_per_s, ''):>10} {bound}"
            )
        lines.append("  modules:")
        for m in sorted(self.modules, key=lambda m: -m.time_s)[1 : top + 1]:
            lines.append(f"  {m.path[:28]:<28} {m.time_s * 1e3:>7.3f} ms {'':>9} {m.share:>6.1%}")
        lines.extend(f"  WARNING: {w}" for w in self.warnings())
        return "\n".join(lines)


def format_rate(value: float | None, unit: str = "") -> str:
    """``1.5e10`` → ``'15.0 G'`` + unit; ``None`` → ``'–'``."""
    if value is None:
        return "–"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.1f} {prefix}{unit}".strip()
    return f"{value:.0f} {unit}".strip()


def breakdown(
    graph: fx.Graph,
    raw: RawProfile,
    work: dict[str, Work],
    tree: ModuleGroup,
    peaks: Peaks,
    clean_s: float,
) -> NodeProfile:
    keep = middle_calls(raw.whole_s)

    def mean(values: list[float]) -> float:
        return sum(values[i] for i in keep) / len(keep) if keep else 0.0

    whole = mean(raw.whole_s)
    rows: list[NodeTime] = []
    for n in graph.nodes:
        times = raw.node_times.get(n.name)
        if times is None:
            continue
        t = mean(times)
        w = work.get(n.name, Work(0, 0))
        place = peaks.place(w.flops, w.bytes, t)
        rows.append(
            NodeTime(
                n.name,
                n.op,
                format_target(n),
                module_path(n),
                t,
                iqr(times),
                t / whole if whole else 0.0,
                w.flops,
                w.bytes,
                place.flops_per_s,
                place.bytes_per_s,
                place.bound,
                place.peak_share,
                place.from_cache,
                tuple(times),
            )
        )
    by_name = {r.name: r for r in rows}
    modules = []
    for group in tree.walk():
        under = [by_name[n] for n in group.all_nodes() if n in by_name]
        t = sum(r.time_s for r in under)
        modules.append(
            ModuleTime(
                group.path,
                group.type_name,
                t,
                t / whole if whole else 0.0,
                sum(r.flops for r in under),
                len(under),
                tuple(r.name for r in under),
            )
        )
    return NodeProfile(
        raw.device,
        rows,
        modules,
        whole,
        median(raw.whole_s),
        mean(raw.unattributed_s),
        mean(raw.gap_s),
        raw.attributed,
        len(raw.whole_s),
        raw.wall_s,
        clean_s,
        peaks,
        raw,
    )
