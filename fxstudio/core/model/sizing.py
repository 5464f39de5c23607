"""A model and its capture sized before they take the memory: a build whose weights would
not fit stops before they are allocated and is made structure-only, and a capture that would
not fit is refused with the numbers -- before it starts, from the model's size, and while it
runs, from what it has taken so far.

**The build** (:func:`build_within_memory`): the model is built once, for real, with every
parameter and buffer counted as it is registered, before it is filled (:func:`within_bytes`);
past 80 % of the memory available the build stops and the model is built again on the
``meta`` device -- structure only.  (Building on meta first to size it, then for real, took
twice the time of every model that fits: 5.7 s of Python each on the nested 50,000-node
model.)

**The capture** grows with the model's modules: each is a handful of graph nodes, and each
node some kilobytes while it is captured.  Measured here (RSS growth of an open, structure
only, torch 2.14):

=====================  ========  =======  =================  ===============
model                  frontend  modules  nodes per module   KiB per module
=====================  ========  =======  =================  ===============
GPT-2, 50 layers       export    656      4.0                110
GPT-2, 200 layers      export    2,606    4.0                73
LLaMA, 50 layers       export    655      5.2                117
nested synthetic 20k   fx        20,002   1.0                13
residual MLP 10k       fx        3,334    3.0                48
=====================  ========  =======  =================  ===============

and the model's modules themselves take about 17 KiB each once built (GPT-2, 13,006 modules
on meta: 227 MiB).  :func:`check_capture` refuses, before the capture starts, a model whose
modules would take more than the memory available at the lowest of those rates
(:data:`CAPTURE_BYTES`); :func:`watching` then measures the capture as it runs -- the bytes
taken per module called so far -- and stops it, with the numbers, as soon as the projection
for all the modules passes what is available.  It also tells the progress (k of n modules).

Example:
    >>> from torch import nn
    >>> need = capture_need(nn.Sequential(*[nn.Linear(2, 2) for _ in range(1000)]), "export")
    >>> format_bytes(need)
    '62.6 MiB'
"""

from __future__ import annotations

import contextlib
import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from torch import nn
from torch.nn.modules.module import (
    register_module_buffer_registration_hook,
    register_module_forward_pre_hook,
    register_module_parameter_registration_hook,
)

from fxstudio.core.errors import CaptureError, LoadError, UserError
from fxstudio.core.graph.weights import building, held_bytes, weight_bytes
from fxstudio.core.process import progress
from fxstudio.core.process.budget import available_memory, resident_bytes
from fxstudio.core.process.collector import give_back
from fxstudio.core.process.guard import OutOfMemory, Overbudget, format_bytes

#: The share of the available memory a model's weights may take (as :func:`weights_too_big`).
WEIGHTS_SHARE = 0.8
#: Weights a first build may make before the model is sized on meta (see
#: :func:`build_within_memory`): most models people open are smaller.
FIRST_BUILD = 2 * 2**30
#: Bytes a capture takes per module of the model, at the lowest rate measured (the table).
CAPTURE_BYTES = {"export": 64 * 1024, "fx": 12 * 1024}
#: Bytes a built module object takes (its dicts, hooks' tables, a meta tensor's header).
MODULE_BYTES = 17 * 1024
#: The capture's later steps (unlifting, shapes, the graph's copy) take about as much again
#: as its trace, for the export frontend; symbolic tracing's shapes are in its trace.
AFTER_TRACE = {"export": 2.0, "fx": 1.0}
#: Models with fewer modules are not watched (nothing to gain, no numbers to be fooled by).
WATCH_FROM = 2000
#: Modules called before the watch marks where it measures the rate from (the capture's
#: start -- every weight made fake at once -- is not projected onto each module).
WATCH_AFTER = 200


def too_big_for_memory(sized: nn.Module) -> str | None:
    """Why a model (built on the meta device to size it) is opened without weights, in
    words, or ``None``: its weights would take more than 80% of the memory this machine has
    left."""
    return weights_too_big(weight_bytes(sized))


def weights_too_big(need: int) -> str | None:
    """Why weights of ``need`` bytes are not loaded, in words, or ``None``: they would take
    more than 80% of the memory this machine has left (the rest is the capture's, the
    window's and the run's)."""
    avail = available_memory()
    if avail is None or need <= 0.8 * avail:
        return None
    return (
        f"its weights ({format_bytes(need)}) would not fit in the {format_bytes(0.8 * avail)} "
        f"they may take (80% of the {format_bytes(avail)} available)"
    )


class CaptureTooBig(CaptureError):
    """A capture that would take more memory than is available: the numbers, and what to
    open instead."""


@contextlib.contextmanager
def within_bytes(limit: int) -> Iterator[None]:
    """A model built inside has its parameters and buffers counted as they are registered
    -- made, not yet filled: ``nn.Linear`` registers its weight before ``reset_parameters``
    writes it -- and the one that takes the total past ``limit`` bytes raises
    :class:`~fxstudio.core.process.guard.Overbudget` before its memory is touched; the
    memory of those made before it is given back at once (their storages emptied: the
    half-built model is garbage, and a cycle in it would otherwise hold them until a full
    collection).  The same tensors, and the same random numbers, as a build outside it, at
    no cost (a hook per registration, where a mode on every torch call cost 30% of a
    50,000-node build).  Shared tensors are counted once.

    >>> with within_bytes(2**20):
    ...     small = nn.Linear(4, 4)
    >>> try:
    ...     with within_bytes(2**20):
    ...         big = nn.Linear(1024, 1024)  # 4 MiB
    ... except Overbudget as stopped:
    ...     print(stopped.made)
    4194304
    """
    seen: dict[int, Any] = {}  # storage address -> the storage (held while the build runs)
    made = [0]

    def count(_module: nn.Module, _name: str, t: Any) -> None:
        if t is None or t.is_meta or t.device.type != "cpu":
            return
        storage = t.untyped_storage()
        if storage.data_ptr() in seen:
            return
        seen[storage.data_ptr()] = storage
        made[0] += storage.nbytes()
        if made[0] > limit:
            for s in seen.values():
                s.resize_(0)
            seen.clear()
            raise Overbudget(made[0], limit)

    hooks = [
        register_module_parameter_registration_hook(count),
        register_module_buffer_registration_hook(count),
    ]
    try:
        yield
    finally:
        for hook in hooks:
            hook.remove()
        seen.clear()


def build_within_memory(
    build: Callable[[], nn.Module], expected: int | None = None
) -> tuple[nn.Module, str | None]:
    """``build()`` once for real, its tensors counted as they are registered
    (:func:`within_bytes`), if it fits; otherwise built on the ``meta`` device, with why,
    in words (the model is structure-only then).  ``build`` seeds the random numbers it
    uses itself (it may run again).

    The weights it will make are not known before it is built, so the first build stops
    once they pass :data:`FIRST_BUILD` (or ``expected``, the caller's estimate, when that
    is known and fits): a model larger than that is sized on meta, then built again for
    real only if it fits in :data:`WEIGHTS_SHARE` of the memory available.  Two processes
    building at once each touch at most that much before they know (a build stopped at 80%
    of the memory, its weights filled as it went, took 14 GB and minutes -- and two of them
    the machine)."""
    avail = available_memory()
    if avail is None:
        return build(), None
    limit = int(WEIGHTS_SHARE * avail)
    first = min(limit, FIRST_BUILD if expected is None or expected > limit else limit)
    model, refused = _built_within(build, first)
    if model is not None:
        return model, None
    why = (
        f"building it with its weights would take more than the {format_bytes(limit)} it may "
        f"take (80% of the {format_bytes(avail)} available)"
    )
    try:
        with building(False):
            sized = build()
    except UserError as exc:
        raise LoadError(
            f"The model is too large to build with its weights ({why}), and building it "
            f"without them (on the meta device) failed:\n{exc}\nBuild a smaller model.",
            exc.location,
        ) from exc
    too_big = weights_too_big(weight_bytes(sized))
    if too_big is None and first < limit and not refused:  # larger than the first build,
        model, _ = _built_within(build, limit)  # but it fits (unless a tensor that is no
        if model is not None:  # weight is too large for the machine)
            return model, None
    return sized, too_big or why


def _built_within(build: Callable[[], nn.Module], limit: int) -> tuple[nn.Module | None, bool]:
    """``build()`` for real within ``limit`` bytes of weights (:func:`within_bytes`), or
    ``None`` -- its part built given back -- when it passed them or the machine refused an
    allocation at once (then ``True``).  The model's own ``MemoryError`` is raised."""
    try:
        with within_bytes(limit):
            return build(), False
    except Overbudget:
        refused = False
    except OutOfMemory as exc:
        if exc.requested is None:  # the model's own MemoryError: not an allocation refused
            raise
        refused = True
    give_back()  # the part built before it stopped
    return None, refused


@dataclass(frozen=True)
class Depth:
    """A configuration's size from two probes of one and two layers built structure-only:
    the modules, the weight bytes and the bytes a structure-only build still holds (its
    small tensors keep their values: :func:`~fxstudio.core.graph.weights.building`) -- of
    a layer and of the rest, each a pair ``(rest, layer)``."""

    layers: int
    modules_of: tuple[int, int]
    weights_of: tuple[int, int]
    held_of: tuple[int, int]

    def total(self, of: tuple[int, int], layers: int | None = None) -> int:
        return of[0] + (self.layers if layers is None else layers) * of[1]

    @property
    def modules(self) -> int:
        return self.total(self.modules_of)

    @property
    def weight_bytes(self) -> int:
        return self.total(self.weights_of)

    def need(self, weights: bool, layers: int | None = None) -> int:
        """Bytes to build and capture it (``weights``: with them): its modules at the lowest
        rates measured, and what the build holds."""
        rate = MODULE_BYTES + CAPTURE_BYTES["export"]
        held = self.weights_of if weights else self.held_of
        return self.total(self.modules_of, layers) * rate + self.total(held, layers)


def depth_of(config: Any, build: Callable[[Any], nn.Module]) -> Depth | None:
    """The size of a transformers configuration with ``num_hidden_layers`` layers, from two
    probes (``build(config)`` of one and two layers, structure-only: a tenth of a second),
    or None when its layers are not that one number (a probe fails)."""
    layers = getattr(config, "num_hidden_layers", None)
    if not isinstance(layers, int) or layers < 2:
        return None
    sizes = []
    for k in (1, 2):
        probe = copy.deepcopy(config)
        try:
            probe.num_hidden_layers = k
            with building(False):
                built = build(probe)
        except Exception:  # noqa: BLE001 - a config whose layers are not that one number
            return None
        sizes.append((sum(1 for _ in built.modules()), weight_bytes(built), held_bytes(built)))
    one, two = sizes
    if two[0] <= one[0]:
        return None
    pairs = [(a - (b - a), b - a) for a, b in zip(one, two, strict=True)]
    return Depth(layers, pairs[0], pairs[1], pairs[2])


def check_depth(what: str, depth: Depth, weights: bool, retry: Callable[[int], str]) -> None:
    """Refuse (:class:`CaptureTooBig`) a configuration that cannot be built (``weights``:
    with them) and captured in the memory available, before it is built; with the numbers,
    and ``retry(k)``: the spec with the most layers that fit."""
    avail = available_memory()
    need = depth.need(weights)
    if avail is None or need <= avail:
        return
    fits = _most_layers(depth, weights, avail // 2)  # (with room: the rates are the lowest)
    rate = format_bytes(MODULE_BYTES + CAPTURE_BYTES["export"])
    held = "its weights" if weights else "the small tensors a structure-only model keeps"
    raise CaptureTooBig(
        f"{what} has {depth.layers:,} layers ({depth.modules:,} modules): building and "
        f"capturing it would take at least {format_bytes(need)} (about {rate} a module, "
        f"measured, and {held}); {format_bytes(avail)} is available, so it was not built. "
        f"Open fewer layers: {retry(fits)} fits."
    )


def _most_layers(depth: Depth, weights: bool, memory: int) -> int:
    """The most layers (two significant digits, at least 1) whose build and capture take at
    most ``memory``."""
    low, high = 1, depth.layers
    while low < high:  # the most that fit, by halves
        mid = (low + high + 1) // 2
        low, high = (mid, high) if depth.need(weights, mid) <= memory else (low, mid - 1)
    digits = 10 ** max(0, len(str(low)) - 2)
    return max(1, low // digits * digits)


def capture_need(module: nn.Module, frontend: str) -> int:
    """The least memory a capture of ``module`` takes: its modules at the lowest rate
    measured (:data:`CAPTURE_BYTES`)."""
    return sum(1 for _ in module.modules()) * CAPTURE_BYTES.get(frontend, CAPTURE_BYTES["fx"])


def check_capture(module: nn.Module, frontend: str, what: str, smaller: str) -> None:
    """Refuse (:class:`CaptureTooBig`) a capture that cannot fit in the memory available,
    before it starts; ``smaller``: what to open instead, in words."""
    avail = available_memory()
    need = capture_need(module, frontend)
    if avail is not None and need > avail:
        modules = sum(1 for _ in module.modules())
        raise CaptureTooBig(too_big_words(what, modules, need, avail, frontend, smaller))


def too_big_words(
    what: str, modules: int, need: int, avail: int, frontend: str, smaller: str
) -> str:
    """``Capturing X would take at least N (M modules, ...); A is available.`` and what to
    do."""
    rate = format_bytes(CAPTURE_BYTES.get(frontend, CAPTURE_BYTES["fx"]))
    return (
        f"Capturing {what} would take at least {format_bytes(need)} ({modules:,} modules, "
        f"about {rate} each with the {frontend} frontend, measured); {format_bytes(avail)} "
        f"is available. {smaller}"
    )


@contextlib.contextmanager
def watching(
    module: nn.Module, stage: str | None, frontend: str, what: str, smaller: str
) -> Iterator[None]:
    """Around a capture of ``module``: each module it calls is counted and told as progress
    (``stage``, if given: k of n modules); from a fiftieth of the way, what the capture has
    taken per module, times the modules, is its projected memory -- past what was available
    when it started, it stops with :class:`CaptureTooBig` and the numbers."""
    total = sum(1 for _ in module.modules())
    avail, start = available_memory(), resident_bytes()
    if total < WATCH_FROM or avail is None or start is None:
        yield
        return
    began = time.monotonic()
    after = AFTER_TRACE.get(frontend, 1.0)
    first = max(WATCH_AFTER, total // 50)
    every = max(1, min(64, first // 4))  # calls between two looks at the resident memory
    calls = [0]
    counter = progress.Counter(stage, total) if stage else None
    mark: list[tuple[int, int]] = []  # (call, resident bytes): the rate is measured from there

    def watch(*_: object) -> None:
        if counter is not None:
            counter.step()
        calls[0] += 1
        n = calls[0]
        if n < first or n % every:
            return
        now = resident_bytes() or start
        if not mark:
            mark.append((n, now))
            return
        if n < 2 * first:
            return
        # what it took so far, and at the rate since the mark for the rest: the export's
        # start (every weight made fake at once) is not projected onto each module
        rate = (now - mark[0][1]) / (n - mark[0][0])
        projected = int((now - start + rate * (total - n)) * after)
        if projected > avail:
            seconds = (time.monotonic() - began) * total / n
            raise CaptureTooBig(
                f"Capturing {what} stopped after {n:,} of its {total:,} modules: it had "
                f"taken {format_bytes(now - start)} and, at that rate, would take about "
                f"{format_bytes(projected)} (and {seconds / 60:.0f} min); "
                f"{format_bytes(avail)} is available. {smaller}"
            )

    hook = register_module_forward_pre_hook(watch)
    try:
        yield
    finally:
        hook.remove()
        if counter is not None:
            counter.close()
