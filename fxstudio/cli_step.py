"""``fxstudio step``: the Step dock without a window -- each node's value, node by node."""

from __future__ import annotations

import argparse
import json
import sys

from fxstudio.cli_common import (
    EXIT_OK,
    EXIT_USAGE,
    MODEL_HELP,
    add_model_options,
    add_overlay_outputs,
    data_out,
    overlay_outputs,
    request_from,
    write_overlays,
)


def step_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fxstudio step",
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
    add_model_options(p)
    return p


def _number(x: float | None) -> str:
    return "" if x is None else f"{x:.4g}"


def cmd_step(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import open_document, step_through
    from fxstudio.core.graph.nodedata import Overlay
    from fxstudio.core.saving.files import check_writable

    stdout = data_out()  # the command's data; the model's prints go to stderr
    for out in overlay_outputs(ns):
        check_writable(out, ns.force)
    doc = open_document(request_from(ns))
    stepper = step_through(doc, eager=not ns.no_eager)
    if ns.until and ns.until not in stepper.index:
        names = ", ".join(list(stepper.index)[:8])
        print(
            f"fxstudio: error: there is no node {ns.until!r} in this graph (nodes: {names}, …; "
            "fxstudio show MODEL lists them)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    steps = stepper.run_to(ns.until) if ns.until else stepper.run_to_end()
    first = stepper.first_difference()
    if overlay_outputs(ns):
        overlay = Overlay("max_abs_value")
        for s in steps:
            v = s.summary
            if v.kind == "tensor" and v.min is not None and v.max is not None:
                overlay.values[s.name] = max(abs(v.min), abs(v.max))
        write_overlays(ns, overlay)
    if ns.format == "json":
        payload = {
            "nodes": [
                {
                    "index": s.index,
                    "name": s.name,
                    "op": stepper.order[s.index].op,
                    "value": s.summary.to_json(),
                    "eager": s.agreement.to_json() if s.agreement else None,
                }
                for s in steps
            ],
            "first_difference": first,
            "eager": stepper.eager is not None,
        }
        json.dump(payload, stdout, indent=1)
        print(file=stdout)
        return EXIT_OK
    header = ("#", "node", "op", "value", "min", "max", "mean", "std", "nan/inf", "eager")
    rows = []
    for s in steps:
        v = s.summary
        bad = f"{v.nans}/{v.infs}" if v.kind == "tensor" else ""
        eager = ""
        if s.agreement is not None:
            a = s.agreement
            eager = "differs" if a.differs else ("same" if a.same else "not compared")
        rows.append(
            (
                str(s.index),
                s.name,
                stepper.order[s.index].op,
                v.text if len(v.text) <= 40 else v.text[:39] + "…",
                _number(v.min),
                _number(v.max),
                _number(v.mean),
                _number(v.std),
                bad,
                eager,
            )
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip(), file=stdout)
    if stepper.eager is None:
        print("\n(not compared with the eager model)", file=stdout)
    elif first is None:
        compared = sum(1 for s in steps if s.agreement is not None and s.agreement.compared)
        print(
            f"\nThe graph matches the eager model at all {compared} module boundaries compared.",
            file=stdout,
        )
    else:
        a = stepper.agreements[first]
        print(
            f"\nFirst node that differs from the eager model: {first} — {a.describe()}", file=stdout
        )
    return EXIT_OK
