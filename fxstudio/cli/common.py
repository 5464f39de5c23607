"""What every ``fxstudio`` command shares: the model options and the run options (parent
parsers each command's parser names in ``parents=[...]``) and the request they make, numbers
checked where they are parsed, exit statuses and how errors are printed
(:func:`fxstudio.core.process.guard.report_error`).

Only the modules of :mod:`fxstudio.cli` import this module; it imports ``fxstudio.core`` only.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.process.guard import (
    EXIT_BUG,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    report_error,
)

__all__ = [
    "COMMANDS",
    "EXIT_BUG",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "MODEL_HELP",
    "AddParser",
    "add_overlay_outputs",
    "data_out",
    "model_options",
    "number",
    "report_error",
    "request_from",
    "run_options",
]

#: How a command adds its parser to the ``fxstudio`` parser's subcommands: the subparsers'
#: ``add_parser`` (its name, then ArgumentParser's keywords).
AddParser = Callable[..., argparse.ArgumentParser]

#: The subcommands, as ``fxstudio COMMAND`` names them (one module of :mod:`fxstudio.cli` each).
COMMANDS = (
    "show",
    "export",
    "layout",
    "render",
    "edit",
    "rewrite",
    "profile",
    "step",
    "diff",
    "compile",
    "memory",
    "report",
)

MODEL_HELP = (
    "the model: FILE.py:Name (a class or zero-argument factory), package.module:Name, either "
    "with literal arguments (torchvision.models:resnet18(num_classes=10)), timm:NAME, "
    "hf:NAME (a transformers model type, config folder or cached hub id, with config "
    "overrides: hf:llama(num_hidden_layers=2)), examples:NAME (simple, negrelu, resnet, "
    "transformer, branchy), FILE.pt2 or a SESSION.fxstudio. Opening a model file runs its code."
)


_DATA: list[TextIO] = []  # the streams commands write their data to, innermost last


def data_out() -> TextIO:
    """Where a command writes what it prints for the user or a program to read (a table,
    code, JSON): stdout, also while :func:`user_output_to_stderr` sends everything else there
    to stderr."""
    return _DATA[-1] if _DATA else sys.stdout


@contextlib.contextmanager
def user_output_to_stderr() -> Iterator[TextIO]:
    """Inside, what the model's code prints goes to stderr -- Python's ``print`` and writes
    to file descriptor 1 from C -- so that stdout carries only the command's data, written
    to :func:`data_out` (which this yields): ``fxstudio show M --format json | jq`` parses
    whatever the model prints while it is imported, built and run.

    >>> with user_output_to_stderr() as out:
    ...     print("the model's chatter")  # to stderr
    ...     print("data", file=data_out())
    data
    """
    out, err = sys.stdout, sys.stderr
    if out is None or err is None:  # no console (pythonw)
        yield data_out()
        return
    out_fd, err_fd = _fileno(out), _fileno(err)
    if out_fd is None or err_fd is None or out_fd == err_fd:
        data: TextIO = out  # a stream in memory (a test's capture): swap the Python-level one
        saved = None
    else:
        out.flush()
        saved = os.dup(out_fd)
        data = open(  # noqa: SIM115 -- closed below, after the descriptor is put back
            saved,
            "w",
            buffering=1 if out.line_buffering else -1,
            encoding=out.encoding,
            errors=out.errors,
        )
        os.dup2(err_fd, out_fd)
    _DATA.append(data)
    sys.stdout = err
    broken: BrokenPipeError | None = None
    try:
        yield data
    finally:
        sys.stdout = out
        _DATA.remove(data)
        if saved is not None and out_fd is not None:
            broken = _put_back(data, saved, out_fd, err)
    if broken is not None:  # the reader left before the last data was written
        raise broken


def _fileno(stream: Any) -> int | None:
    try:
        return int(stream.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None


def _put_back(data: TextIO, saved: int, out_fd: int, err: TextIO) -> BrokenPipeError | None:
    """Flush the data, give file descriptor ``out_fd`` its stdout back, close the copy."""
    broken = None
    try:
        data.flush()
    except BrokenPipeError as exc:
        broken = exc
    with contextlib.suppress(OSError, ValueError):
        err.flush()
    os.dup2(saved, out_fd)
    if broken is not None:  # what is left in the buffer goes nowhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, saved)
        os.close(devnull)
    data.close()
    return broken


def number(
    kind: type[int] | type[float],
    low: float,
    high: float | None = None,
    unit: str = "",
    above: bool = False,
) -> Callable[[str], float]:
    """An argparse ``type`` that reads a number and refuses one out of range, saying the
    range: ``number(int, 1)`` is 1 or more, ``number(float, 0, above=True)`` is above 0.

    >>> number(int, 1)("4")
    4
    >>> number(float, 0, above=True, unit="seconds")("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: -1 is out of range: give a number of seconds above 0.
    """
    if above:
        allowed = f"above {low:g}"
    elif high is None:
        allowed = f"{low:g} or more"
    else:
        allowed = f"from {low:g} to {high:g}"
    what = "a whole number" if kind is int else "a number"
    what += f" of {unit}" if unit else ""

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"'{text}' is not {what}: give {what} {allowed}."
            ) from None
        if (value <= low if above else value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{text} is out of range: give {what} {allowed}.")
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages
    return parse


def run_options(min_time_help: str) -> argparse.ArgumentParser:
    """A parent parser of the run options, ``--device``, ``--threads`` and ``--min-time``:
    where and how long a model is timed (``min_time_help`` says it for the command)."""
    from fxstudio.core.runtime.devices import cpu_threads

    parent = argparse.ArgumentParser(add_help=False)
    p = parent.add_argument_group("run options")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or mps (default cpu)")
    p.add_argument(
        "--threads",
        type=number(int, 1, cpu_threads()),
        metavar="N",
        help="CPU threads (default: as torch has)",
    )
    p.add_argument(
        "--min-time",
        type=number(float, 0, unit="seconds", above=True),
        default=1.0,
        metavar="S",
        help=min_time_help,
    )
    return parent


def model_options() -> argparse.ArgumentParser:
    """A parent parser of the model options: ``--frontend``, ``--input``, ``--seed``,
    ``--leaf``, ``--train``, ``--no-weights`` (what :func:`request_from` reads), ``--debug``,
    ``--progress``."""
    parent = argparse.ArgumentParser(add_help=False)
    p = parent.add_argument_group("model options")
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
    p.add_argument(
        "--seed",
        type=number(int, 0, 2**64 - 1),
        default=0,
        help="torch.manual_seed before building (0)",
    )
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
    p.add_argument(
        "--no-weights",
        dest="weights",
        action="store_false",
        help="structure only: build the model on the meta device -- every shape, no weights, "
        "any size (an hf: model too large for memory opens so by itself)",
    )
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument(
        "--progress",
        action="store_true",
        help="say on stderr what runs (loading, tracing, shapes, layout) and how far it is (on a "
        "terminal, a command still running after 3 s says so by itself, a line every 5 s)",
    )
    return parent


def request_from(ns: argparse.Namespace) -> OpenRequest:
    """What the model options ask to open."""
    return OpenRequest(
        ns.model, ns.frontend, tuple(ns.input), ns.seed, tuple(ns.leaf), ns.train, ns.weights
    )


def add_overlay_outputs(p: argparse.ArgumentParser, what: str) -> None:
    """``--model-explorer OUT.json`` and ``--netron OUT.json``: ``what`` for each node, as
    Model Explorer node data and as Netron metrics (node ids: the FX node names)."""
    p.add_argument(
        "--model-explorer", metavar="OUT.json", help=f"write {what} as Model Explorer node data"
    )
    p.add_argument("--netron", metavar="OUT.json", help=f"write {what} as Netron metrics")


def overlay_outputs(ns: argparse.Namespace) -> list[str]:
    """The per-node data files asked for (to check before any work)."""
    return [path for path in (ns.model_explorer, ns.netron) if path]


def write_overlays(ns: argparse.Namespace, overlay: Any) -> None:
    """Write ``overlay`` (a :class:`~fxstudio.core.compare.overlay.Overlay`) where asked."""
    from fxstudio.core.flows.diff import write_model_explorer, write_netron

    for path, write in ((ns.model_explorer, write_model_explorer), (ns.netron, write_netron)):
        if path:
            write(overlay, path)
            print(f"wrote {path}", file=sys.stderr)
