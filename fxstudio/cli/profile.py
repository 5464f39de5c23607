"""``fxstudio profile``: the Run dock without a window."""

from __future__ import annotations

import argparse
import sys

from fxstudio.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    MODEL_HELP,
    AddParser,
    add_overlay_outputs,
    data_out,
    model_options,
    number,
    overlay_outputs,
    request_from,
    run_options,
    write_overlays,
)


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    p = add(
        "profile",
        parents=[
            run_options(
                "seconds of timed blocks at least (default 1; with --against, for both sides)"
            ),
            model_options(),
        ],
        description="Run the model on a device and time it: outputs checked first, warm-up "
        "apart, blocks synchronised, median and spread, an environment stamp; --per-node adds "
        "a separate profiled run (node and module times that add up, FLOPs, roofline); "
        "--against times a baseline interleaved with it (speed-up, 95 %% CI, significance). "
        "MODEL may be a session (a rewritten graph).",
    )
    p.add_argument("model", nargs="?", help=MODEL_HELP + " (or a .fxstudio session)")
    p.add_argument(
        "--dtype",
        choices=(
            "float32",
            "float16",
            "bfloat16",
            "float64",
            "autocast:float16",
            "autocast:bfloat16",
        ),
        help="cast the weights and float inputs, or (autocast:…) run the ops under "
        "torch.autocast with the weights as they are (default: as captured)",
    )
    p.add_argument(
        "--batch",
        type=number(int, 1),
        metavar="N",
        help="run with N items: the example inputs' rows repeated (default: as given)",
    )
    p.add_argument(
        "--compile",
        nargs="?",
        const="inductor",
        metavar="BACKEND",
        help="time torch.compile(model, backend=BACKEND) (default inductor); compile time and "
        "recompiles are reported apart",
    )
    p.add_argument(
        "--cold-l2", action="store_true", help="CUDA: flush the L2 before every timed call"
    )
    p.add_argument(
        "--per-node",
        action="store_true",
        help="also profile node by node (a separate run, never the headline)",
    )
    p.add_argument(
        "--calls",
        type=number(int, 1),
        metavar="N",
        help="profiled calls for --per-node (default: ~0.5 s)",
    )
    p.add_argument(
        "--against",
        metavar="MODEL_OR_SESSION",
        help="the baseline (before) to compare with, opened with the same options",
    )
    p.add_argument(
        "--replicates",
        type=number(int, 9),
        default=9,
        metavar="N",
        help="interleaved replicates a side with --against (at least 9)",
    )
    p.add_argument(
        "--module",
        metavar="PATH",
        help="run only this module (e.g. layers.0): taken out of the graph at its real width, "
        "with its weights (random ones at their shapes for a structure-only model) and inputs "
        "of the shapes the graph records -- the part of a large model that fits",
    )
    p.add_argument("--json", metavar="OUT", help="write the result as JSON here")
    p.add_argument(
        "--trace",
        metavar="OUT.json",
        help="write the profiled calls as a Chrome/Perfetto trace (--per-node)",
    )
    p.add_argument("--csv", metavar="OUT.csv", help="write the per-node table as CSV (--per-node)")
    add_overlay_outputs(p, "each node's time in ms (--per-node)")
    p.add_argument("--force", action="store_true", help="replace existing output files")
    p.add_argument("--list-devices", action="store_true", help="list the devices and exit")
    p.set_defaults(command=cmd_profile)
    return p


def cmd_profile(ns: argparse.Namespace) -> int:
    from dataclasses import replace

    from fxstudio.core.flows import ProfileOptions, open_document, profile
    from fxstudio.core.process.files import check_writable
    from fxstudio.core.process.guard import format_bytes
    from fxstudio.core.runtime.devices import available, resolve

    if ns.list_devices:
        for d in available():
            extra = f"{d.threads} threads" if d.kind == "cpu" else ""
            if d.free_bytes is not None:
                extra = f"{format_bytes(d.free_bytes)} free of {format_bytes(d.total_bytes or 0)}"
            print(f"{d.name:<8} {d.label}  {extra}".rstrip(), file=data_out())
        return EXIT_OK
    if not ns.model:
        print("fxstudio: error: give the model to profile (or --list-devices)", file=sys.stderr)
        return EXIT_USAGE
    if (ns.trace or ns.csv or overlay_outputs(ns)) and not ns.per_node:
        print(
            "fxstudio: error: --trace, --csv, --model-explorer and --netron need --per-node",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if ns.against and (ns.compile or ns.cold_l2):
        print("fxstudio: error: --against times eager models with a warm L2", file=sys.stderr)
        return EXIT_USAGE
    for out in (ns.json, ns.trace, ns.csv, *overlay_outputs(ns)):
        if out:
            check_writable(out, ns.force)
    resolve(ns.device)  # a missing device is said before the model is built
    options = ProfileOptions(
        ns.device,
        ns.threads,
        ns.dtype,
        ns.min_time,
        ns.per_node,
        ns.calls,
        ns.compile,
        ns.cold_l2,
        ns.batch,
        ns.replicates,
    )
    doc = open_document(request_from(ns))
    base = open_document(replace(request_from(ns), spec=ns.against)) if ns.against else None
    part = None
    if ns.module:
        from fxstudio.core.flows.run import part_of

        part = part_of(doc, ns.module)
        doc = part.document
        base = part_of(base, ns.module).document if base is not None else None
    result = profile(doc, options, base)
    title = f"{ns.model}, {part.describe()}" if part is not None else ns.model
    print(f"{title}: {result.describe()}", file=data_out())
    if part is not None and part.estimate(result.after.timing.median_s):
        print(f"  {part.estimate(result.after.timing.median_s)}", file=data_out())
    for path, write in ((ns.json, result.write), (ns.csv, result.write_csv)):
        if path:
            write(path)
            print(f"wrote {path}", file=sys.stderr)
    if overlay_outputs(ns):
        write_overlays(ns, result.node_times())
    if ns.trace:
        result.write_trace(ns.trace)
        print(f"wrote {ns.trace}", file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_USAGE
