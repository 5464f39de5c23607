"""The Run dock's *Summary*: what :meth:`Profile.describe` says (the text ``fxstudio profile``
prints), as paragraphs that wrap at the dock's width instead of lines a terminal keeps.
The per-node table is not repeated here: the *Nodes* and *Top* tabs beside it show it.
"""

from __future__ import annotations

from html import escape

from fxstudio.core.flows import Profile
from fxstudio.core.wording import for_window


def _paragraph(line: str, colour: str | None = None) -> str:
    style = f' style="color: {colour}"' if colour else ""
    return f"<p{style}>{escape(line.strip())}</p>"


def _coloured(text: str, bad: str) -> str:
    if any(word in text for word in ("NOISY", "INVALID")):
        return f'<span style="color: {bad}">{escape(text)}</span>'
    return escape(text)


def summary_html(result: Profile, bad: str = "#b91c1c") -> str:
    """``result`` as HTML; warnings (noisy, invalid, profiler cost) in ``bad``; options of
    the command line named as the window's places."""
    after = result.after
    lines = after.describe().splitlines()
    node_lines = after.nodes.describe().splitlines() if after.nodes is not None else []
    whole = lines[: len(lines) - len(node_lines)]
    head, *details = whole[0].split(" · ")
    parts = [f"<p><b>{escape(head)}</b>" + "".join(f" · {escape(d)}" for d in details) + "</p>"]
    for line in whole[1:]:
        items = [item.strip() for item in line.split("; ")]
        parts.append("<p>" + "<br>".join(_coloured(item, bad) for item in items) + "</p>")
    nodes = after.nodes
    if nodes is not None:
        parts.append(_paragraph(node_lines[0]))
        parts.append(_paragraph(node_lines[1]))
        slowest = ", ".join(f"{n.name} {n.share:.1%}" for n in nodes.top(5))
        parts.append(
            f"<p>Slowest nodes: {escape(slowest)} (all of them in <i>Nodes</i>, the top 12 "
            "nodes and modules in <i>Top</i>)</p>"
        )
        parts += [_paragraph(f"WARNING: {w}", bad) for w in nodes.warnings()]
    c = result.comparison
    if c is not None:
        first, *rest = c.describe().splitlines()
        parts.append(f"<p><b>{escape(first)}</b></p>")
        parts += [_paragraph(line) for line in rest]
    return for_window("\n".join(parts))
