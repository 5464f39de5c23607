"""``fxstudio compile``: torch.compile insight without a window -- where Dynamo breaks the
model into several graphs and why (``--explain``: only that, fast), and the model compiled:
eager vs compiled speed-up, compile time, and each kernel timed and attributed to the FX
nodes it was generated from -- or, for a model with graph breaks or one that cannot be
captured, compiled as torch.compile does and each kernel placed in Dynamo's graph and at the
user's lines it came from (:func:`~fxstudio.core.compiling.model.compile_model`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from fxstudio.cli_common import (
    EXIT_OK,
    MODEL_HELP,
    add_model_options,
    add_run_options,
    data_out,
    request_from,
)


def compile_parser() -> argparse.ArgumentParser:
    from fxstudio.core.compiling.kernels import BACKENDS, MODES

    p = argparse.ArgumentParser(
        prog="fxstudio compile",
        description="Run Dynamo (torch.compile's graph capture) over the model on its example "
        "inputs and report every graph break: the user's file and line, Dynamo's reason, what "
        "kind of break it is and what to change. Without --explain, also compile the model, "
        "time it against eager (speed-up with a 95 %% CI), and time each kernel the compiler "
        "made with the FX nodes it came from. A model with graph breaks (or one that cannot "
        "be captured) is compiled as torch.compile compiles it: the eager model, Dynamo's "
        "graphs, each kernel placed in its graph at the lines of your code it computes.",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument(
        "--explain", action="store_true", help="the graph breaks only (fast: nothing compiled)"
    )
    p.add_argument("--backend", choices=BACKENDS, default="inductor", help="(default inductor)")
    p.add_argument("--mode", choices=MODES, default="default", help="inductor's mode")
    p.add_argument(
        "--freezing",
        action="store_true",
        help="inductor folds the weights as constants (inference): what is computed from "
        "weights alone, such as their layout copies, runs once at compile time",
    )
    add_run_options(p, "seconds spent timing eager and compiled, interleaved (default 1)")
    p.add_argument("--json", metavar="OUT", help="write the result as JSON here")
    p.add_argument("--force", action="store_true", help="replace an existing --json file")
    add_model_options(p)
    return p


def cmd_compile(ns: argparse.Namespace) -> int:
    from fxstudio.core import turns
    from fxstudio.core.compiling.breaks import explain_breaks
    from fxstudio.core.files import atomic_write, check_writable
    from fxstudio.core.loading import load_model
    from fxstudio.core.runtime.devices import resolve

    if ns.json:
        check_writable(ns.json, ns.force)
    if not ns.explain:
        resolve(ns.device)  # a missing device is said before the model is built
    with turns.one_turn():
        loaded = load_model(ns.model, tuple(ns.input), ns.seed)
        explained = explain_breaks(loaded, train=ns.train)
    print(f"{ns.model}: {explained.describe()}", file=data_out())
    result = explained.to_json()
    if not ns.explain:
        from fxstudio.core.compiling.model import compile_model

        doc, why = _captured(ns, loaded)
        print(
            "Compiling the captured graph…"
            if doc is not None and not explained.breaks
            else "Compiling the eager model, as torch.compile does…",
            file=sys.stderr,
        )
        compiled = compile_model(
            lambda: loaded,
            doc,
            explained,
            ns.device,
            ns.backend,
            ns.mode,
            ns.threads,
            ns.min_time,
            freezing=ns.freezing,
            train=ns.train,
        )
        if why:
            compiled.notes.append(why)
        print(compiled.describe(breaks=False), file=data_out())
        result = compiled.to_json()
    if ns.json:
        atomic_write(ns.json, json.dumps(result, indent=2) + "\n")
        print(f"wrote {ns.json}", file=sys.stderr)
    return EXIT_OK


def _captured(ns: argparse.Namespace, loaded: Any) -> tuple[Any, str]:
    """The model captured as a document (built once: the loaded model), or None and why
    not -- a model neither symbolic tracing nor export captures is compiled all the same."""
    from fxstudio.core.compiling.quiet import muted_stdout
    from fxstudio.core.errors import UserError
    from fxstudio.core.opening import capture_loaded

    try:
        with muted_stdout():  # a print in forward prints while it is traced
            return capture_loaded(request_from(ns), loaded), ""
    except UserError as exc:
        first = str(exc).strip().splitlines()
        return None, (
            "Not captured as a document"
            + (f" ({first[0].rstrip(':')})" if first else "")
            + ": kernels are placed at the lines of your code only."
        )
