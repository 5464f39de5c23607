"""``fxstudio diff``: two graphs aligned node by node, their values compared on the same
inputs, and the first difference found (:mod:`fxstudio.core.compare`)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

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
    write_overlays,
)

FRONTENDS = ("auto", "fx", "export")
EXIT_CHANGED = 3  # --fail-on-change: the graphs differ in structure (1: a bug, 2: bad input)


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    p = add(
        "diff",
        parents=[model_options()],
        description="Compare two graphs: which node is which (by rewrite provenance, "
        "torch.export's from_node, name, source line and module, then structure), what was "
        "removed, added and changed, and -- both run on the same inputs -- the largest value "
        "difference of each pair and the first node where the two stop agreeing. RIGHT may "
        "be left out with --rewrite (LEFT against itself rewritten) or with --left-frontend "
        "/ --right-frontend (LEFT captured two ways).",
    )
    p.add_argument("left", help=MODEL_HELP)
    p.add_argument("right", nargs="?", help="the other model (default: LEFT again)")
    p.add_argument("--left-frontend", choices=FRONTENDS, help="LEFT's capture (--frontend)")
    p.add_argument("--right-frontend", choices=FRONTENDS, help="RIGHT's capture (--frontend)")
    p.add_argument(
        "--rewrite",
        action="append",
        default=[],
        metavar="BUILTIN",
        help="run this built-in rewrite on the right side first (repeatable, in order)",
    )
    p.add_argument("--no-values", action="store_true", help="align only; run nothing")
    p.add_argument("--device", default="cpu", help="where both run (cpu)")
    p.add_argument(
        "--times",
        action="store_true",
        help="also profile both node by node, interleaved, and give each pair's time change "
        "with its 95%% confidence interval",
    )
    p.add_argument(
        "--min-time",
        type=number(float, 0, above=True, unit="seconds"),
        default=1.0,
        help="seconds of timed blocks a side, with --times (1)",
    )
    p.add_argument("--json", metavar="OUT", help="write pairs, removed, added and values here")
    p.add_argument(
        "--html",
        metavar="OUT.html",
        help="write the compare as a self-contained HTML report (both graphs, the differences "
        "coloured, the first divergence; no server, no network)",
    )
    p.add_argument(
        "--fail-on-change",
        action="store_true",
        help="exit 3 when the graphs differ in structure (a node removed, added or changed): "
        "a graph-regression check for CI",
    )
    add_overlay_outputs(p, "each right node's relative value difference")
    p.add_argument("--force", action="store_true", help="replace existing output files")
    p.set_defaults(command=cmd_diff)
    return p


def cmd_diff(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import DiffRequest, diff_flow
    from fxstudio.core.process.files import check_writable

    stdout = data_out()  # the command's data; the model's prints go to stderr
    if ns.right is None and not ns.rewrite and ns.left_frontend == ns.right_frontend:
        print(
            "fxstudio: error: give RIGHT, --rewrite NAME (LEFT against itself rewritten) or "
            "--right-frontend (LEFT captured another way)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if overlay_outputs(ns) and ns.no_values:
        print("fxstudio: error: per-node data needs the values (drop --no-values)", file=sys.stderr)
        return EXIT_USAGE
    for out in (ns.json, ns.html, *overlay_outputs(ns)):
        if out:
            check_writable(out, ns.force)
    base = request_from(argparse.Namespace(**{**vars(ns), "model": ns.left}))
    captured = f"{ns.right_frontend or ns.frontend} capture"
    request = DiffRequest(
        left=replace(base, frontend=ns.left_frontend or ns.frontend),
        right=replace(base, spec=ns.right or ns.left, frontend=ns.right_frontend or ns.frontend),
        rewrites=tuple(ns.rewrite),
        values=not ns.no_values,
        times=ns.times,
        device=ns.device,
        min_time=ns.min_time,
        titles=(ns.left, ns.right or f"{ns.left} ({', '.join(ns.rewrite) or captured})"),
    )
    result = diff_flow(request)
    for report in result.rewrites:
        print("\n".join(report.describe()), file=sys.stderr)
    print("\n".join(result.describe()), file=stdout)
    if ns.json:
        result.write(ns.json)
        print(f"wrote {ns.json}", file=stdout)
    overlay = result.overlay()
    if overlay is not None and overlay_outputs(ns):
        write_overlays(ns, overlay)
    if ns.html:
        from fxstudio.core.flows.report import diff_report

        diff_report(result).write(ns.html)
        print(f"wrote {ns.html}", file=stdout)
    changed = len(result.alignment.removed) + len(result.alignment.added)
    changed += len(result.alignment.changed())
    if ns.fail_on_change and changed:
        print(
            f"fxstudio: the graphs differ in structure ({changed} nodes removed, added or changed)",
            file=sys.stderr,
        )
        return EXIT_CHANGED
    return EXIT_OK
