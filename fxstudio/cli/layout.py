"""``fxstudio layout``: the graph laid out as the canvas lays it out, its counts printed and
its positions written (:func:`~fxstudio.core.flows.layout.layout_flow`)."""

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
)


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    p = add(
        "layout",
        parents=[model_options()],
        description="Lay the graph out as the canvas does (graphviz dot, by module) and print "
        "node count, group count and seconds.",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument(
        "--expanded",
        action="store_true",
        help="expand every module (default: top-level modules collapsed)",
    )
    p.add_argument("--json", metavar="FILE", help="write node positions and group boxes here")
    p.add_argument("--force", action="store_true", help="replace an existing --json file")
    p.set_defaults(command=cmd_layout)
    return p


def cmd_layout(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import LayoutRequest, layout_flow, open_document
    from fxstudio.core.process.files import check_writable

    if ns.json:
        check_writable(ns.json, ns.force)
    doc = open_document(request_from(ns))
    result = layout_flow(LayoutRequest(doc, expanded=ns.expanded))
    print(result.describe(), file=data_out())
    for note in result.notes:
        print(f"fxstudio: note: {note}", file=sys.stderr)
    if ns.json:
        result.write(ns.json)
        print(f"wrote {ns.json}", file=data_out())
    return EXIT_OK
