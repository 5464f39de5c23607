"""``fxstudio rewrite``: the Patterns dock without a window."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import Any

from fxstudio.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    MODEL_HELP,
    AddParser,
    data_out,
    model_options,
    request_from,
)


class _Rewrites(argparse.Action):
    """--builtin and --pattern add a rewrite, in order; --replacement completes a pattern."""

    def __call__(self, parser, namespace, value, option_string=None):
        steps = getattr(namespace, "rewrites", None) or []
        if option_string == "--replacement":
            if not steps or steps[-1][0] != "pattern" or steps[-1][2]:
                parser.error("--replacement must follow its --pattern")
            steps[-1] = ("pattern", steps[-1][1], value)
        else:
            steps.append(("builtin" if option_string == "--builtin" else "pattern", value, ""))
        namespace.rewrites = steps


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    p = add(
        "rewrite",
        parents=[model_options()],
        description="Find a pattern everywhere and replace it, or run a built-in rewrite; each "
        "is one edit, checked numerically against the model before it. Several run in "
        "order. No match: exit 2 with the nearest misses and why they failed.",
    )
    p.add_argument("model", nargs="?", help=MODEL_HELP + " (or a .fxstudio session)")
    p.add_argument("--builtin", action=_Rewrites, metavar="NAME", help="a built-in (see --list)")
    p.add_argument("--pattern", action=_Rewrites, metavar="FILE.py:fn", help="the pattern")
    p.add_argument(
        "--replacement",
        action=_Rewrites,
        metavar="FILE.py:fn",
        help="what each match becomes (same inputs as the pattern, in order)",
    )
    p.add_argument("--list", action="store_true", help="list the built-in rewrites")
    p.add_argument("--ignore-literals", action="store_true", help="a literal matches any value")
    p.add_argument(
        "--fx-rules",
        action="store_true",
        help="match as torch.fx.replace_pattern does (op and target only)",
    )
    p.add_argument("--dry-run", action="store_true", help="list the matches, change nothing")
    p.add_argument(
        "--allow-difference",
        action="store_true",
        help="the replacement is meant to change the values: a failing check is "
        "reported, not an error",
    )
    p.add_argument("--explain", metavar="NODE", help="why NODE is not (part of) a match")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-o", "--output", metavar="OUT.py|OUT.fxstudio", help="save the result")
    p.add_argument("--force", action="store_true", help="replace an existing output file")
    p.set_defaults(rewrites=[])
    p.set_defaults(command=cmd_rewrite)
    return p


def cmd_rewrite(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import RewriteRequest, RewriteSpec, export, open_document, rewrite_flow
    from fxstudio.core.flows.patterns import DEFAULT_RULES, FX_RULES
    from fxstudio.core.flows.save import save_session
    from fxstudio.core.graph.request import SESSION_SUFFIX
    from fxstudio.core.patterns.builtins import listing
    from fxstudio.core.process.files import check_writable

    if ns.list:
        print(listing(), file=data_out())
        return EXIT_OK
    if not ns.model:
        print("fxstudio: error: give the model to rewrite (or --list)", file=sys.stderr)
        return EXIT_USAGE
    if not ns.rewrites:
        print("fxstudio: error: give --builtin NAME or --pattern/--replacement", file=sys.stderr)
        return EXIT_USAGE
    if ns.output:
        if not ns.output.endswith((".py", SESSION_SUFFIX)):
            print(f"fxstudio: error: -o takes a .py or {SESSION_SUFFIX} file", file=sys.stderr)
            return EXIT_USAGE
        check_writable(ns.output, ns.force)
    rules = FX_RULES if ns.fx_rules else DEFAULT_RULES
    if ns.ignore_literals:
        rules = replace(rules, literals="any")
    doc = open_document(request_from(ns))
    reports: list[dict[str, Any]] = []
    status = EXIT_OK
    for kind, what, replacement in ns.rewrites:
        spec = (
            RewriteSpec(builtin=what)
            if kind == "builtin"
            else RewriteSpec(pattern=what, replacement=replacement, rules=rules)
        )
        request = RewriteRequest(
            spec,
            dry_run=ns.dry_run,
            allow_difference=ns.allow_difference,
            explain_at=ns.explain if kind == "pattern" else None,
        )
        report = rewrite_flow(doc, request)
        reports.append(report.to_json())
        if not ns.json:
            print("\n".join(report.describe()), file=data_out())
        if not report.result.found.matches and kind == "pattern":
            status = EXIT_USAGE
        elif kind == "builtin" and report.result.edit is None and not report.result.replaced:
            print(f"fxstudio: note: {what} changed nothing: {report.verdict}", file=sys.stderr)
        if report.check_failed:
            status = EXIT_USAGE
            assert report.check is not None
            print(
                f"fxstudio: error: {report.check.describe()} Nothing was written (if the "
                "rewrite is meant to change the values, add --allow-difference).",
                file=sys.stderr,
            )
            break
    if ns.json:
        out = reports[-1] if len(reports) == 1 else {"rewrites": reports}
        print(json.dumps(out, indent=2, default=repr), file=data_out())
    if status != EXIT_OK:
        return status
    if ns.output and not ns.dry_run:
        if ns.output.endswith(SESSION_SUFFIX):
            save_session(doc, ns.output)
        else:
            export(doc, ns.output, "py", force=ns.force)
        print(f"wrote {ns.output}", file=sys.stderr)
    return status
