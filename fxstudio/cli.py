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
    fxstudio diff LEFT [RIGHT] [--rewrite NAME] [--json OUT]
                                                   align two graphs, compare their values
                                                   node by node (fxstudio/cli_diff.py)
    fxstudio compile [--explain] MODEL [--json OUT]
                                                   where Dynamo breaks the model's graph and
                                                   why; the graph compiled, its kernels timed
                                                   and attributed to nodes (fxstudio/cli_compile.py)

Exit status: 0 on success, 2 for bad input (the message says what to do), 1 for an
fxstudio bug.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import Callable, Sequence

from fxstudio import __version__
from fxstudio.cli_common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    MODEL_HELP,
    add_model_options,
    data_out,
    format_table,
    number,
    report_error,
    request_from,
    user_output_to_stderr,
)
from fxstudio.core.process import progress

DEFAULT_MODEL = "examples:resnet"
COMMANDS = ("show", "export", "layout", "edit", "rewrite", "profile", "step", "diff", "compile")


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
        type=number(float, 0, unit="seconds"),
        metavar="SECONDS",
        default=float(os.environ.get("FXSTUDIO_AUTOSAVE_SECONDS", 60)),
        help="write unsaved work to a recovery file this often (60; 0 turns it off)",
    )
    p.add_argument("--verbose", action="store_true", help="log what fxstudio does to stderr")
    add_model_options(p)
    return p


def _show_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fxstudio show", description="Print the captured graph.")
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("--format", choices=("table", "code", "json"), default="table")
    add_model_options(p)
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
    add_model_options(p)
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
    add_model_options(p)
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
    add_model_options(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    from fxstudio.core.process.guard import install_interrupt_handler

    install_interrupt_handler()  # Ctrl+C while the model's code runs: say where it was
    if not debug and not {"-h", "--help", "--version"} & set(args):
        from fxstudio.core.process.noise import quiet_libraries

        quiet_libraries()
    told = progress.StderrProgress() if "--progress" in args else None
    try:
        with progress.listening(told) if told is not None else contextlib.nullcontext():
            return _command(args)
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
    finally:
        if told is not None:
            told.finish()


def _command(args: list[str]) -> int:
    """Run the subcommand ``args`` name (the window when none is named). A subcommand's
    stdout carries only its data: what the model's code prints goes to stderr."""
    name, rest = (args[0], args[1:]) if args else ("", [])
    if name not in COMMANDS:
        return cmd_gui(_gui_parser().parse_args(args))
    parser, command = _subcommand(name)
    ns = parser.parse_args(rest)  # --help goes to stdout
    with user_output_to_stderr():
        return command(ns)


def _subcommand(name: str) -> tuple[argparse.ArgumentParser, Callable[[argparse.Namespace], int]]:
    """The parser and the function of the subcommand ``name`` (one of COMMANDS)."""
    if name == "profile":
        from fxstudio.cli_profile import cmd_profile, profile_parser

        return profile_parser(), cmd_profile
    if name == "step":
        from fxstudio.cli_step import cmd_step, step_parser

        return step_parser(), cmd_step
    if name == "compile":
        from fxstudio.cli_compile import cmd_compile, compile_parser

        return compile_parser(), cmd_compile
    if name == "diff":
        from fxstudio.cli_diff import cmd_diff, diff_parser

        return diff_parser(), cmd_diff
    if name == "rewrite":
        from fxstudio.cli_rewrite import cmd_rewrite, rewrite_parser

        return rewrite_parser(), cmd_rewrite
    own = {
        "show": (_show_parser, cmd_show),
        "export": (_export_parser, cmd_export),
        "layout": (_layout_parser, cmd_layout),
        "edit": (_edit_parser, cmd_edit),
    }
    make, command = own[name]
    return make(), command


def run() -> int:
    """The console scripts' entry point: :func:`main`, then the process ends even when the
    model's code left a thread running (Python would otherwise wait for it forever)."""
    code = main()
    lingering = [
        t
        for t in threading.enumerate()
        if t is not threading.main_thread() and t.is_alive() and not t.daemon
    ]
    if lingering:
        names = ", ".join(t.name for t in lingering[:3])
        logging.getLogger("fxstudio").info("not waiting for threads left running: %s", names)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


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

        out.write(format_table(NodeRow.COLUMNS, [r.values() for r in doc.rows()]))
    return EXIT_OK


def cmd_export(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import export, open_document
    from fxstudio.core.saving.export import format_for, verify_standalone

    fmt = format_for(ns.output, ns.format)  # a bad name fails before the model is built
    doc = open_document(request_from(ns))
    result = export(doc, ns.output, fmt, force=ns.force)
    for path in result.paths:
        print(f"wrote {path}", file=data_out())
    for note in result.notes:
        print(f"fxstudio: note: {note}", file=sys.stderr)
    if ns.verify:
        if fmt != "py":
            print("fxstudio: note: --verify checks .py modules only", file=sys.stderr)
            return EXIT_OK
        check = verify_standalone(ns.output, doc)
        print(f"verified: {check}", file=data_out())
        if not check.ok:
            print(
                "fxstudio: error: the saved module does not reproduce the model "
                f"({check.one_thread.describe() if not check.bitwise_equal else check})",
                file=sys.stderr,
            )
            return EXIT_USAGE
    return EXIT_OK


def cmd_layout(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import LayoutRequest, layout_flow, open_document
    from fxstudio.core.saving.files import check_writable

    if ns.json:
        check_writable(ns.json, ns.force)
    doc = open_document(request_from(ns))
    result = layout_flow(LayoutRequest(doc, expanded=ns.expanded))
    print(result.describe(), file=data_out())
    for note in result.notes:
        print(f"fxstudio: note: {note}", file=sys.stderr)
    if ns.json:
        result.write(ns.json)
        print(f"wrote {ns.json}", file=data_out())
    return EXIT_OK


def cmd_edit(ns: argparse.Namespace) -> int:
    from fxstudio.core.edits import EditError, run_command
    from fxstudio.core.flows import open_document
    from fxstudio.core.model.request import SESSION_SUFFIX
    from fxstudio.core.saving.files import check_writable
    from fxstudio.core.saving.sessionfile import save_session

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


def cmd_gui(ns: argparse.Namespace) -> int:
    from fxstudio.qt.app import run_gui

    if ns.verbose:
        logging.basicConfig(level=logging.INFO, format="fxstudio: %(message)s")
    request = request_from(ns) if ns.model else None
    return run_gui(request, screenshot=ns.screenshot, debug=ns.debug, autosave_s=ns.autosave)
