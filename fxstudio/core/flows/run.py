"""The run flow's front for the Run dock (and the inspector's and canvas's timings): what the
dock offers to run on and what it shows of a :class:`~fxstudio.core.flows.Profile`.  The
profile itself is :func:`fxstudio.core.flows.profile` (``fxstudio profile``, the Run dock).

Called by ``fxstudio.qt.panels.run`` and ``run_form`` (the Run dock), ``qt.panels.inspector``,
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

from fxstudio.core.graph.parts import Part, part_of
from fxstudio.core.process.guard import format_bytes
from fxstudio.core.runtime.breakdown import NodeProfile, NodeTime, format_rate
from fxstudio.core.runtime.devices import available, cpu_threads
from fxstudio.core.runtime.run import DTYPES
from fxstudio.core.runtime.speedup import Comparison, Speedup, by_change

__all__ = [
    "DTYPES",
    "Comparison",
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
]

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
