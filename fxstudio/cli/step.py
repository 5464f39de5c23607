"""``fxstudio step``: the Step dock without a window -- each node's value, node by node
(:func:`~fxstudio.core.flows.step.step_flow`)."""

from __future__ import annotations

import argparse
import json
import sys

from fxstudio.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    MODEL_HELP,
    AddParser,
    add_overlay_outputs,
    data_out,
    model_options,
    overlay_outputs,
    request_from,
    write_overlays,
)


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    p = add(
        "step",
        parents=[model_options()],
        description="Run the captured graph node by node with torch.fx.Interpreter and print "
        "each node's value: shape, dtype, min, max, mean, std, NaN/Inf counts, and where a "
        "module boundary allows whether it matches the eager model's value there.",
    )
    p.add_argument("model", help=MODEL_HELP + " (or a .fxstudio session)")
    p.add_argument("--until", metavar="NODE", help="stop after this node (default: the end)")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument(
        "--no-eager", action="store_true", help="do not build and run the eager model to compare"
    )
    add_overlay_outputs(p, "each node's largest |value|")
    p.add_argument("--force", action="store_true", help="replace existing per-node data files")
    p.set_defaults(command=cmd_step)
    return p


def cmd_step(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import StepRequest, UnknownNode, step_flow
    from fxstudio.core.process.files import check_writable

    stdout = data_out()  # the command's data; the model's prints go to stderr
    for out in overlay_outputs(ns):
        check_writable(out, ns.force)
    try:
        result = step_flow(StepRequest(request_from(ns), until=ns.until, eager=not ns.no_eager))
    except UnknownNode as exc:
        names = ", ".join(exc.names[:8])
        print(
            f"fxstudio: error: there is no node {exc.node!r} in this graph (nodes: {names}, …; "
            "fxstudio show MODEL lists them)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if overlay_outputs(ns):
        write_overlays(ns, result.overlay())
    if ns.format == "json":
        json.dump(result.to_json(), stdout, indent=1)
        print(file=stdout)
        return EXIT_OK
    print("\n".join(result.describe()), file=stdout)
    return EXIT_OK
