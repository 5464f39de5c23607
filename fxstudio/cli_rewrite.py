"""``fxstudio rewrite``: the Patterns dock without a window."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import Any

from fxstudio.cli import EXIT_OK, EXIT_USAGE, _request


def cmd_rewrite(ns: argparse.Namespace) -> int:
    from fxstudio.core.export import export
    from fxstudio.core.files import check_writable
    from fxstudio.core.patterns.apply import RewriteSpec, pattern_of, run
    from fxstudio.core.patterns.builtins import listing
    from fxstudio.core.patterns.explain import explain
    from fxstudio.core.patterns.matcher import Matcher
    from fxstudio.core.patterns.pattern import DEFAULT_RULES, FX_RULES
    from fxstudio.core.session import SESSION_SUFFIX, open_document
    from fxstudio.core.sessionfile import save_session

    if ns.list:
        print(listing())
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
    doc = open_document(_request(ns))
    reports: list[dict[str, Any]] = []
    status = EXIT_OK
    for kind, what, replacement in ns.rewrites:
        spec = (
            RewriteSpec(builtin=what)
            if kind == "builtin"
            else RewriteSpec(pattern=what, replacement=replacement, rules=rules)
        )
        pattern = pattern_of(doc, spec) if kind == "pattern" else None
        found = Matcher(pattern).find(doc.graph_module) if pattern is not None else None
        why = None
        if pattern is not None and (ns.explain or not found.matches):  # type: ignore[union-attr]
            # on the graph as matched: a replacement would take the nodes asked about away
            why = explain(doc.graph_module, pattern, at=ns.explain, found=found)
        report = run(
            doc,
            spec,
            dry_run=ns.dry_run,
            pattern=pattern,
            allow_difference=ns.allow_difference,
            found=found,
        )
        record = {"rewrite": spec.title, **report.to_json()}
        lines = _describe(spec.title, report, ns.dry_run)
        if why is not None:
            record["explanation"] = why.to_json()
            if ns.explain and why.at is not None:
                at = why.at
                record["here"] = at.to_json()
            lines.append(why.describe())
        reports.append(record)
        if not ns.json:
            print("\n".join(lines))
        if not report.result.found.matches and kind == "pattern":
            status = EXIT_USAGE
        elif kind == "builtin" and report.result.edit is None and not report.result.replaced:
            print(f"fxstudio: note: {what} found nothing to change", file=sys.stderr)
        if report.check_failed:
            status = EXIT_USAGE
            print(
                f"fxstudio: error: {report.check.describe()} Nothing was written (if the "
                "rewrite is meant to change the values, add --allow-difference).",
                file=sys.stderr,
            )
            break
    if ns.json:
        out = dict(reports[-1]) if len(reports) == 1 else {"rewrites": reports}
        print(json.dumps(out, indent=2, default=repr))
    if status != EXIT_OK:
        return status
    if ns.output and not ns.dry_run:
        if ns.output.endswith(SESSION_SUFFIX):
            save_session(doc, ns.output)
        else:
            export(doc, ns.output, "py", force=ns.force)
        print(f"wrote {ns.output}", file=sys.stderr)
    return status


def _describe(title: str, report: Any, dry_run: bool) -> list[str]:
    r = report.result
    found = r.found
    lines = [
        f"{title}: {len(found.matches)} match{'es' if len(found.matches) != 1 else ''}"
        + ("" if dry_run else f", {len(r.replaced)} replaced")
        + f" (match {r.seconds_match:.3f} s, replace {r.seconds_replace:.3f} s)"
    ]
    lines += [f"  warning: {w}" for w in found.warnings]
    if dry_run:
        for m in found.matches:
            lines.append(f"  {m.index + 1}. {', '.join(m.graph_nodes)}")
    for m, why in r.skipped:
        lines.append(f"  skipped {m.anchor}: {why}")
    for s in found.skipped:
        lines.append(f"  skipped: {s.failure.describe()}")
    if report.check is not None:
        lines.append(f"  {report.check.describe(report.intended)}")
    return lines
