"""``--progress``: every command that opens a model says on stderr what runs (loading,
tracing, shapes with their count, layout with its groups); without it stderr stays quiet."""

from fxstudio import cli
from fxstudio.core.process import progress
from fxstudio.core.sessions.documents import open_document
from tests.bench.bench_layout import ROOT

NESTED = f"{ROOT / 'tests' / 'bench' / 'synthetic.py'}:Nested(stages=2, blocks=60)"


def test_progress_says_each_stage_with_its_count(capsys):
    nodes = len(open_document(NESTED, ["2x8"]))
    assert cli.main(["layout", NESTED, "--input", "2x8", "--progress"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"Loading {NESTED}"
    assert "Tracing forward" in err[1]
    assert f"Shapes: {nodes:,}/{nodes:,} nodes" in err  # the last count is always told
    assert any(line.startswith("Laying out: ") and line.endswith(" groups") for line in err)
    assert err.index("Indexing the graph") < max(
        i for i, line in enumerate(err) if line.startswith("Laying out")
    )


def test_without_progress_stderr_is_quiet(capsys):
    assert cli.main(["show", NESTED, "--input", "2x8"]) == 0
    assert capsys.readouterr().err == ""


def test_progress_on_a_terminal_is_one_line_written_over():
    class Terminal:
        def __init__(self):
            self.text = ""

        def isatty(self):
            return True

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    term = Terminal()
    told = progress.StderrProgress(term, every_s=0)
    with progress.listening(told):
        open_document(NESTED, ["2x8"])
    told.finish()
    assert "\n" not in term.text and term.text.endswith("\r\x1b[K")
    assert "\r\x1b[KShapes: " in term.text
