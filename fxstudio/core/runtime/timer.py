"""The clean whole-model timer: warm-up, blocks long enough that the clock's cost does not
count, synchronised around each block (never per call), median and spread.

It follows ``torch.utils.benchmark``'s blocked measurement: calls are grouped into blocks of
``block`` calls (a power of ten), sized so the overhead of reading the clock (and, on CUDA, of
synchronising) is under 1e-4 of a block and a block lasts 10 ms or more; blocks are taken
until ``min_time`` is spent and at least ``min_blocks`` exist; a call's time is its block's
time divided by ``block``.  The first call (lazy initialisation, cuDNN autotuning,
compilation) is timed apart and reported, never mixed in, and the warm-up runs for 5 % of
``min_time`` at least and until single calls agree.  As ``timeit`` does, the garbage collector
is off inside a block (and runs between blocks).

Example:
    >>> t = time_calls(lambda: sum(range(1000)), min_time=0.02)
    >>> t.median_s > 0 and t.runs >= t.block * 9 and t.iqr_s >= 0
    True
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch

from fxstudio.core.process import collector
from fxstudio.core.results import Json

OVERHEAD_SHARE = 1e-4  # the clock (and sync) may cost at most this share of a block
NOISY = 0.10  # IQR / median above this: the machine was busy, say so
MIN_BLOCK_S = 0.01  # a block lasts at least this (calls back to back, as in real use)
WARM_SHARE = 0.05  # the warm-up lasts at least this share of the budget


def median(values: list[float] | tuple[float, ...]) -> float:
    return statistics.median(values) if values else 0.0


def iqr(values: list[float] | tuple[float, ...]) -> float:
    """The interquartile range (p75 − p25, inclusive quantiles); 0 for fewer than 2 values."""
    if len(values) < 2:
        return 0.0
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[2] - q[0]


@dataclass(frozen=True)
class Timing:
    times_s: tuple[float, ...]  # seconds per call, one value per block
    block: int  # calls per block
    first_call_s: float  # the very first call, apart (initialisation, autotuning, compile)
    warmup_s: float  # time spent warming up after it
    threads: int  # CPU threads torch used

    @property
    def median_s(self) -> float:
        return statistics.median(self.times_s)

    @property
    def min_s(self) -> float:
        return min(self.times_s)

    @property
    def iqr_s(self) -> float:
        return iqr(self.times_s)

    @property
    def runs(self) -> int:
        return len(self.times_s) * self.block

    @property
    def spread(self) -> float:
        return self.iqr_s / self.median_s if self.median_s > 0 else 0.0

    @property
    def noisy(self) -> bool:
        return self.spread > NOISY

    def to_json(self) -> Json:
        return {
            "median_s": self.median_s,
            "iqr_s": self.iqr_s,
            "min_s": self.min_s,
            "runs": self.runs,
            "blocks": len(self.times_s),
            "block": self.block,
            "first_call_s": self.first_call_s,
            "warmup_s": self.warmup_s,
            "threads": self.threads,
            "noisy": self.noisy,
        }


@contextlib.contextmanager
def threads(n: int | None) -> Iterator[int]:
    """Run with ``n`` CPU threads (``None``: as now); the count before is put back."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield torch.get_num_threads()
    finally:
        torch.set_num_threads(before)


def sync_for(device: torch.device | None) -> Callable[[], None]:
    if device is not None and device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    if device is not None and device.type == "mps":
        return torch.mps.synchronize
    return lambda: None


def _overhead(sync: Callable[[], None], clock: Callable[[], float]) -> float:
    """What reading the clock around a block (and synchronising) costs, at the median."""
    samples = []
    for _ in range(25):
        t0 = clock()
        sync()
        samples.append(clock() - t0)
    return max(statistics.median(samples), 1e-9)


@dataclass(frozen=True)
class _Calibrated:
    first: float
    warmup: float
    block: int


def _calibrate(
    fn: Callable[[], Any], sync: Callable[[], None], min_time: float, clock: Callable[[], float]
) -> _Calibrated:
    """First call apart, warm-up for at least :data:`WARM_SHARE` of the budget and until
    three single calls agree within 10 % (or 20 % of the budget is spent), then the block
    size.  Three calls of a fast model agree long before it is warm (the allocator's pools,
    the CPU's clock ramping up): without the minimum, the first timing of a process read
    up to 30 % high on a 40 µs model."""
    sync()
    t0 = clock()
    fn()
    sync()
    first = clock() - t0
    w0 = clock()
    recent: list[float] = []
    while clock() - w0 < 0.2 * min_time:
        t = clock()
        fn()
        sync()
        recent = [*recent[-2:], clock() - t]
        agree = len(recent) == 3 and max(recent) <= 1.1 * min(recent)
        if agree and clock() - w0 >= WARM_SHARE * min_time:
            break
    warmup = clock() - w0
    one = statistics.median(recent) if recent else first
    floor = max(_overhead(sync, clock) / OVERHEAD_SHARE, MIN_BLOCK_S)
    block = 1
    while block * one < floor and block < 10**7:
        block *= 10
    return _Calibrated(first, warmup, block)


def _block(
    fn: Callable[[], Any], block: int, sync: Callable[[], None], clock: Callable[[], float]
) -> float:
    with collector.paused(keep_after=False):  # as timeit does: no collection in the time
        t = clock()
        for _ in range(block):
            fn()
        sync()
        return (clock() - t) / block


def time_calls(
    fn: Callable[[], Any],
    device: torch.device | None = None,
    min_time: float = 1.0,
    n_threads: int | None = None,
    min_blocks: int = 9,
    clock: Callable[[], float] = time.perf_counter,
) -> Timing:
    """Time ``fn()`` (a whole forward pass) as described above."""
    sync = sync_for(device)
    with threads(n_threads) as used:
        cal = _calibrate(fn, sync, min_time, clock)
        times: list[float] = []
        start = clock()
        while len(times) < min_blocks or clock() - start < min_time:
            times.append(_block(fn, cal.block, sync, clock))
    return Timing(tuple(times), cal.block, cal.first, cal.warmup, used)


def time_interleaved(
    fns: tuple[Callable[[], Any], Callable[[], Any]],
    device: torch.device | None = None,
    min_time: float = 1.0,
    n_threads: int | None = None,
    replicates: int = 9,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[Timing, Timing]:
    """Time two versions A/B/A/B…: ``replicates`` replicates a side, each the median of the
    blocks it gets (at least 3) within its share of ``min_time`` -- so drift of the machine
    (clocks, other load) falls on both sides alike."""
    sync = sync_for(device)
    with threads(n_threads) as used:
        cals = [_calibrate(fn, sync, min_time / 2, clock) for fn in fns]
        block = max(c.block for c in cals)  # the same amortisation on both sides
        for fn in fns:  # one round apart: whatever the calibration disturbed settles
            _block(fn, block, sync, clock)
        share = min_time / (2 * replicates)
        values: list[list[float]] = [[], []]
        for _ in range(replicates):
            for side, fn in enumerate(fns):
                blocks: list[float] = []
                start = clock()
                while len(blocks) < 3 or clock() - start < share:
                    blocks.append(_block(fn, block, sync, clock))
                values[side].append(statistics.median(blocks))
    a, b = (
        Timing(tuple(v), block, c.first, c.warmup, used) for v, c in zip(values, cals, strict=True)
    )
    return a, b


def time_cold_calls(
    fn: Callable[[], Any],
    device: torch.device,
    min_time: float = 1.0,
    min_calls: int = 25,
) -> Timing:
    """CUDA with a cold L2: before every call a buffer larger than the L2 is overwritten,
    outside the timed span; each call is timed alone between two CUDA events (the host
    synchronises once per batch of calls, not per call)."""
    if device.type != "cuda":
        raise ValueError("a cold L2 is a CUDA mode")
    sync = sync_for(device)
    props = torch.cuda.get_device_properties(device)
    l2 = int(getattr(props, "L2_cache_size", 0) or 0)
    flush = torch.empty(max(256 * 2**20, 2 * l2), dtype=torch.int8, device=device)
    cal = _calibrate(fn, sync, min_time, time.perf_counter)
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < min_calls or time.perf_counter() - start < min_time:
        pairs = []
        for _ in range(10):
            flush.zero_()
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            fn()
            end.record()
            pairs.append((begin, end))
        sync()
        times.extend(b.elapsed_time(e) * 1e-3 for b, e in pairs)
    del flush
    return Timing(tuple(times), 1, cal.first, cal.warmup, torch.get_num_threads())
