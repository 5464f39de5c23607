"""``fxstudio compile``: torch.compile insight without a window -- for now where Dynamo breaks
the model into several graphs and why (``--explain``)."""

from __future__ import annotations

import argparse
import json
import sys

from fxstudio.cli_common import EXIT_OK, EXIT_USAGE, MODEL_HELP, add_model_options


def compile_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fxstudio compile",
        description="Run Dynamo (torch.compile's graph capture) over the model on its example "
        "inputs and report every graph break: the user's file and line, Dynamo's reason, what "
        "kind of break it is and what to change.",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument(
        "--explain", action="store_true", help="the graph breaks only (fast: nothing compiled)"
    )
    p.add_argument("--json", metavar="OUT", help="write the result as JSON here")
    p.add_argument("--force", action="store_true", help="replace an existing --json file")
    add_model_options(p)
    return p


def cmd_compile(ns: argparse.Namespace) -> int:
    from fxstudio.core import turns
    from fxstudio.core.compiling.breaks import explain_breaks
    from fxstudio.core.files import atomic_write, check_writable
    from fxstudio.core.loading import load_model

    if not ns.explain:
        print(
            "fxstudio: error: fxstudio compile explains graph breaks (--explain); compiled "
            "kernels attributed to nodes are not built yet",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if ns.json:
        check_writable(ns.json, ns.force)
    with turns.one_turn():
        loaded = load_model(ns.model, tuple(ns.input), ns.seed)
        explained = explain_breaks(loaded, train=ns.train)
    print(f"{ns.model}: {explained.describe()}")
    if ns.json:
        atomic_write(ns.json, json.dumps(explained.to_json(), indent=2) + "\n")
        print(f"wrote {ns.json}", file=sys.stderr)
    return EXIT_OK
