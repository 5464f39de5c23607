"""The devices this machine can run a model on, and a clear refusal for one it cannot.

Example:
    >>> cpu = available()[0]
    >>> cpu.name, cpu.kind
    ('cpu', 'cpu')
    >>> resolve("cpu")
    device(type='cpu')
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass

import torch

from fxstudio.core.errors import UserError


class DeviceError(UserError):
    """A device that is not there (or a name that is not a device)."""


@dataclass(frozen=True)
class Device:
    name: str  # "cpu", "cuda:0", "mps"
    kind: str  # "cpu", "cuda", "mps"
    label: str  # what a person reads: the processor or GPU model
    threads: int = 0  # CPU: threads torch uses now
    free_bytes: int | None = None  # CUDA: free memory now
    total_bytes: int | None = None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def available() -> list[Device]:
    """The CPU, every CUDA device (name, free and total memory) and MPS where present."""
    out = [Device("cpu", "cpu", cpu_model(), threads=torch.get_num_threads())]
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            free, total = torch.cuda.mem_get_info(i)
            out.append(Device(f"cuda:{i}", "cuda", torch.cuda.get_device_name(i), 0, free, total))
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        out.append(Device("mps", "mps", "Apple GPU (MPS)"))
    return out


def resolve(text: str) -> torch.device:
    """``cpu``, ``cuda``, ``cuda:N`` or ``mps`` -> the device, if this machine has it."""
    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        raise DeviceError(f"'{text}' is not a device name: use cpu, cuda, cuda:N or mps.") from None
    if device.type == "cpu":
        return device
    if device.type == "cuda":
        if not torch.cuda.is_available():
            build = "a CPU-only build" if torch.version.cuda is None else "a CUDA build"
            raise DeviceError(
                f"There is no CUDA device here (torch {torch.__version__} is {build}"
                f"{', but no GPU is visible' if torch.version.cuda else ''}). Run on --device cpu, "
                "or on a machine with an NVIDIA GPU and a CUDA build of torch."
            )
        index = device.index or 0
        if index >= torch.cuda.device_count():
            raise DeviceError(
                f"There is no {text}: this machine has {torch.cuda.device_count()} CUDA "
                f"device(s) (cuda:0 to cuda:{torch.cuda.device_count() - 1})."
            )
        return torch.device("cuda", index)
    if device.type == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is None or not mps.is_available():
            raise DeviceError("There is no MPS device here (Apple silicon with macOS 12.3+).")
        return device
    raise DeviceError(f"fxstudio does not run models on {device.type}; use cpu, cuda or mps.")


def cpu_threads() -> int:
    """The threads this process may use (its CPU affinity, else the core count)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
