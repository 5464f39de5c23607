"""fxstudio's command line: the GUI, and headless commands over ``fxstudio.core``.

    fxstudio [MODEL] [--screenshot OUT.png]        open the window (on the welcome page without
                                                   a MODEL)
    fxstudio show MODEL [--format table|code|json]  print the captured graph
    fxstudio export MODEL -o OUT [--format F]       save it as .py, forward code, TorchScript,
                                                   .pt2 or ONNX
    fxstudio layout MODEL [--expanded] [--json F]   lay it out as the canvas does
    fxstudio edit MODEL -e EDIT... [-o S.fxstudio]  edit the graph headless, print its code,
                                                   save the edits as a session
    fxstudio rewrite MODEL --builtin NAME...        rewrite by pattern (fxstudio/cli_rewrite.py)
    fxstudio profile MODEL [--per-node] [--against BASE]
                                                   run and time it (fxstudio/cli_profile.py)
    fxstudio step MODEL [--until NODE] [--format table|json]
                                                   each node's value, against the eager model
                                                   (fxstudio/cli_step.py)

Exit status: 0 on success, 2 for bad input (the message says what to do), 1 for an
fxstudio bug.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import traceback
from collections.abc import Sequence

from fxstudio import __version__

EXIT_OK = 0
EXIT_BUG = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # Ctrl+C, as shells expect
DEFAULT_MODEL = "examples:resnet"
COMMANDS = ("show", "export", "layout", "edit", "rewrite", "profile", "step")

MODEL_HELP = (
    "the model: FILE.py:Name (a class or zero-argument factory), package.module:Name, either "
    "with literal arguments (torchvision.models:resnet18(num_classes=10)), timm:NAME, "
    "hf:NAME (a transformers model type, config folder or cached hub id, with config "
    "overrides: hf:llama(num_hidden_layers=2)), examples:NAME (simple, negrelu, resnet, "
    "transformer, branchy), FILE.pt2 or a SESSION.fxstudio. Opening a model file runs its code."
)


def _add_model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--frontend",
        choices=("auto", "fx", "export"),
        default="auto",
        help="fx: torch.fx.symbolic_trace; export: torch.export; auto (default): export for "
        "hf: models, fx for the rest",
    )
    p.add_argument(
        "--input",
        action="append",
        default=[],
        metavar="SHAPE[:DTYPE]",
        help="an example input, e.g. 1x3x224x224 or 1x16:int64; one per forward "
        "argument (default: the model's example_inputs)",
    )
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed before building (0)")
    p.add_argument(
        "--leaf",
        action="append",
        default=[],
        metavar="MODULE",
        help="keep this submodule (qualified name or class name) as one node (fx)",
    )
    p.add_argument(
        "--train",
        action="store_true",
        help="capture the training-mode graph (default: eval mode, the inference graph)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")


def _gui_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fxstudio",
        description="fxstudio: a desktop editor for PyTorch torch.fx graphs. "
        f"Commands: {', '.join(COMMANDS)} (fxstudio COMMAND --help).",
    )
    p.add_argument(
        "model",
        nargs="?",
        help=MODEL_HELP + f" (default: the welcome page; make run opens {DEFAULT_MODEL})",
    )
    p.add_argument(
        "--screenshot",
        metavar="OUT.png",
        help="render the window once the model is shown, write a PNG and exit",
    )
    p.add_argument("--version", action="version", version=f"fxstudio {__version__}")
    p.add_argument(
        "--autosave",
        type=float,
        metavar="SECONDS",
        default=float(os.environ.get("FXSTUDIO_AUTOSAVE_SECONDS", 60)),
        help="write unsaved work to a recovery file this often (60; 0 turns it off)",
    )
    p.add_argument("--verbose", action="store_true", help="log what fxstudio does to stderr")
    _add_model_options(p)
    return p


def _show_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fxstudio show", description="Print the captured graph.")
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("--format", choices=("table", "code", "json"), default="table")
    _add_model_options(p)
    return p


def _export_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fxstudio export",
        description="Save the captured model. The format follows OUT's suffix (.py: a "
        "standalone module with a .safetensors file beside it; .pt: TorchScript; .pt2: "
        "torch.export; .onnx: ONNX) unless --format says otherwise.",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")
    p.add_argument(
        "--format",
        choices=("py", "code", "torchscript", "pt2", "onnx"),
        help="py: standalone module; code: the forward code only; torchscript; pt2; onnx",
    )
    p.add_argument("--force", action="store_true", help="replace files that already exist")
    p.add_argument(
        "--verify",
        action="store_true",
        help="(py) import the saved module in a fresh process and compare its outputs",
    )
    _add_model_options(p)
    return p


def _layout_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fxstudio layout",
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
    _add_model_options(p)
    return p


def _edit_parser() -> argparse.ArgumentParser:
    from fxstudio.core.edits import COMMANDS as EDITS

    p = argparse.ArgumentParser(
        prog="fxstudio edit",
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
    _add_model_options(p)
    return p


class _Rewrites(argparse.Action):
    """--builtin and --pattern add a rewrite, in order; --replacement completes a pattern."""

    def __call__(self, parser, namespace, value, option_string=None):  # type: ignore[no-untyped-def]
        steps = getattr(namespace, "rewrites", None) or []
        if option_string == "--replacement":
            if not steps or steps[-1][0] != "pattern" or steps[-1][2]:
                parser.error("--replacement must follow its --pattern")
            steps[-1] = ("pattern", steps[-1][1], value)
        else:
            steps.append(("builtin" if option_string == "--builtin" else "pattern", value, ""))
        namespace.rewrites = steps


def _rewrite_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fxstudio rewrite",
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
    _add_model_options(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    from fxstudio.core.guard import install_interrupt_handler

    install_interrupt_handler()  # Ctrl+C while the model's code runs: say where it was
    if not debug and not {"-h", "--help", "--version"} & set(args):
        from fxstudio.core.noise import quiet_libraries

        quiet_libraries()
    try:
        if args and args[0] == "show":
            return cmd_show(_show_parser().parse_args(args[1:]))
        if args and args[0] == "export":
            return cmd_export(_export_parser().parse_args(args[1:]))
        if args and args[0] == "layout":
            return cmd_layout(_layout_parser().parse_args(args[1:]))
        if args and args[0] == "edit":
            return cmd_edit(_edit_parser().parse_args(args[1:]))
        if args and args[0] == "profile":
            from fxstudio.cli_profile import cmd_profile, profile_parser

            return cmd_profile(profile_parser().parse_args(args[1:]))
        if args and args[0] == "step":
            from fxstudio.cli_step import cmd_step, step_parser

            return cmd_step(step_parser().parse_args(args[1:]))
        if args and args[0] == "rewrite":
            from fxstudio.cli_rewrite import cmd_rewrite

            return cmd_rewrite(_rewrite_parser().parse_args(args[1:]))
        return cmd_gui(_gui_parser().parse_args(args))
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE
    except KeyboardInterrupt:  # Ctrl+C outside the model's code
        print("fxstudio: stopped (Ctrl+C)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `fxstudio show ... | head`: the reader left, which is fine
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except Exception as exc:
        return report_error(exc, debug)


def report_error(exc: BaseException, debug: bool) -> int:
    """Print an error for a person; return the exit status (2 for bad input, 1 for a bug)."""
    from fxstudio.core.errors import UserError
    from fxstudio.core.guard import Interrupted

    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    if isinstance(exc, Interrupted):
        print(f"fxstudio: {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if isinstance(exc, UserError):
        print(f"fxstudio: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    print(
        f"fxstudio: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in fxstudio. Run again with --debug for the traceback and report it.",
        file=sys.stderr,
    )
    return EXIT_BUG


def _request(ns: argparse.Namespace):  # -> OpenRequest
    from fxstudio.core.session import OpenRequest

    return OpenRequest(ns.model, ns.frontend, tuple(ns.input), ns.seed, tuple(ns.leaf), ns.train)


def cmd_show(ns: argparse.Namespace) -> int:
    from fxstudio.core.session import open_document

    doc = open_document(_request(ns))
    for note in doc.notes:
        print(f"fxstudio: note: {note}", file=sys.stderr)
    if ns.format == "code":
        sys.stdout.write(doc.code())
    elif ns.format == "json":
        json.dump(doc.to_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        from fxstudio.core.document import NodeRow

        sys.stdout.write(format_table(NodeRow.COLUMNS, [r.values() for r in doc.rows()]))
    return EXIT_OK


def cmd_export(ns: argparse.Namespace) -> int:
    from fxstudio.core.export import export, format_for, verify_standalone
    from fxstudio.core.session import open_document

    fmt = format_for(ns.output, ns.format)  # a bad name fails before the model is built
    doc = open_document(_request(ns))
    result = export(doc, ns.output, fmt, force=ns.force)
    for path in result.paths:
        print(f"wrote {path}")
    for note in result.notes:
        print(f"fxstudio: note: {note}", file=sys.stderr)
    if ns.verify:
        if fmt != "py":
            print("fxstudio: note: --verify checks .py modules only", file=sys.stderr)
            return EXIT_OK
        check = verify_standalone(ns.output, doc)
        print(f"verified: {check}")
        if not check.ok:
            print(
                "fxstudio: error: the saved module does not reproduce the model "
                f"({check.one_thread.describe() if not check.bitwise_equal else check})",
                file=sys.stderr,
            )
            return EXIT_USAGE
    return EXIT_OK


def cmd_layout(ns: argparse.Namespace) -> int:
    from fxstudio.core.files import check_writable
    from fxstudio.core.layout import (
        LayoutEngine,
        layout_summary,
        top_level_groups,
        write_layout_json,
    )
    from fxstudio.core.session import open_document

    if ns.json:
        check_writable(ns.json, ns.force)
    doc = open_document(_request(ns))
    collapsed = set() if ns.expanded else top_level_groups(doc)
    lay = LayoutEngine().layout(doc, collapsed)
    summary = layout_summary(doc, lay)
    print(
        f"{summary['nodes']} nodes, {summary['groups']} groups "
        f"({summary['collapsed']} collapsed, {summary['visible_nodes']} nodes shown), "
        f"{summary['seconds']:.3f} s with {lay.engine} ({lay.dot_runs} dot runs)"
    )
    for note in lay.notes:
        print(f"fxstudio: note: {note}", file=sys.stderr)
    if ns.json:
        write_layout_json(lay, ns.json)
        print(f"wrote {ns.json}")
    return EXIT_OK


def cmd_edit(ns: argparse.Namespace) -> int:
    from fxstudio.core.edits import EditError, run_command
    from fxstudio.core.files import check_writable
    from fxstudio.core.session import SESSION_SUFFIX, open_document
    from fxstudio.core.sessionfile import save_session

    if ns.output:
        if not ns.output.endswith(SESSION_SUFFIX):
            print(f"fxstudio: error: save the session as a {SESSION_SUFFIX} file", file=sys.stderr)
            return EXIT_USAGE
        check_writable(ns.output, ns.force)
    doc = open_document(_request(ns))
    for i, text in enumerate(ns.edit, 1):
        try:
            edit = run_command(doc, text)
        except EditError as exc:
            raise EditError(f"edit {i} ({text}) was refused: {exc}") from exc
        print(f"fxstudio: {edit.label}", file=sys.stderr)
        if doc.shape_problem:
            node, problem = doc.shape_problem
            print(f"fxstudio: note: the shapes no longer fit at {node}: {problem}", file=sys.stderr)
    sys.stdout.write(doc.code())
    if ns.output:
        save_session(doc, ns.output)
        print(f"wrote {ns.output}", file=sys.stderr)
    return EXIT_OK


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], width: int = 60) -> str:
    """A plain aligned text table; cells longer than ``width`` are cut with '...'."""

    def cut(s: str) -> str:
        s = s.replace("\n", " ")
        return s if len(s) <= width else s[: width - 3] + "..."

    cells = [list(header)] + [[cut(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines) + "\n"


def cmd_gui(ns: argparse.Namespace) -> int:
    from fxstudio.qt.app import run_gui

    if ns.verbose:
        logging.basicConfig(level=logging.INFO, format="fxstudio: %(message)s")
    request = _request(ns) if ns.model else None
    return run_gui(request, screenshot=ns.screenshot, debug=ns.debug, autosave_s=ns.autosave)
