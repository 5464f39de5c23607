"""Structure-only models: a module whose parameters (and large buffers) are ``meta`` tensors --
every shape and dtype, no data, no memory -- so that a 70B or 405B model can be looked at,
edited and rewritten on any machine; its small buffers (what the model computes when it is
built, :data:`SMALL_BUFFER`) keep their values.  Shapes are worked out on fake tensors made
from the meta ones (:func:`fake_of`), on the device the model would run on (the CPU), so ops
that make tensors on the CPU themselves still meet tensors of the same device.

Example:
    >>> import torch
    >>> from torch import nn
    >>> with torch.device("meta"):
    ...     layer = nn.Linear(8192, 28672)
    >>> has_weights(layer), weight_bytes(layer)
    (False, 939638784)
    >>> has_weights(nn.Linear(2, 2))
    True
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from fxstudio.core.fxcompat import (
    fake_tensor_mode,
    is_fake,
    large_on_meta,
    meta_like,
    reparametrized,
    tree_map,
)

#: The device a structure-only model's shapes are worked out on (what it was built for).
SHAPE_DEVICE = "cpu"


def _tensors(module: nn.Module) -> Iterator[tuple[str, torch.Tensor]]:
    yield from module.named_parameters(remove_duplicate=False)
    yield from module.named_buffers(remove_duplicate=False)


#: Buffers of at most this many elements keep their values in a structure-only model: what
#: the model computes when it is built (a rotary embedding's ``inv_freq``, a causal mask) and a
#: checkpoint does not hold, for a saved ``.py`` that loads its weights from one.
SMALL_BUFFER = 1 << 20


def building(weights: bool) -> contextlib.AbstractContextManager[Any]:
    """Where a model is built: as usual, or -- without weights -- with its large tensors on
    the ``meta`` device (no memory, no time) and its small ones, computed buffers among them,
    on the CPU with their values (:func:`~fxstudio.core.fxcompat.large_on_meta`)."""
    return contextlib.nullcontext() if weights else large_on_meta(SMALL_BUFFER)


def without_weights(module: nn.Module, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Make ``module`` structure-only (:func:`to_meta`: every parameter, and buffers but the
    small ones, whatever its code made elsewhere) and return ``inputs`` as meta tensors."""
    to_meta(module, SMALL_BUFFER)
    return meta_inputs(inputs)


def with_buffers_of(gm: nn.Module, original: nn.Module) -> nn.Module:
    """``gm`` (captured from a structure-only ``original`` on fake tensors) structure-only
    again: its parameters and constants meta, its buffers the original's by name where
    those kept their values (:data:`SMALL_BUFFER`).  Returns ``gm``."""
    kept = {n: b for n, b in original.named_buffers(remove_duplicate=False) if not b.is_meta}
    for name, _ in list(gm.named_buffers(remove_duplicate=False)):
        if name in kept:
            owner, _, attr = name.rpartition(".")
            setattr(gm.get_submodule(owner) if owner else gm, attr, kept[name])
    return to_meta(gm, SMALL_BUFFER)


def has_weights(module: nn.Module) -> bool:
    """Whether ``module`` holds its weights: none of its parameters and buffers is a ``meta``
    tensor (a module without any holds them trivially)."""
    return not any(t.is_meta for _, t in _tensors(module))


def weight_bytes(module: nn.Module) -> int:
    """Bytes its parameters and buffers take (or would take, for meta ones), shared ones once."""
    seen: set[int] = set()
    total = 0
    for _, t in _tensors(module):
        if id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total


def held_bytes(module: nn.Module) -> int:
    """Bytes its parameters and buffers that are not ``meta`` tensors take (a structure-only
    model's small buffers), shared ones once."""
    seen: set[int] = set()
    total = 0
    for _, t in _tensors(module):
        if not t.is_meta and id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total


def fake_of(mode: Any, t: torch.Tensor) -> torch.Tensor:
    """A fake tensor of ``mode`` standing for ``t``: a meta tensor becomes one on
    :data:`SHAPE_DEVICE` with its shape, strides and dtype; a real one is converted."""
    if not t.is_meta:
        return mode.from_tensor(t)
    with mode:
        fake = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=SHAPE_DEVICE)
    if isinstance(t, nn.Parameter):  # torch.export checks that parameters are Parameters
        return nn.Parameter(fake, requires_grad=t.requires_grad)
    return fake


def to_meta(module: nn.Module, buffers_up_to: int = -1) -> nn.Module:
    """Make every parameter, buffer and tensor attribute of ``module`` a ``meta`` tensor of
    the same shape and dtype (in place; shared tensors stay shared) -- but real buffers of at
    most ``buffers_up_to`` elements, which keep their values.  Returns ``module``."""
    made: dict[int, torch.Tensor] = {}  # by the id of the original (alive in the module)

    def meta(t: torch.Tensor) -> torch.Tensor:
        if id(t) not in made:
            empty = meta_like(t)
            made[id(t)] = (
                nn.Parameter(empty, requires_grad=t.requires_grad)
                if isinstance(t, nn.Parameter)
                else empty
            )
        return made[id(t)]

    for sub in module.modules():
        for name, p in list(sub.named_parameters(recurse=False)):
            if not p.is_meta:
                setattr(sub, name, meta(p))
        for name, b in list(sub.named_buffers(recurse=False)):
            if not b.is_meta and not is_fake(b) and b.numel() <= buffers_up_to:
                continue  # a small buffer with its values
            if not b.is_meta:
                setattr(sub, name, meta(b))  # stays a buffer (persistent or not)
        for name, value in list(vars(sub).items()):  # constants: _tensor_constant0, ...
            if isinstance(value, torch.Tensor) and not value.is_meta:
                setattr(sub, name, meta(value))
    return module


def meta_inputs(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """``inputs`` with each tensor made a ``meta`` tensor of the same shape and dtype."""
    return tuple(
        tree_map(
            lambda v: torch.empty_like(v, device="meta") if isinstance(v, torch.Tensor) else v,
            inputs,
        )
    )


def no_weights_message(what: str, spec: str, asked: bool = False) -> str:
    """Why ``what`` cannot be done on a structure-only document of ``spec`` and what to do
    (``asked``: the user asked for no weights, rather than the model not fitting).

    >>> no_weights_message("Profiling", "hf:llama", asked=True).splitlines()[0][:56]
    "Profiling needs the model's weights, and this document h"
    """
    why = "opened with --no-weights" if asked else "its weights do not fit in this memory"
    return (
        f"{what} needs the model's weights, and this document holds its structure only "
        f"({why}): shapes and dtypes, no values.\n"
        + (
            "Open it with its weights (without --no-weights), or open a smaller "
            "configuration of it (fewer layers) to run."
            if asked
            else "Open a smaller configuration of it (fewer layers, e.g. "
            f"{spec.split('(')[0]}(num_hidden_layers=2)) to run, or use a machine with more "
            "memory."
        )
    )


@contextlib.contextmanager
def faked(module: nn.Module, example_inputs: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    """Inside: ``module``'s parameters and buffers are fake tensors, and fake copies of
    ``example_inputs`` are given to run it on (nothing real is computed or allocated).  Meta
    tensors (a structure-only model's, :mod:`fxstudio.core.graph.weights`) become fake tensors
    on the CPU."""
    mode = fake_tensor_mode()
    state = fake_state(module, mode)
    fakes = tree_map(
        lambda t: fake_of(mode, t) if isinstance(t, torch.Tensor) else t, example_inputs
    )
    with reparametrized(module, state), mode:
        yield fakes


def fake_state(module: nn.Module, mode: Any) -> dict[str, torch.Tensor]:
    """``module``'s parameters and buffers by name as fake tensors of ``mode`` (meta ones on
    the CPU), to run it with them (:func:`~fxstudio.core.fxcompat.reparametrized`)."""
    return {
        name: fake_of(mode, t)
        for name, t in [
            *module.named_parameters(remove_duplicate=False),
            *module.named_buffers(remove_duplicate=False),
        ]
    }
