"""The report's sections as HTML, each from the JSON the report gathered (:mod:`.gather`): the
rewrite history with each check, the profile (whole, per module, per node; before/after with
its confidence interval), the compare (what was removed, added and changed, the first
divergence), the compiled kernels and the memory estimate (against a baseline its peak before
→ after with the change, and the measured peak when there is one).  Each function takes that
section's JSON and returns an HTML fragment (text escaped); the page is
:func:`fxstudio.core.share.htmlreport.report_html`'s.

Tables stop at :data:`ROWS` rows (the largest first where the order matters): a report of a
10,000-node graph stays readable and small; the whole data is in the page's JSON.

Example:
    >>> page = history_html([{"label": "Replace pattern fold-conv-bn", "edit": "rewrite",
    ...                        "check": {"ok": True, "text": "Check passed"}}])
    >>> '<li class="fx-check-ok"><b>Replace pattern fold-conv-bn</b>' in page
    True
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from fxstudio.core.graph.parts import seconds

__all__ = [
    "ROWS",
    "compare_html",
    "compile_html",
    "history_html",
    "memory_html",
    "profile_html",
    "table",
]

#: The most rows a table shows.
ROWS = 40


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], more: int = 0, cls: str = "") -> str:
    """An HTML table; ``more``: rows left out (said under it)."""
    th = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    extra = f'<p class="fx-more">… and {more} more (in the page\'s JSON)</p>' if more > 0 else ""
    attr = f' class="{escape(cls)}"' if cls else ""
    return f"<table{attr}><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>{extra}"


def size(n: float | None) -> str:
    """Bytes in words: ``1.5 MiB``."""
    if n is None:
        return "–"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _section(id_: str, title: str, body: str) -> str:
    return f'<section id="{id_}"><h2>{escape(title)}</h2>{body}</section>'


def _check_words(check: dict[str, Any] | None, unchecked: str) -> tuple[str, str]:
    """(the check in words, its class: ok / failed / none)."""
    if check is None:
        return (f"not checked: {unchecked}" if unchecked else "no check (not a rewrite)"), "none"
    cls = "ok" if check.get("ok") or check.get("intended") else "failed"
    return str(check.get("text", "")), cls


def history_html(history: list[dict[str, Any]]) -> str:
    """The edits in the order made, each rewrite with its numerical check."""
    if not history:
        return _section("history", "Rewrite history", "<p>No edits: the graph as captured.</p>")
    items = []
    for h in history:
        words, cls = _check_words(h.get("check"), h.get("unchecked", ""))
        extra = f" — {escape(h['note'])}" if h.get("note") else ""
        items.append(
            f'<li class="fx-check-{cls}"><b>{escape(h.get("label", h.get("edit", "")))}'
            f"</b>{extra}<br><span>{escape(words)}</span></li>"
        )
    return _section("history", "Rewrite history", f'<ol class="fx-history">{"".join(items)}</ol>')


def _speedup(c: dict[str, Any]) -> str:
    s, lo, hi = c.get("speedup"), c.get("ci_low"), c.get("ci_high")
    if s is None:
        return "–"
    ci = f" (95% CI {lo:.2f}–{hi:.2f})" if lo is not None and hi is not None else ""
    return f"{s:.2f}×{ci}"


def profile_html(profile: dict[str, Any]) -> str:
    """The whole model's time, the modules and nodes by share, and -- against a baseline --
    before/after with the speed-up's confidence interval."""
    whole, env = profile.get("whole", {}), profile.get("env", {})
    parts = [
        f"<p><b>Whole model:</b> median {seconds(whole.get('median_s'))} "
        f"(IQR {seconds(whole.get('iqr_s'))}, {whole.get('runs', '?')} runs) on "
        f"{escape(str(env.get('device', '?')))} ({escape(str(env.get('cpu', '')))}, "
        f"{env.get('threads', '?')} threads, {escape(str(env.get('dtype', '')))}, torch "
        f"{escape(str(env.get('torch', '')))}); check: "
        f"{escape(str(profile.get('check', {}).get('text', '')))}</p>"
    ]
    comp = profile.get("compare")
    if comp:
        parts.append(
            f'<p class="fx-compare-line"><b>Before/after:</b> {seconds(comp.get("before_s"))} → '
            f"{seconds(comp.get('after_s'))}: {_speedup(comp)} — "
            f"{escape(str(comp.get('verdict', '')))} (p = {comp.get('p_value', 0):.3g})</p>"
        )
        rows = sorted(comp.get("nodes", []), key=lambda r: -abs(r["before_s"] - r["after_s"]))
        parts.append("<h3>Changes by node (largest first)</h3>")
        parts.append(
            table(
                ("before", "after", "how", "before", "after", "speed-up (95% CI)", "verdict"),
                (
                    (
                        " + ".join(r.get("before", [])),
                        " + ".join(r.get("after", [])),
                        r.get("how", ""),
                        seconds(r.get("before_s")),
                        seconds(r.get("after_s")),
                        _speedup(r),
                        r.get("verdict", ""),
                    )
                    for r in rows[:ROWS]
                ),
                len(rows) - ROWS,
            )
        )
    modules = sorted(profile.get("modules") or [], key=lambda m: -m.get("time_s", 0))
    if modules:
        parts.append("<h3>Per module</h3>")
        parts.append(
            table(
                ("module", "type", "time", "share", "nodes"),
                (
                    (
                        m["path"] or "(top)",
                        m.get("type", ""),
                        seconds(m["time_s"]),
                        f"{m['share']:.1%}",
                        m.get("nodes", ""),
                    )
                    for m in modules[:ROWS]
                ),
                len(modules) - ROWS,
            )
        )
    nodes = sorted(profile.get("nodes") or [], key=lambda n: -n.get("time_s", 0))
    if nodes:
        parts.append("<h3>Per node (the graph's heat: <i>Heat ▸ profile</i>)</h3>")
        parts.append(
            table(
                ("node", "op", "module", "time", "share", "bound"),
                (
                    (
                        n["name"],
                        n.get("target", ""),
                        n.get("module", ""),
                        seconds(n["time_s"]),
                        f"{n['share']:.1%}",
                        n.get("bound", ""),
                    )
                    for n in nodes[:ROWS]
                ),
                len(nodes) - ROWS,
            )
        )
    notes = list(profile.get("notes", []))
    notes += list((profile.get("profile") or {}).get("warnings", []))
    parts += [f'<p class="fx-note">{escape(str(n))}</p>' for n in notes]
    return _section("profile", "Profile", "".join(parts))


def compare_html(compare: dict[str, Any], panes: str) -> str:
    """Both graphs (``panes``: their views, side by side) with the differences coloured,
    what was removed, added and changed, and the first divergence of the values."""
    left, right = compare.get("titles", ["left", "right"])
    removed, added = compare.get("removed", []), compare.get("added", [])
    changed = [p for p in compare.get("pairs", []) if p.get("status") == "changed"]
    first = (compare.get("values") or {}).get("first_difference")
    summary = (
        f"<p><b>{escape(left)}</b> vs <b>{escape(right)}</b>: {len(compare.get('pairs', []))}"
        f" pairs, <span class='fx-key fx-key-changed'>{len(changed)} changed</span>, "
        f"<span class='fx-key fx-key-removed'>{len(removed)} removed</span>, "
        f"<span class='fx-key fx-key-added'>{len(added)} added</span>.</p>"
    )
    if compare.get("values") is not None:
        if first:
            summary += (
                f"<p class='fx-first'><b>First divergence:</b> "
                f"<a href='#' data-fx-goto='{escape(first)}'>{escape(first)}</a> "
                f"({escape(str(compare.get('first_note', '')))})</p>"
            )
        else:
            summary += "<p>Values: every compared pair agrees.</p>"
    elif compare.get("values_problem"):
        summary += (
            f"<p class='fx-note'>Values not compared: {escape(compare['values_problem'])}</p>"
        )
    rows = [("removed", n, "") for n in removed] + [("added", "", n) for n in added]
    rows += [
        ("changed", " + ".join(_names(p["left"])), " + ".join(_names(p["right"]))) for p in changed
    ]
    listing = table(("what", left, right), rows[:ROWS], len(rows) - ROWS) if rows else ""
    return _section("compare", "Compare", summary + panes + listing)


def _names(x: str | list[str]) -> list[str]:
    return [x] if isinstance(x, str) else list(x)


def compile_html(compiled: dict[str, Any]) -> str:
    """torch.compile's breaks, its time against eager and the kernels by time, each with the
    nodes it came from."""
    parts = []
    if "graphs" in compiled:
        breaks = compiled.get("graph_breaks", [])
        parts.append(f"<p>Dynamo: {compiled.get('graphs')} graph(s), {len(breaks)} break(s).</p>")
        parts += [
            f'<p class="fx-note">Break: {escape(str(b.get("reason")))} at '
            f"{escape(str(b.get('file')))}:{b.get('line')} — {escape(str(b.get('advice')))}</p>"
            for b in breaks[:ROWS]
        ]
    if compiled.get("speedup"):
        sp = compiled["speedup"]
        how = escape(f"{compiled.get('backend')} ({compiled.get('mode')})")
        parts.append(
            f"<p><b>{how}</b> on {escape(str(compiled.get('device')))}: compiled in "
            f"{seconds(compiled.get('compile_s'))}; {_speedup(sp)} against eager — "
            f"{escape(str(sp.get('verdict', '')))}</p>"
        )
    kernels = sorted(compiled.get("kernels", []), key=lambda k: -(k.get("time_s") or 0))
    if kernels:
        parts.append(
            table(
                ("kernel", "time", "share", "nodes", "lines"),
                (
                    (
                        k["name"],
                        seconds(k.get("time_s")),
                        f"{k.get('share') or 0:.1%}",
                        ", ".join(k.get("nodes", [])[:8]),
                        ", ".join(
                            f"{ln['file'].rsplit('/', 1)[-1]}:{ln['line']}"
                            for ln in k.get("lines", [])[:3]
                        ),
                    )
                    for k in kernels[:ROWS]
                ),
                len(kernels) - ROWS,
            )
        )
    parts += [f'<p class="fx-note">{escape(str(n))}</p>' for n in compiled.get("notes", [])]
    return _section("compile", "Compiled kernels", "".join(parts) or "<p>Nothing compiled.</p>")


def signed_size(n: float) -> str:
    """A change in bytes, signed: ``−57.0 MiB``, ``+1.0 KiB``."""
    return ("−" if n < 0 else "+") + size(abs(n))


def _change(before: float | None, after: float | None) -> str:
    """``112.0 MiB → 55.0 MiB (−57.0 MiB, −50.9%)``."""
    if before is None or after is None:
        return f"{size(before)} → {size(after)}"
    share = (
        f", {'−' if after < before else '+'}{abs(after - before) / before:.1%}" if before else ""
    )
    return f"{size(before)} → {size(after)} ({signed_size(after - before)}{share})"


def _goto(name: object) -> str:
    return f"<a href='#' data-fx-goto='{escape(str(name))}'>{escape(str(name))}</a>"


def _memory_change(memory: dict[str, Any]) -> list[str]:
    """Against a baseline: the peak before → after with the change (estimated, and measured
    when both sides were), the parameters, and the values no longer made."""
    before, diff = memory.get("before"), memory.get("difference") or {}
    if not isinstance(before, dict):
        return []
    lines = [
        f"<b>Before → after</b> (against {escape(str(before.get('model', 'the baseline')))}): "
        f"peak {_change(before.get('peak_bytes'), memory.get('peak_bytes'))}"
    ]
    if None not in (before.get("measured_peak_bytes"), memory.get("measured_peak_bytes")):
        lines.append(
            "measured peak " + _change(before["measured_peak_bytes"], memory["measured_peak_bytes"])
        )
    if diff.get("params_bytes"):
        lines.append(f"parameters and buffers {signed_size(diff['params_bytes'])}")
    gone = diff.get("gone") or []
    if gone:
        total = sum(g.get("bytes", 0) for g in gone)
        lines.append(f"no longer made: {len(gone)} value(s), {size(total)} in all")
    return [f'<p class="fx-change">{"; ".join(lines)}.</p>']


def _measured(memory: dict[str, Any]) -> list[str]:
    """The measured peak (a real run) beside the estimate, and what explains the rest."""
    m = memory.get("measured")
    if not isinstance(m, dict) or memory.get("measured_peak_bytes") is None:
        return []
    ratio = m.get("ratio")
    estimated = size(m.get("estimated_peak_bytes", memory.get("peak_bytes")))
    vs = f", {ratio:.3f}× the estimate ({estimated})" if isinstance(ratio, (int, float)) else ""
    head = (
        f"<p><b>Measured peak</b> {size(memory['measured_peak_bytes'])} at node "
        f"{_goto(m.get('peak_node', ''))} on {escape(str(m.get('device', '?')))}{vs}.</p>"
    )
    return [head] + [f'<p class="fx-note">{escape(str(n))}</p>' for n in m.get("notes", [])]


def memory_html(memory: dict[str, Any]) -> str:
    """The memory estimate: against a baseline the peak before → after with the change, the
    peak and where, the measured peak when there is one, parameters, the largest values,
    per module."""
    parts = _memory_change(memory)
    parts.append(
        f"<p><b>Peak</b> {size(memory.get('peak_bytes'))} of activations at node "
        f"{_goto(memory.get('peak_node', ''))} on "
        f"{escape(', '.join(memory.get('inputs', [])))}; parameters "
        f"{size(memory.get('params_bytes'))}, buffers {size(memory.get('buffers_bytes'))}.</p>"
    )
    parts += _measured(memory)
    nodes = sorted(memory.get("nodes", []), key=lambda n: -(n.get("bytes") or 0))
    parts.append("<h3>Largest values (the graph's heat: <i>Heat ▸ memory</i>)</h3>")
    parts.append(
        table(
            ("node", "op", "module", "bytes", "live after"),
            (
                (
                    n["name"],
                    n.get("target", ""),
                    n.get("module", ""),
                    size(n.get("bytes")),
                    size(n.get("live_bytes")),
                )
                for n in nodes[:ROWS]
            ),
            len(nodes) - ROWS,
        )
    )
    modules = sorted(memory.get("modules", []), key=lambda m: -(m.get("peak_live_bytes") or 0))
    if modules:
        parts.append("<h3>Per module</h3>")
        parts.append(
            table(
                ("module", "bytes made", "parameters", "peak while it runs"),
                (
                    (
                        m["path"] or "(top)",
                        size(m.get("bytes")),
                        size(m.get("params_bytes")),
                        size(m.get("peak_live_bytes")),
                    )
                    for m in modules[:ROWS]
                ),
                len(modules) - ROWS,
            )
        )
    return _section("memory", "Memory", "".join(parts))
