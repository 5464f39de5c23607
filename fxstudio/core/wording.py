"""One message, two surfaces: core's messages name the command line's options (``--input``,
``--frontend export``), which is what the command line shows; the window shows the same
message with each option turned into its place in the window (the Open dialog's Inputs,
Capture with, the Run dock's Device ...) by :func:`for_window`.

The table below is the one place that knows where each option lives in the window; a core
test checks that no message in ``fxstudio/core`` keeps a ``--flag`` once worded for the
window, so a new option in a message needs its row here.

>>> print(for_window("Open it with --input SHAPE (one per forward argument)."))
Open it with the input shapes in the Open dialog's Inputs (one per forward argument).
>>> print(for_window("Try the export frontend (--frontend export)."))
Try the export frontend (Capture with, in the Open dialog).
>>> print(for_window("Run on --device cpu, or on a machine with a GPU."))
Run on cpu (the Run dock's Device), or on a machine with a GPU.

Results said as text line up their columns with :func:`text_table` (``fxstudio show``'s node
table, ``fxstudio step``'s values).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

INPUTS = "the Open dialog's Inputs"
CAPTURE = "Capture with, in the Open dialog"
ARG = r"([\w.:/{}()-]+)"  # an option's value: cpu, export, SHAPE, FILE.py:fn, {name}

# (pattern, the window's words): the specific phrasings first, then each option on its own.
# A pattern may take the option's value as group 1.
WINDOW_WORDS: tuple[tuple[str, str], ...] = (
    # a whole command line (the open that failed, offered with another frontend)
    (r"fxstudio show [^\n]*--frontend (\w+)", rf"the \1 frontend ({CAPTURE})"),
    # an option already named with its window place beside it: keep the window's words
    (r"\(--per-node, or tick ('Per node')\)", r"(tick \1 in the Run dock)"),
    (r"\(--freezing; Freeze weights in the window\)", "(Freeze weights, in the Kernels tab)"),
    (r"\(--module PATH; Run this module in the window\)", "(the Run dock's Run this module)"),
    (r"--frontend (\w+) \(or ([^)]*)\)", r"\2"),
    (r"\(--frontend (\w+)\)", f"({CAPTURE})"),
    # --input, as the messages use it
    (r"the --input shapes and dtypes", f"the input shapes and dtypes in {INPUTS}"),
    (r"\(one --input per (forward )?argument\)", r"(one per \1argument)"),
    (r"one --input per (forward )?argument", rf"one shape per \1argument in {INPUTS}"),
    (r"a smaller --input", f"smaller inputs in {INPUTS}"),
    (r"the same --input", "the same Inputs in the Open dialog"),
    (r"--input ([0-9][\w:]*)", r"\1"),  # an example: 1x3x224x224
    (r"--input SHAPE", f"the input shapes in {INPUTS}"),
    (r"\(--input\)", f"({INPUTS})"),
    (r"--input to give another", f"give others in {INPUTS}"),
    (r"give --input", f"give the input shapes in {INPUTS}"),
    (r"--input", INPUTS),
    # the other options
    (r"--frontend (\w+)", r"Capture with: \1 (Open dialog)"),
    (r"--device (\w+)", r"\1 (the Run dock's Device)"),
    (r"--per-node", "Per node (Run dock)"),
    (r"without --compile", "with the Run dock's Run as: eager"),
    (r"--compile", "torch.compile (the Run dock's Run as)"),
    (r"\s*\(fxstudio --train\)", ""),
    (r"without --train", "without the training graph"),
    (r"--freezing", "Freeze weights (Kernels tab)"),
    (r"\(--measure\)", "(tick Measure in the Memory dock)"),
    (r"without --measure", "with Measure unticked in the Memory dock"),
    (r"name it \(--against BASE\)", "open it beside this one in the Compare window"),
    (r"\(opened with --no-weights\)", "(opened with Structure only)"),
    (r"\(without --no-weights\)", "(untick Structure only in the Open dialog)"),
    (r"--no-weights", "Structure only (Open dialog)"),
    (r"--mode " + ARG, r"mode \1"),
    (r"pass --format " + r"\(", "choose the file type in the Save dialog ("),
    (r"\(--format py, --format code\)", "(File ▸ Save as Python module…, Save forward code…)"),
    (r"\(--format code\)", "(File ▸ Save forward code…)"),
    (r", or pass --force to replace it", ", or replace it when the Save dialog asks"),
    (r"\(--replacement " + ARG + r"\)", "(in the Patterns dock's replacement box)"),
    (
        r"Run again with --debug for the traceback and report it\.",
        "Please report it, with the system info from Help ▸ About fxstudio.",
    ),
)
_RULES = tuple((re.compile(p), words) for p, words in WINDOW_WORDS)
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")


def for_window(text: str) -> str:
    """``text`` as the window shows it: each command-line option named in it turned into
    the place in the window where the user gives that (see :data:`WINDOW_WORDS`)."""
    if "--" not in text:
        return text
    for pattern, words in _RULES:
        text = pattern.sub(words, text)
    return text


def flags_in(text: str) -> list[str]:
    """The command-line options ``text`` names (``--input`` ...)."""
    return FLAG.findall(text)


def text_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int | None = 60,
    rule: bool = True,
) -> list[str]:
    """``rows`` under ``header`` as aligned lines (two spaces between columns), a line of
    dashes under the header when ``rule``; a cell longer than ``width`` is cut with '...'.

    >>> for line in text_table(("node", "op"), [("x", "placeholder"), ("relu", "call_module")]):
    ...     print(line)
    node  op
    ----  -----------
    x     placeholder
    relu  call_module
    """

    def cut(s: str) -> str:
        s = s.replace("\n", " ")
        return s if width is None or len(s) <= width else s[: width - 3] + "..."

    cells = [list(header)] + [[cut(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    if rule:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return lines
