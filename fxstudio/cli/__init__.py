"""fxstudio's command line: the GUI, and headless commands over ``fxstudio.core``.

    fxstudio [MODEL] [--screenshot OUT.png]        open the window (on the welcome page without
                                                   a MODEL)
    fxstudio show MODEL [--format table|code|json]  print the captured graph
    fxstudio export MODEL -o OUT [--format F]       save it as .py, forward code, TorchScript,
                                                   .pt2 or ONNX
    fxstudio layout MODEL [--expanded] [--json F]   lay it out as the canvas does
    fxstudio render MODEL -o OUT.svg|.pdf|.png [--expanded] [--collapse MODULE]...
                    [--heat profile|memory|diff]   its picture as the canvas draws it
    fxstudio edit MODEL -e EDIT... [-o S.fxstudio]  edit the graph headless, print its code,
                                                   save the edits as a session
    fxstudio rewrite MODEL --builtin NAME...        rewrite by pattern
    fxstudio profile MODEL [--per-node] [--against BASE]
                                                   run and time it
    fxstudio step MODEL [--until NODE] [--format table|json]
                                                   each node's value, against the eager model
    fxstudio diff LEFT [RIGHT] [--rewrite NAME] [--json OUT] [--html OUT] [--fail-on-change]
                                                   align two graphs, compare their values
                                                   node by node (a CI graph-regression check)
    fxstudio memory MODEL [--train] [--measure] [--against BASE] [--json OUT]
                                                   where the bytes go: each node's, the
                                                   peak and what is live there, per module
    fxstudio compile [--explain] MODEL [--json OUT]
                                                   where Dynamo breaks the model's graph and
                                                   why; the graph compiled, its kernels timed
                                                   and attributed to nodes
    fxstudio report MODEL|SESSION -o OUT.html [--against BASE] [--profile] [--memory]
                                                   one self-contained HTML page of it, for
                                                   any browser, no server

Exit status: 0 on success, 2 for bad input (the message says what to do), 1 for an
fxstudio bug.

The modules: ``common`` (exit codes, the model and run options as parent parsers, numbers
checked where parsed, error reports), ``gui`` (the window's start), and one module a
subcommand, each adding its parser to the subcommands and calling one flow of
``fxstudio.core.flows``: ``show``, ``export``, ``layout``, ``render``, ``edit``, ``rewrite``,
``profile``, ``step``, ``diff``, ``compile``, ``memory``, ``report``.  This module dispatches:
:func:`main` (and :func:`run`, the console scripts' entry point).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fxstudio.cli.common import AddParser

__all__ = ["main", "run"]

#: What the window imports while a ``.pt2``'s first picture is shown (torch among them).
#: On a terminal, without --progress: a command still running after LATE_AFTER_S seconds says
#: on stderr what it does, a whole line at most every LATE_EVERY_S seconds within a stage.
LATE_AFTER_S, LATE_EVERY_S = 3.0, 5.0
GUI_MODULES = ("fxstudio.cli.gui", "fxstudio.qt.app", "fxstudio.qt.window.main_window")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if _first_picture(args):  # drawn, and written (--first-picture) or closed by the user
        return 0
    # (imported here: ``fxstudio FILE.pt2`` draws its first picture before torch is imported)
    from fxstudio.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, report_error
    from fxstudio.core.process import progress

    debug = "--debug" in args
    from fxstudio.core.process.guard import install_interrupt_handler

    install_interrupt_handler()  # Ctrl+C while the model's code runs: say where it was
    if not debug and not {"-h", "--help", "--version"} & set(args):
        from fxstudio.core.process.noise import quiet_libraries

        quiet_libraries()
    told = None
    if "--progress" in args:
        told = progress.StderrProgress()
    elif sys.stderr.isatty():  # a command still running after 3 s says what it does
        told = progress.StderrProgress(every_s=LATE_EVERY_S, after_s=LATE_AFTER_S, overwrite=False)
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


def _first_picture(args: list[str]) -> bool:
    """``fxstudio FILE.pt2 [...]``: its graph drawn from the archive before torch is
    imported (:mod:`fxstudio.qt.startup`), the window's modules imported meanwhile.  True
    when the start stops here: the picture written (``--first-picture OUT.png``) or its
    window closed by the user; False to go on (any other MODEL, or a file not read that way:
    the normal open says why)."""
    if not args or not args[0].endswith(".pt2") or not os.path.isfile(args[0]):
        return False
    if {"-h", "--help", "--version", "--screenshot"} & set(args):
        return False
    png = None
    if "--first-picture" in args:
        at = args.index("--first-picture") + 1
        if at >= len(args):
            return False  # argparse says what is missing
        png = args[at]
    from fxstudio.qt.startup import import_meanwhile, show_first_picture

    window = show_first_picture(args[0], png)
    if window is None:
        return False
    if png is not None:
        return True
    import_meanwhile(GUI_MODULES, window)
    return window.dismissed


def _command(args: list[str]) -> int:
    """Run the subcommand ``args`` name (the window when none is named). A subcommand's
    stdout carries only its data: what the model's code prints goes to stderr."""
    from fxstudio.cli.common import COMMANDS, user_output_to_stderr

    if not args or args[0] not in COMMANDS:
        from fxstudio.cli.gui import cmd_gui, gui_parser

        return cmd_gui(gui_parser().parse_args(args))
    ns = parse_command(args)  # --help goes to stdout
    with user_output_to_stderr():
        return int(ns.command(ns))


def parse_command(args: list[str]) -> argparse.Namespace:
    """``args`` (a subcommand's name, then its arguments) parsed by the ``fxstudio`` parser
    with that subcommand's parser added (only that one: each imports what its options list);
    the namespace's ``command`` is the function that runs it."""
    top = argparse.ArgumentParser(prog="fxstudio")
    commands = top.add_subparsers(dest="subcommand", required=True)
    parser = _add_subcommand(args[0], commands.add_parser)
    ns, extra = top.parse_known_args(args)
    if extra:  # said by the subcommand's parser, as its own parse_args would
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return ns


def _add_subcommand(name: str, add: AddParser) -> argparse.ArgumentParser:
    """Add the parser of the subcommand ``name`` (one of COMMANDS: a module of this package
    each) with ``add``; only that subcommand's module is imported."""
    from fxstudio.cli.common import COMMANDS

    assert name in COMMANDS, name
    module = importlib.import_module(f"fxstudio.cli.{name}")
    return module.add_parser(add)


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
