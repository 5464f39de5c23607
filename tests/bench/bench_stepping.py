"""Stepping (fxstudio.core.stepping): the cost of running a graph node by node with value
summaries against the plain GraphModule call on the same inputs, measured in the same run,
and the values held at most (the bounded window) against the graph's node count."""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch

from fxstudio.core.sessions.documents import open_document
from fxstudio.core.stepping.stepper import Stepper, for_document
from tests.bench.run import SYNTHETIC


def _held_at_most(stepper: Stepper) -> int:
    held = 0
    while not stepper.finished:
        stepper.step()
        held = max(held, len(stepper.interpreter.env))
    return held


def bench_stepping(emit: Callable[..., None], timed: Callable[..., list[float]]) -> None:
    for spec, repeats in (
        ("examples:resnet", 5),
        ("examples:transformer", 5),
        (f"{SYNTHETIC}:deep_1000", 3),
        (f"{SYNTHETIC}:deep_10000", 3),
    ):
        _one(emit, timed, spec, repeats)


def _one(
    emit: Callable[..., None], timed: Callable[..., list[float]], spec: str, repeats: int
) -> None:
    doc = open_document(spec)
    gm, inputs = doc.graph_module, doc.example_inputs
    with torch.no_grad():
        plain = statistics.median(timed(lambda: gm(*inputs), repeats))
    stepped = statistics.median(timed(lambda: Stepper(gm, inputs).run_to_end(), repeats))
    eager = statistics.median(timed(lambda: for_document(doc).run_to_end(), repeats))
    held = _held_at_most(Stepper(gm, inputs))
    emit(
        bench="stepping",
        model=spec.rpartition("/")[2],
        nodes=len(doc),
        repeats=repeats,
        baseline_s=round(plain, 5),
        stepped_s=round(stepped, 4),
        stepped_ratio=round(stepped / plain, 1),
        with_eager_s=round(eager, 4),
        values_held_max=held,
        window=64,
    )
