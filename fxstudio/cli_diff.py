"""``fxstudio diff``: two graphs aligned node by node, their values compared on the same
inputs, and the first difference found (:mod:`fxstudio.core.compare`)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace

from fxstudio.cli_common import (
    EXIT_OK,
    EXIT_USAGE,
    MODEL_HELP,
    add_model_options,
    add_overlay_outputs,
    data_out,
    number,
    overlay_outputs,
    request_from,
    write_overlays,
)

FRONTENDS = ("auto", "fx", "export")


def diff_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fxstudio diff",
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
    add_overlay_outputs(p, "each right node's relative value difference")
    p.add_argument("--force", action="store_true", help="replace existing output files")
    add_model_options(p)
    return p


def cmd_diff(ns: argparse.Namespace) -> int:
    from fxstudio.core.compare.align import align
    from fxstudio.core.compare.values import compare_values
    from fxstudio.core.files import atomic_write, check_writable
    from fxstudio.core.nodedata import Overlay
    from fxstudio.core.patterns.apply import RewriteSpec, rewrite_flow
    from fxstudio.core.sessions import open_document

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
    for out in (ns.json, *overlay_outputs(ns)):
        if out:
            check_writable(out, ns.force)
    base = request_from(argparse.Namespace(**{**vars(ns), "model": ns.left}))
    left = open_document(replace(base, frontend=ns.left_frontend or ns.frontend))
    right = open_document(
        replace(base, spec=ns.right or ns.left, frontend=ns.right_frontend or ns.frontend)
    )
    for name in ns.rewrite:
        report = rewrite_flow(right, RewriteSpec(builtin=name), allow_difference=True)
        print("\n".join(report.describe()), file=sys.stderr)
    alignment = align(left, right)
    calls_left, calls_right = alignment.coverage(left, right)
    captured = f"{ns.right_frontend or ns.frontend} capture"
    right_label = ns.right or f"{ns.left} ({', '.join(ns.rewrite) or captured})"
    print(f"{ns.left} vs {right_label}: {alignment.describe()}", file=stdout)
    print(
        f"  call nodes paired: {calls_left:.0%} of the left's, {calls_right:.0%} of the right's",
        file=stdout,
    )
    for label, names, doc in (
        ("removed", alignment.removed, left),
        ("added", alignment.added, right),
    ):
        ops = [n for n in names if doc.node(n).op != "get_attr"]
        weights = len(names) - len(ops)
        if ops:
            print(
                f"  {label}: {', '.join(ops[:12])}" + (" …" if len(ops) > 12 else ""), file=stdout
            )
        if weights:
            print(f"  {label}: {weights} parameter reads (get_attr)", file=stdout)
    changed = alignment.changed()
    for pair in changed[:12]:
        print(
            f"  changed ({pair.why}): {' + '.join(pair.left)} → {' + '.join(pair.right)}",
            file=stdout,
        )
    if len(changed) > 12:
        print(f"  … and {len(changed) - 12} more changed", file=stdout)
    data = alignment.to_json()
    values = None
    if not ns.no_values:
        values = compare_values(left, right, alignment, ns.device)
        print("  " + values.describe(), file=stdout)
        data["values"] = values.to_json()
    if ns.times:
        from fxstudio.core.compare.times import time_both

        times = time_both(left, right, alignment, ns.device, min_time=ns.min_time)
        print(f"  times: {times.whole.describe()}", file=stdout)
        ranked = sorted(times.pairs, key=lambda t: -abs(t.delta_s))
        for t in [t for t in ranked if t.change.significant][:8]:
            print(
                f"    {' + '.join(t.left)} → {' + '.join(t.right)}: {t.change.describe()}",
                file=stdout,
            )
        data["times"] = times.to_json()
    if ns.json:
        atomic_write(ns.json, json.dumps(data, indent=2) + "\n")
        print(f"wrote {ns.json}", file=stdout)
    if values is not None and overlay_outputs(ns):
        overlay = Overlay("max_rel_diff")
        for v in values.nodes:
            paired = alignment.pair_of_right(v.right)
            for name in paired.right if paired is not None else (v.right,):
                if v.max_rel_diff is not None:
                    overlay.values[name] = v.max_rel_diff
        write_overlays(ns, overlay)
    return EXIT_OK
