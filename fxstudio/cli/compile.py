"""``fxstudio compile``: torch.compile insight without a window -- where Dynamo breaks the
model into several graphs and why (``--explain``: only that, fast), and the model compiled:
eager vs compiled speed-up, compile time, and each kernel timed and attributed to the FX
nodes it was generated from -- or, for a model with graph breaks or one that cannot be
captured, compiled as torch.compile does and each kernel placed in Dynamo's graph and at the
user's lines it came from (:func:`~fxstudio.core.compiling.model.compile_model`)."""

from __future__ import annotations

import argparse
import sys

from fxstudio.cli.common import (
    EXIT_OK,
    MODEL_HELP,
    AddParser,
    data_out,
    model_options,
    request_from,
    run_options,
)


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    from fxstudio.core.flows.compile import BACKENDS, MODES

    p = add(
        "compile",
        parents=[
            run_options("seconds spent timing eager and compiled, interleaved (default 1)"),
            model_options(),
        ],
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
    p.add_argument("--json", metavar="OUT", help="write the result as JSON here")
    p.add_argument("--force", action="store_true", help="replace an existing --json file")
    p.set_defaults(command=cmd_compile)
    return p


def cmd_compile(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import CompileRequest, compile_flow
    from fxstudio.core.process.files import check_writable

    if ns.json:
        check_writable(ns.json, ns.force)
    request = CompileRequest(
        request_from(ns),
        explain_only=ns.explain,
        device=ns.device,
        backend=ns.backend,
        mode=ns.mode,
        threads=ns.threads,
        min_time=ns.min_time,
        freezing=ns.freezing,
    )
    if not ns.explain:  # torch.compile's first compile takes seconds to minutes: say so first
        print(
            f"Finding graph breaks, then compiling with torch.compile (backend={ns.backend}, "
            f"mode={ns.mode}) and timing it against eager…",
            file=sys.stderr,
        )
    result = compile_flow(request)
    print(result.describe(), file=data_out())
    if ns.json:
        result.write(ns.json)
        print(f"wrote {ns.json}", file=sys.stderr)
    return EXIT_OK
