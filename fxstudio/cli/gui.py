"""``fxstudio [MODEL]``: the window, started from the command line (on the welcome page
without a MODEL); ``--screenshot`` renders it once and exits."""

from __future__ import annotations

import argparse
import logging
import os

from fxstudio import __version__
from fxstudio.cli.common import COMMANDS, MODEL_HELP, model_options, number, request_from

DEFAULT_MODEL = "examples:resnet"


def gui_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fxstudio",
        parents=[model_options()],
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
    p.add_argument(
        "--first-picture",
        metavar="OUT.png",
        help="write a PNG of the first picture drawn and exit: a .pt2's graph read from its "
        "archive before torch is imported (else as --screenshot); how soon a start shows it",
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
    return p


def cmd_gui(ns: argparse.Namespace) -> int:
    from fxstudio.qt.app import run_gui

    if ns.verbose:
        logging.basicConfig(level=logging.INFO, format="fxstudio: %(message)s")
    request = request_from(ns) if ns.model else None
    shot = ns.screenshot or ns.first_picture  # (a first picture not drawn from the archive)
    return run_gui(request, screenshot=shot, debug=ns.debug, autosave_s=ns.autosave)
