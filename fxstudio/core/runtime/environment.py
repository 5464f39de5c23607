"""The stamp every timing carries: what ran it, so two numbers can be told comparable or not.

Example:
    >>> stamp = environment(torch.device("cpu"), torch.float32, 1)
    >>> stamp["torch"] == torch.__version__ and stamp["threads"] == 1
    True
"""

from __future__ import annotations

import platform
import shutil
import subprocess
from typing import Any

import torch

from fxstudio.core.runtime.devices import cpu_model


def _nvidia_smi(index: int) -> dict[str, Any]:
    """Driver, SM clock and temperature of GPU ``index``, where nvidia-smi can say."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return {}
    try:
        out = subprocess.run(
            [
                exe,
                "--query-gpu=driver_version,clocks.sm,clocks.max.sm,temperature.gpu",
                "--format=csv,noheader,nounits",
                "-i",
                str(index),
            ],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    parts = [p.strip() for p in out.split(",")]
    if len(parts) != 4:
        return {}
    return {
        "driver": parts[0],
        "sm_clock_mhz": parts[1],
        "max_sm_clock_mhz": parts[2],
        "temperature_c": parts[3],
    }


def environment(device: torch.device, dtype: torch.dtype, threads: int) -> dict[str, Any]:
    stamp: dict[str, Any] = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "device": str(device),
        "dtype": str(dtype).removeprefix("torch."),
        "threads": threads,
        "cpu": cpu_model(),
    }
    if device.type == "cuda":
        index = device.index or 0
        stamp.update(
            gpu=torch.cuda.get_device_name(index),
            cuda=torch.version.cuda,
            cudnn=torch.backends.cudnn.version(),
            cudnn_benchmark=torch.backends.cudnn.benchmark,
            cudnn_deterministic=torch.backends.cudnn.deterministic,
            tf32_matmul=torch.backends.cuda.matmul.allow_tf32,
            **_nvidia_smi(index),
        )
    return stamp
