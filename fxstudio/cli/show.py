"""``fxstudio show``: the captured graph printed -- as the node table, the code or JSON."""

from __future__ import annotations

import argparse
import json
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
    p = add("show", parents=[model_options()], description="Print the captured graph.")
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("--format", choices=("table", "code", "json"), default="table")
    p.set_defaults(command=cmd_show)
    return p


def cmd_show(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import open_document

    doc = open_document(request_from(ns))
    for note in doc.notes:
        print(f"fxstudio: note: {note}", file=sys.stderr)
    out = data_out()
    if ns.format == "code":
        out.write(doc.code())
    elif ns.format == "json":
        json.dump(doc.to_json(), out, indent=2)
        out.write("\n")
    else:
        from fxstudio.core.graph.graphviews import NodeRow
        from fxstudio.core.wording import text_table

        out.write("\n".join(text_table(NodeRow.COLUMNS, [r.values() for r in doc.rows()])) + "\n")
    return EXIT_OK
