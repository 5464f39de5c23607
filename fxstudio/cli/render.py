"""``fxstudio render``: the graph's picture as the canvas draws it, headless -- SVG (text as
text), PDF (vector, searchable) or PNG -- with a heat overlay on request
(:func:`~fxstudio.core.flows.render.render_flow`; PDF and PNG through Qt, offscreen:
``fxstudio.qt.share``)."""

from __future__ import annotations

import argparse
import sys

from fxstudio.cli.common import (
    EXIT_OK,
    MODEL_HELP,
    AddParser,
    data_out,
    model_options,
    number,
    request_from,
)


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    p = add(
        "render",
        parents=[model_options()],
        description="Draw the graph as the canvas does (modules as groups, repeated blocks "
        "folded ×N, each node's name, target and shape) and write it as SVG, PDF or PNG. "
        "Text stays text in SVG and PDF (searchable, sharp at any zoom). Big graphs open "
        "with their top-level modules collapsed, as in the window; a session keeps its view.",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="the picture: OUT.svg, OUT.pdf or OUT.png",
    )
    p.add_argument(
        "--expanded",
        action="store_true",
        help="expand every module (default: as the window opens the graph)",
    )
    p.add_argument(
        "--collapse",
        action="append",
        default=[],
        metavar="MODULE",
        help="draw this module (its path, e.g. layer1 or layers.3) as one box; repeatable",
    )
    p.add_argument(
        "--heat",
        choices=("profile", "memory", "diff"),
        help="tint the nodes: profile -- each node's share of a profiled run (runs the model); "
        "memory -- the bytes each node's output allocates (estimated, nothing runs); diff -- "
        "what differs from --against BASE (added, changed, values)",
    )
    p.add_argument(
        "--against",
        metavar="BASE",
        help="the baseline model or session for --heat diff (implies it)",
    )
    p.add_argument("--device", default="cpu", help="where --heat profile/diff runs (default cpu)")
    p.add_argument(
        "--scale",
        type=number(float, 0.1, 8.0),
        default=2.0,
        metavar="X",
        help="PNG pixels per point of the drawing (default 2)",
    )
    p.add_argument("--json", metavar="FILE", help="also write the counts and heat as JSON")
    p.add_argument("--force", action="store_true", help="replace existing output files")
    p.set_defaults(command=cmd_render)
    return p


def cmd_render(ns: argparse.Namespace) -> int:
    from dataclasses import replace

    from fxstudio.core.errors import UserError
    from fxstudio.core.flows import open_document
    from fxstudio.core.flows.render import RenderRequest, check_output, render_flow
    from fxstudio.core.process.files import check_writable

    heat = ns.heat or ("diff" if ns.against else None)
    if heat == "diff" and not ns.against:
        raise UserError("--heat diff compares against a baseline: name it with --against BASE.")
    if ns.against and heat != "diff":
        raise UserError(f"--against is the baseline of --heat diff, not of --heat {heat}.")
    out = check_output(ns.output, ns.force)  # said before any work: nothing is written
    if ns.json:
        check_writable(ns.json, ns.force)
    request = request_from(ns)
    doc = open_document(request)
    base = open_document(replace(request, spec=ns.against)) if ns.against else None
    result = render_flow(RenderRequest(doc, ns.expanded, tuple(ns.collapse), heat, base, ns.device))
    if out.suffix.lower() == ".svg":
        result.write(out)
    else:
        from fxstudio.qt.share import write_picture

        write_picture(result.svg, out, ns.scale, f"fxstudio: {ns.model}")
    print(result.describe(), file=data_out())
    for note in result.notes:
        print(f"fxstudio: note: {note}", file=sys.stderr)
    if ns.json:
        from fxstudio.core.process.files import write_json

        write_json(ns.json, result.to_json(), indent=1)
        print(f"wrote {ns.json}", file=sys.stderr)
    print(f"wrote {out}", file=sys.stderr)
    return EXIT_OK
