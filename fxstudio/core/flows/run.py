"""The run flow: :func:`profile` (``fxstudio profile``, the Run dock, a report's and a
picture's profile) -- the run refused before it starts when it would not fit
(:mod:`fxstudio.core.memory.fits`), then :func:`fxstudio.core.runtime.profiling.profile` --
and its front for the Run dock (and the inspector's and canvas's timings): what the dock
offers to run on and what it shows of a :class:`~fxstudio.core.flows.Profile`.

Called by ``fxstudio.qt.panels.run.panel`` and ``run_form`` (the Run dock), ``qt.panels.inspector``,
``qt.canvas.heat`` and ``qt.seams``.

Exposes :func:`device_choices` and :func:`dtype_choices` (the dock's choosers: labels and
values, worked out here), :func:`part_of` (one module of a model as a document of its own:
the part of a large model that fits, ``fxstudio profile --module``; a :class:`Part`),
:func:`by_change` (a comparison's rows, biggest change first) and
the types and helpers the dock reads a profile with: :class:`NodeProfile`, :class:`NodeTime`,
:func:`format_rate`, :class:`Comparison`, :class:`Speedup`, :data:`DTYPES`,
:func:`cpu_threads`.

Example:
    >>> choices = device_choices()
    >>> choices[0][1]
    'cpu'
    >>> dtype_choices()[0]
    ('as captured', None)
"""

from __future__ import annotations

from collections.abc import Callable

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.parts import Part, part_of
from fxstudio.core.graph.weights import meta_inputs
from fxstudio.core.memory.fits import Need, require_fits, run_need
from fxstudio.core.process.guard import format_bytes
from fxstudio.core.runtime import profiling
from fxstudio.core.runtime.breakdown import NodeProfile, NodeTime, format_rate
from fxstudio.core.runtime.devices import available, cpu_threads
from fxstudio.core.runtime.ondevice import DTYPES, batched
from fxstudio.core.runtime.profiling import Profile, ProfileOptions
from fxstudio.core.runtime.speedup import Comparison, Speedup, by_change

__all__ = [
    "DTYPES",
    "Comparison",
    "Profile",
    "ProfileOptions",
    "NodeProfile",
    "NodeTime",
    "Part",
    "Speedup",
    "by_change",
    "cpu_threads",
    "device_choices",
    "dtype_choices",
    "format_rate",
    "part_of",
    "profile",
]


def profile(
    doc: GraphDocument,
    options: ProfileOptions,
    baseline: GraphDocument | None = None,
    stage: Callable[[str], None] | None = None,
) -> Profile:
    """Run and time ``doc`` as ``options`` say, against ``baseline`` if given
    (:func:`fxstudio.core.runtime.profiling.profile`) -- refused first, with the numbers,
    when the run would take more memory than is available (a comparison holds both)."""
    sides = [d for d in (doc, baseline) if d is not None and d.weights]
    needs = [_need(d, options) for d in sides]  # (structure only: refused by the run itself)
    if needs and None not in needs:
        need = sum((n for n in needs if n is not None), Need(0))
        require_fits("Running and timing the model", need, options.device)
    return profiling.profile(doc, options, baseline, stage)


def _need(doc: GraphDocument, o: ProfileOptions) -> Need | None:
    """A run's memory: its activations at the batch asked for, and a copy of the weights
    when it runs them elsewhere or in another dtype."""
    inputs = batched(meta_inputs(tuple(doc.example_inputs)), o.batch) if o.batch else None
    elsewhere = o.device != "cpu" or o.dtype not in (None, "float32")
    return run_need(doc, inputs, copies=int(elsewhere))


#: The autocast dtypes offered besides the casts of :data:`DTYPES`.
AUTOCAST_DTYPES = ("bfloat16", "float16")


def device_choices() -> list[tuple[str, str]]:
    """The devices to run on, each as ``(label, name)``: the name, what it is, and its
    threads (the CPU) or free memory (a GPU)."""
    choices = []
    for d in available():
        extra = f" · {d.threads} threads" if d.kind == "cpu" else ""
        if d.free_bytes is not None:
            extra = f" · {format_bytes(d.free_bytes)} free"
        choices.append((f"{d.name} — {d.label}{extra}", d.name))
    return choices


def dtype_choices() -> list[tuple[str, str | None]]:
    """The dtypes to run in, each as ``(label, value)``: as captured (None), each cast of
    :data:`DTYPES` but float32, then autocast (``"autocast:bfloat16"``...)."""
    choices: list[tuple[str, str | None]] = [("as captured", None)]
    choices += [(f"{name} (cast)", name) for name in DTYPES if name != "float32"]
    choices += [(f"{name} (autocast)", f"autocast:{name}") for name in AUTOCAST_DTYPES]
    return choices
