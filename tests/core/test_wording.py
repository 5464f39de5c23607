"""The window's words for core's messages: no command-line option is left in them."""

import ast
import re
from pathlib import Path

import pytest

import fxstudio.core
from fxstudio.core.wording import flags_in, for_window

CORE = Path(fxstudio.core.__file__).parent
# strings with options that are no message: nvidia-smi's own arguments, and the header
# written into a saved pattern file (a command line to run it with)
NOT_MESSAGES = {"runtime/environment.py", "patterns/patternfiles.py", "wording.py"}
EITHER = re.compile(r"\(([^(),]+), or ([^()]+)\)")  # "(A, or B)"


def _strings(tree: ast.AST):
    """The string literals of a module, f-strings with their values as VALUE; no docstrings."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    parts = {
        id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            yield "".join(v.value if isinstance(v, ast.Constant) else "VALUE" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docs and id(node) not in parts:
                yield node.value


def core_messages() -> list[tuple[str, str]]:
    found = []
    for path in sorted(CORE.rglob("*.py")):
        name = path.relative_to(CORE).as_posix()
        if name in NOT_MESSAGES:
            continue
        for text in _strings(ast.parse(path.read_text(encoding="utf-8"))):
            if flags_in(text):
                found.append((name, text))
    return found


def test_core_messages_name_options():
    # (what the test below covers: the command line's messages do name them)
    assert len(core_messages()) > 20


@pytest.mark.parametrize(("where", "text"), core_messages())
def test_every_option_in_a_core_message_has_a_place_in_the_window(where, text):
    worded = for_window(text)
    assert not flags_in(worded), f"{where}: {worded!r}"
    # and no place named twice: "(--input, or the Open dialog's inputs)" read "(the Open
    # dialog's Inputs, or the Open dialog's inputs)" in the Memory dock (#54)
    for one, other in EITHER.findall(worded):
        assert one.strip().lower() != other.strip().lower(), f"{where}: {worded!r}"


@pytest.mark.parametrize(
    ("cli", "window"),
    [
        (
            "The export frontend runs the model, so it needs example inputs. Pass --input SHAPE "
            "(one per forward argument) or define example_inputs() beside the model.",
            "The export frontend runs the model, so it needs example inputs. Pass the input "
            "shapes in the Open dialog's Inputs (one per forward argument) or define "
            "example_inputs() beside the model.",
        ),
        (
            "give others: one --input per argument, in order (e.g. --input 1x3x224x224, "
            "--input 1x16:int64).",
            "give others: one shape per argument in the Open dialog's Inputs, in order (e.g. "
            "1x3x224x224, 1x16:int64).",
        ),
        (
            "Try the export frontend (--frontend export), or make it a leaf module.",
            "Try the export frontend (Capture with, in the Open dialog), or make it a leaf module.",
        ),
        (
            "Open it with --frontend fx (or the fx frontend in the Open dialog) and rewrite again.",
            "Open it with the fx frontend in the Open dialog and rewrite again.",
        ),
        (
            "There is no CUDA device here. Run on --device cpu, or on a machine with a GPU.",
            "There is no CUDA device here. Run on cpu (the Run dock's Device), or on a machine "
            "with a GPU.",
        ),
        (
            "profile per node (--per-node, or tick 'Per node') and run again.",
            "profile per node (tick 'Per node' in the Run dock) and run again.",
        ),
        (
            "open it with fxstudio show model.py:Net --input 1x3 --frontend export",
            "open it with the export frontend (Capture with, in the Open dialog)",
        ),
    ],
)
def test_options_become_their_place_in_the_window(cli, window):
    assert for_window(cli) == window


def test_a_message_without_options_is_as_it_was():
    text = "The graph has 3 nodes -- and a dash; x--y stays."
    assert for_window(text) == text
    assert flags_in("x--y and a -- b") == []
