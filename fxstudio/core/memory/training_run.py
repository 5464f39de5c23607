"""One real training step measured: a copy of the document's module trains one step
unmeasured (the optimizer's state is made in its first step), then one measured --
``step_loss``, its backward, ``optimizer.step()``, ``zero_grad(set_to_none=True)`` -- on the
CPU from ``torch.profiler``'s memory events (the CPU allocator caches nothing: each event is
one tensor's bytes) added to the bytes held before it (parameters, buffers, optimizer state,
inputs); on CUDA the caching allocator's ``max_memory_allocated``.  The same quantity as
:func:`~fxstudio.core.memory.training.training_estimate`'s peak; the document's module is not
changed.

Example:
    >>> import torch
    >>> from torch import nn
    >>> gm = torch.fx.symbolic_trace(nn.Sequential(nn.Linear(64, 64), nn.ReLU()))
    >>> m = measure_training(gm, (torch.ones(8, 64),), "sgd")
    >>> m.held_bytes  # the parameters (4160 floats) and the input (512 floats)
    18688
"""

from __future__ import annotations

import copy
import gc
from typing import Any

import torch
import torch.fx as fx

from fxstudio.core.graph.weights import has_weights
from fxstudio.core.memory.lifetimes import storage_bytes, unique
from fxstudio.core.memory.training import (
    MOMENTUM,
    TrainingError,
    TrainingMeasurement,
    check_names,
    step_loss,
)
from fxstudio.core.process import modelcode

__all__ = ["measure_training"]


def measure_training(
    gm: fx.GraphModule,
    inputs: tuple[Any, ...],
    optimizer: str = "adamw",
    device: str = "cpu",
) -> TrainingMeasurement:
    """One real training step of a copy of ``gm`` on ``inputs`` (``step_loss``, backward,
    ``optimizer.step()``) after one unmeasured step (the optimizer's state made), its peak
    measured: everything held included, as :func:`training_estimate`'s.  Raises
    :class:`TrainingError` for a structure-only module or an unknown optimizer."""
    check_names(optimizer)
    if not has_weights(gm):
        raise TrainingError(
            "The model is structure only (opened with --no-weights): a training step cannot "
            "be run without its weights. Open it with its weights to measure, or estimate "
            "without --measure."
        )
    with modelcode.one_turn():  # the model's code, one thread at a time, held to memory
        return _measured(gm, inputs, optimizer, torch.device(device))


def _measured(
    gm: fx.GraphModule, inputs: tuple[Any, ...], optimizer: str, where: torch.device
) -> TrainingMeasurement:
    module = copy.deepcopy(gm).to(where)
    real = tuple(t.to(where) if isinstance(t, torch.Tensor) else t for t in inputs)
    params = [p for p in unique(module.parameters()) if p.requires_grad]
    if not params:
        raise TrainingError(
            "No parameter of the model requires grad, so a training step changes nothing."
        )
    opt = _optimizer(optimizer, params)

    def step() -> None:
        step_loss(module(*real)).backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # the optimizer's state is made in its first step
    gc.collect()
    if where.type == "cuda":
        return _measure_cuda(step, where, optimizer)
    held = storage_bytes(
        (list(module.parameters()), list(module.buffers()), opt.state_dict(), real)
    )
    return _measure_cpu(step, held, optimizer)


def _optimizer(name: str, params: list[torch.Tensor]) -> torch.optim.Optimizer:
    if name in ("sgd", "momentum"):
        return torch.optim.SGD(params, lr=1e-3, momentum=MOMENTUM if name == "momentum" else 0)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-3)
    return torch.optim.AdamW(params, lr=1e-3)


def _measure_cpu(step: Any, held: int, optimizer: str) -> TrainingMeasurement:
    from torch.profiler import ProfilerActivity, profile

    if not torch.profiler.kineto_available():
        raise TrainingError(
            "This build of torch has no profiler (kineto), so CPU memory cannot be measured: "
            "use a standard torch build, or the estimate."
        )
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    results = prof.profiler.kineto_results if prof.profiler is not None else None
    if results is None:
        raise TrainingError("The profiler recorded nothing: measure again, or use the estimate.")
    deltas = sorted(
        (e.start_ns(), e.nbytes())
        for e in results.events()
        if e.name() == "[memory]" and str(e.device_type()).rpartition(".")[2] in _CPU_TYPES
    )
    live = high = 0
    for _, nbytes in deltas:
        live += nbytes
        high = max(high, live)
    return TrainingMeasurement(
        "cpu",
        "torch.profiler memory events (the CPU allocator) over one step, added to the bytes "
        "held before it (parameters, buffers, optimizer state, inputs)",
        optimizer,
        held + high,
        held,
    )


#: The allocators whose ``[memory]`` events count as the CPU's.
_CPU_TYPES = ("CPU", "MKLDNN", "IDEEP")


def _measure_cuda(step: Any, where: torch.device, optimizer: str) -> TrainingMeasurement:
    torch.cuda.synchronize(where)
    torch.cuda.reset_peak_memory_stats(where)
    held = torch.cuda.memory_allocated(where)
    step()
    torch.cuda.synchronize(where)
    return TrainingMeasurement(
        str(where),
        "the CUDA caching allocator's max_memory_allocated over one step (blocks of 512 bytes)",
        optimizer,
        torch.cuda.max_memory_allocated(where),
        held,
    )
