"""``fxstudio edit``: the graph edited without a window, as the Edit menu edits it (the
typed-edit language of :mod:`fxstudio.core.edits`), its code printed, the edits saved as a
session."""

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
)


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    from fxstudio.core.edits import COMMANDS as EDITS

    p = add(
        "edit",
        parents=[model_options()],
        description="Edit the graph without a window, as the window's Edit menu does: each "
        "-e is one edit, checked as in the window (a refused edit stops with a message and "
        "writes nothing). Prints the forward code after the edits; -o saves them as a "
        "session, which `fxstudio export` and the window open.",
        epilog="edits:\n" + EDITS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("-e", "--edit", action="append", required=True, metavar="EDIT")
    p.add_argument("-o", "--output", metavar="OUT.fxstudio", help="save a session here")
    p.add_argument("--force", action="store_true", help="replace an existing session file")
    p.set_defaults(command=cmd_edit)
    return p


def cmd_edit(ns: argparse.Namespace) -> int:
    from fxstudio.core.edits import EditError, run_command
    from fxstudio.core.flows import open_document
    from fxstudio.core.flows.save import save_session
    from fxstudio.core.graph.request import SESSION_SUFFIX
    from fxstudio.core.process.files import check_writable

    if ns.output:
        if not ns.output.endswith(SESSION_SUFFIX):
            print(f"fxstudio: error: save the session as a {SESSION_SUFFIX} file", file=sys.stderr)
            return EXIT_USAGE
        check_writable(ns.output, ns.force)
    doc = open_document(request_from(ns))
    for i, text in enumerate(ns.edit, 1):
        try:
            edit = run_command(doc, text)
        except EditError as exc:
            raise EditError(f"edit {i} ({text}) was refused: {exc}") from exc
        print(f"fxstudio: {edit.label}", file=sys.stderr)
        if doc.shape_problem:
            node, problem = doc.shape_problem
            print(f"fxstudio: note: the shapes no longer fit at {node}: {problem}", file=sys.stderr)
    data_out().write(doc.code())
    if ns.output:
        save_session(doc, ns.output)
        print(f"wrote {ns.output}", file=sys.stderr)
    return EXIT_OK
