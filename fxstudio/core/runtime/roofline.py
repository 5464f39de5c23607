"""Where a node sits on the device's roofline: its achieved FLOP/s and GB/s against the
device's peaks, compute- or memory-bound by its arithmetic intensity, and a result above the
compute peak marked as a measurement error (a node cannot beat the silicon; DeepSpeed's own
example shows a Linear at four times an A100's peak).

Peaks: on CUDA the vendor's dense figures by device name and dtype (no sparsity), the memory
bandwidth from the device's memory clock and bus width when torch reports them; on the CPU
there is no datasheet to read, so the ceilings are *measured* here (a large float32 matmul
and a large copy on the threads of the run) and said to be measured.  Bandwidth above the
DRAM peak is possible from cache and is said so, not called an error.

Example:
    >>> p = Peaks("test", flops_per_s=1e12, bytes_per_s=1e11, source="given")
    >>> p.place(flops=2e9, nbytes=1e6, seconds=1e-3).bound   # 2 TFLOP/s on a 1 TFLOP/s device
    'invalid'
    >>> p.place(flops=1e6, nbytes=1e8, seconds=2e-3).bound
    'memory'
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any

import torch

from fxstudio.core.results import Json
from fxstudio.core.runtime.timer import threads as using_threads

# Dense peak FLOP/s by dtype (float32 = without TF32) for the devices people time on.
# Sources: NVIDIA datasheets (SXM parts; the PCIe parts are ~15 % lower).
_CUDA_PEAKS: tuple[tuple[str, dict[str, float]], ...] = (
    ("H200", {"float32": 67e12, "tf32": 494.7e12, "bfloat16": 989.4e12, "float16": 989.4e12}),
    ("H100", {"float32": 67e12, "tf32": 494.7e12, "bfloat16": 989.4e12, "float16": 989.4e12}),
    ("A100", {"float32": 19.5e12, "tf32": 156e12, "bfloat16": 312e12, "float16": 312e12}),
    ("L40S", {"float32": 91.6e12, "tf32": 183e12, "bfloat16": 362e12, "float16": 362e12}),
    ("L4", {"float32": 30.3e12, "tf32": 60e12, "bfloat16": 121e12, "float16": 121e12}),
    ("A10", {"float32": 31.2e12, "tf32": 62.5e12, "bfloat16": 125e12, "float16": 125e12}),
    ("V100", {"float32": 15.7e12, "float16": 125e12}),
    ("T4", {"float32": 8.1e12, "float16": 65e12}),
    ("RTX 4090", {"float32": 82.6e12, "bfloat16": 165e12, "float16": 165e12}),
    ("RTX 3090", {"float32": 35.6e12, "bfloat16": 71e12, "float16": 71e12}),
)
_CUDA_BANDWIDTH = (("H200", 4.8e12), ("H100", 3.35e12), ("A100", 2.0e12), ("L4", 0.3e12))
INVALID_OVER = 1.0  # a datasheet peak: above it is an error
MEASURED_SLACK = 1.25  # a measured ceiling is one kernel's best: allow a margin over it


@dataclass(frozen=True)
class Position:
    flops_per_s: float | None
    bytes_per_s: float | None
    intensity: float | None  # FLOPs per byte
    bound: str | None  # "compute", "memory", "invalid" (above the compute peak), None: unknown
    peak_share: float | None  # of the bound resource's peak
    from_cache: bool = False  # bandwidth above the DRAM peak: the data was in cache


@dataclass(frozen=True)
class Peaks:
    device: str
    flops_per_s: float | None
    bytes_per_s: float | None
    source: str  # "datasheet", "measured (…)", "unknown"

    def to_json(self) -> Json:
        return {
            "device": self.device,
            "flops_per_s": self.flops_per_s,
            "bytes_per_s": self.bytes_per_s,
            "source": self.source,
        }

    def place(self, flops: float, nbytes: float, seconds: float) -> Position:
        if seconds <= 0:
            return Position(None, None, None, None, None)
        fps = flops / seconds if flops else None
        bps = nbytes / seconds if nbytes else None
        intensity = flops / nbytes if flops and nbytes else None
        if self.flops_per_s is None or self.bytes_per_s is None:
            return Position(fps, bps, intensity, None, None)
        slack = INVALID_OVER if self.source == "datasheet" else MEASURED_SLACK
        if fps is not None and fps > self.flops_per_s * slack:
            return Position(fps, bps, intensity, "invalid", fps / self.flops_per_s)
        ridge = self.flops_per_s / self.bytes_per_s
        cache = bps is not None and bps > self.bytes_per_s
        if intensity is not None and intensity >= ridge:
            return Position(fps, bps, intensity, "compute", (fps or 0) / self.flops_per_s, cache)
        share = (bps or 0) / self.bytes_per_s
        return Position(fps, bps, intensity, "memory", share, cache)


def _dtype_key(dtype: torch.dtype) -> str:
    if dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32:
        return "tf32"
    return str(dtype).removeprefix("torch.")


def cuda_peaks(device: torch.device, dtype: torch.dtype) -> Peaks:
    name = torch.cuda.get_device_name(device)
    flops = next((t.get(_dtype_key(dtype)) for key, t in _CUDA_PEAKS if key in name), None)
    props = torch.cuda.get_device_properties(device)
    clock = getattr(props, "memory_clock_rate", 0)  # kHz
    width = getattr(props, "memory_bus_width", 0)  # bits
    bandwidth = clock * 1e3 * 2 * width / 8 if clock and width else None  # double data rate
    if bandwidth is None:
        bandwidth = next((b for key, b in _CUDA_BANDWIDTH if key in name), None)
    known = flops is not None and bandwidth is not None
    return Peaks(name, flops, bandwidth, "datasheet" if known else "unknown")


def _best(fn: Any, repeats: int = 5) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return min(samples)  # a ceiling: the best the device did


@functools.lru_cache(maxsize=8)
def cpu_peaks(threads: int | None = None, size: int = 1024) -> Peaks:
    """Ceilings measured on this CPU: a float32 matmul's FLOP/s, a 64 MiB copy's bytes/s --
    once per thread count in a process (runs compared in one process share them)."""
    with using_threads(threads) as used, torch.no_grad():
        a = torch.randn(size, size)
        b = torch.randn(size, size)
        gemm = 2 * size**3 / _best(lambda: torch.mm(a, b))
        src = torch.empty(16 * 2**20)  # 64 MiB: past any cache
        dst = torch.empty_like(src)
        copy = 2 * src.numel() * 4 / _best(lambda: dst.copy_(src))
    return Peaks(
        "cpu",
        gemm,
        copy,
        f"measured ({size}³ float32 matmul and a 64 MiB copy on {used} threads)",
    )


def peaks_for(device: torch.device, dtype: torch.dtype, threads: int | None) -> Peaks:
    if device.type == "cuda":
        return cuda_peaks(device, dtype)
    if device.type == "cpu":
        return cpu_peaks(threads)
    return Peaks(str(device), None, None, "unknown")
