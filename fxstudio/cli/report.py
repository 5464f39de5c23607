"""``fxstudio report``: a model or session as one self-contained HTML page that opens in any
browser with no server and no network -- the graph (pan, zoom, modules collapse on click, a
node's details on click) and what the session holds: its rewrites with each check, and on
request a profile, the memory estimate, compiled kernels, a compare against a baseline
(:func:`fxstudio.core.flows.report.report_flow`)."""

from __future__ import annotations

import argparse
import sys

from fxstudio.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    MODEL_HELP,
    AddParser,
    data_out,
    model_options,
    request_from,
    run_options,
)


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    p = add(
        "report",
        parents=[model_options(), run_options("seconds of timed runs a side, with --profile (1)")],
        description="Write one HTML file that opens offline in any current browser (no "
        "server, no network request): the graph drawn as the canvas draws it, with pan and "
        "zoom, modules that collapse and expand on click and a node's details on click; the "
        "session's rewrite history with each check made again; with --profile the profile "
        "(whole, per module, per node, with its heat), before/after with its confidence "
        "interval against --against; with --against the compare (both graphs, differences "
        "coloured, the first divergence); --memory the memory estimate (its peak before -> "
        "after against --against); --compile the "
        "compiled kernels.",
    )
    p.add_argument("model", help=MODEL_HELP + " (or a .fxstudio session)")
    p.add_argument("-o", "--output", required=True, metavar="OUT.html", help="the page")
    p.add_argument(
        "--against",
        metavar="MODEL_OR_SESSION",
        help="the baseline (before), opened with the same options: the compare, and the "
        "profile's and the memory's before/after",
    )
    p.add_argument("--profile", action="store_true", help="run and time it, node by node")
    p.add_argument("--memory", action="store_true", help="estimate its memory (no run)")
    p.add_argument(
        "--compile", action="store_true", help="torch.compile it: its kernels, attributed"
    )
    p.add_argument(
        "--no-values", action="store_true", help="compare the structures only (run nothing)"
    )
    p.add_argument(
        "--no-history", action="store_true", help="leave the rewrite history out (no re-run)"
    )
    p.add_argument("--title", default="", help="the page's title (default: the model)")
    p.add_argument("--force", action="store_true", help="replace an existing OUT.html")
    p.set_defaults(command=cmd_report)
    return p


def cmd_report(ns: argparse.Namespace) -> int:
    from dataclasses import replace

    from fxstudio.core.flows import CompileRequest, ProfileOptions, compile_flow, open_document
    from fxstudio.core.flows.report import ReportRequest, report_flow
    from fxstudio.core.process.files import check_writable

    if not ns.output.lower().endswith((".html", ".htm")):
        print(
            f"fxstudio: error: the report is an HTML page: name it OUT.html, not {ns.output}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    check_writable(ns.output, ns.force)
    request = request_from(ns)
    doc = open_document(request)
    base = open_document(replace(request, spec=ns.against)) if ns.against else None
    options = None
    if ns.profile:
        options = ProfileOptions(
            device=ns.device, threads=ns.threads, min_time=ns.min_time, per_node=True
        )
    compiled = None
    if ns.compile:
        compiled = compile_flow(
            CompileRequest(
                doc.request,
                document=doc,
                device=ns.device,
                threads=ns.threads,
                min_time=ns.min_time,
            )
        )
    result = report_flow(
        ReportRequest(
            doc,
            against=base,
            profile=options,
            memory=ns.memory,
            compiled=compiled,
            values=not ns.no_values,
            history=not ns.no_history,
            title=ns.title or ns.model,
        )
    )
    result.write(ns.output)
    print("\n".join(result.describe()), file=data_out())
    print(f"wrote {ns.output}", file=sys.stderr)
    return EXIT_OK
