"""The Python console's session over a document (Qt-free; the console dock shows it).

The namespace binds ``doc``, ``gm``, ``graph`` (rebound before every statement, so they are
always the document's), ``edits`` (fxstudio's edits on this document: each call is one undo
step, like the same edit made in the window), ``torch``, ``nn``, ``fx`` and ``operator``.

A statement that changes ``gm.graph`` directly -- ``node.target = operator.mul``,
``graph.erase_node(n)`` -- is noticed (the graph's fingerprint differs from the one after the
last ``edits.*`` call) and becomes one edit, *Console edit*, checked like every edit
(``lint()``, the targets and argument counts, ``recompile()``): valid, it is undoable and
recorded (a session replays the statement); invalid, the graph is put back and the refusal
says why.  The console never leaves a second source of truth behind.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:negrelu")
    >>> c = ConsoleSession(doc)
    >>> c.push("[n.name for n in graph.nodes][:3]").output
    "['x', 'y', 'z']\\n"
    >>> r = c.push("next(n for n in graph.nodes if n.name == 'add').target = operator.sub")
    >>> [e.label for e in r.edits], "neg - relu" in doc.code()
    (['Console edit'], True)
    >>> r.edits[0].undo(); "neg + relu" in doc.code()
    True
"""

from __future__ import annotations

import code
import contextlib
import io
import operator
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx
from torch import nn

from fxstudio.core.edits.engine import Edit, commit, validate
from fxstudio.core.edits.language import run_command
from fxstudio.core.edits.registry import EDIT_KINDS
from fxstudio.core.edits.steps import Ref, Step
from fxstudio.core.errors import EditError
from fxstudio.core.graph.document import ChangeKind, GraphDocument, UndoState
from fxstudio.core.results import Json

#: The edits the console's ``edits`` offers: the user-level edits of ``fxstudio.core.edits``
#: (each takes the document first, as in core).
EDIT_FUNCTIONS = tuple(sorted(EDIT_KINDS))


def fingerprint(graph: fx.Graph) -> tuple[Any, ...]:
    """What an edit can change about a graph, comparable before and after a statement."""
    return tuple((n.name, n.op, repr(n.target), repr(n.args), repr(n.kwargs)) for n in graph.nodes)


@dataclass
class ReplaceGraph(Step):
    """The graph as a statement left it, in place of the one before (both undo states)."""

    before: UndoState
    after: UndoState

    def apply(self, doc: GraphDocument) -> None:
        doc.put_back(self.after)

    def inverse(self) -> Step:
        return ReplaceGraph(self.after, self.before)

    def touched(self) -> set[str]:
        return {n.name for n in self.after.graph.nodes}


def adopt(doc: GraphDocument, before: UndoState, source: str) -> Edit | None:
    """Turn a direct change of ``doc``'s graph since ``before`` into one checked edit (None
    when nothing changed).  Refused (``EditError``), the graph is as it was ``before``."""
    if fingerprint(before.graph) == fingerprint(doc.graph):
        return None
    try:  # checked where it stands first: a graph with a cycle cannot even be copied
        validate(doc, {n.name for n in doc.graph.nodes})
    except EditError as exc:
        doc.put_back(before)
        doc.graph_module.recompile()
        doc.emit(ChangeKind.GRAPH_REPLACED)
        raise EditError(f"The console's change was refused and undone: {exc}") from exc
    after = doc.undo_state()
    doc.put_back(before)  # the edit starts from the graph as it was, like every edit
    try:
        return commit(
            doc,
            "Console edit",
            [ReplaceGraph(before, after)],
            ChangeKind.GRAPH_REPLACED,
            {"edit": "console", "code": source},
        )
    except EditError as exc:
        doc.graph_module.recompile()
        doc.emit(ChangeKind.GRAPH_REPLACED)
        raise EditError(f"The console's change was refused and undone: {exc}") from exc


class _Edits:
    """``edits`` in the console: fxstudio's edits on the document, each one undo step."""

    def __init__(self, session: ConsoleSession) -> None:
        self._session = session
        self.Ref = Ref

    def __getattr__(self, name: str) -> Callable[..., Edit]:
        if name not in EDIT_FUNCTIONS and name != "run":
            raise AttributeError(f"edits has no {name!r}; it has: {', '.join(EDIT_FUNCTIONS)}, run")
        session = self._session
        fn = run_command if name == "run" else EDIT_KINDS[name].function

        def call(*args: Any, **kwargs: Any) -> Edit:
            session.catch_up()  # a direct change made earlier in the statement first
            edit = fn(session.doc, *args, **kwargs)
            session.made.append(edit)
            session.mark()
            return edit

        call.__doc__ = fn.__doc__
        return call

    def __dir__(self) -> list[str]:
        return [*EDIT_FUNCTIONS, "run", "Ref"]

    def __repr__(self) -> str:
        return f"<fxstudio edits: {', '.join(EDIT_FUNCTIONS)}, run('text command')>"


@dataclass
class Result:
    more: bool  # the statement goes on (a block): give the next line
    output: str
    edits: list[Edit] = field(default_factory=list)  # made, in order (push each as a step)
    refused: str = ""  # a direct change that was undone, and why


class _Console(code.InteractiveConsole):
    def __init__(self, session: ConsoleSession, namespace: dict[str, Any]) -> None:
        super().__init__(namespace, filename="<console>")
        self.session = session

    def runsource(self, source: str, filename: str = "<console>", symbol: str = "single") -> bool:
        self.session.source = source
        return super().runsource(source, filename, symbol)

    def runcode(self, code_obj: Any) -> None:
        self.session.begin()
        super().runcode(code_obj)

    # The base class hands errors to sys.excepthook when one is installed (a GUI's crash
    # handler): the console's errors are the user's, and are printed in the console.
    def showtraceback(self) -> None:
        kind, value, tb = sys.exc_info()
        self.write("".join(traceback.format_exception(kind, value, tb.tb_next if tb else None)))

    def showsyntaxerror(self, filename: str | None = None, **kwargs: Any) -> None:
        kind, value, _tb = sys.exc_info()
        self.write("".join(traceback.format_exception_only(kind, value)))


class ConsoleSession:
    def __init__(self, doc: GraphDocument) -> None:
        self.doc = doc
        self.source = ""
        self.made: list[Edit] = []
        self._before: UndoState | None = None
        self._print = ""
        self.namespace: dict[str, Any] = {
            "doc": doc,
            "edits": _Edits(self),
            "torch": torch,
            "nn": nn,
            "fx": fx,
            "operator": operator,
        }
        self._bind()
        self.console = _Console(self, self.namespace)

    def _bind(self) -> None:
        self.namespace["gm"] = self.doc.graph_module
        self.namespace["graph"] = self.doc.graph

    def begin(self) -> None:
        self.made = []
        self.mark()

    def mark(self) -> None:
        """The graph as it is now is what the document knows (after an edit, or at start)."""
        self._before = self.doc.undo_state()

    def catch_up(self) -> None:
        """Adopt a direct change made since the last mark (raises EditError if refused)."""
        if self._before is not None:
            edit = adopt(self.doc, self._before, self.source)
            if edit is not None:
                self.made.append(edit)
            self.mark()

    def push(self, line: str) -> Result:
        """Run one line as the interactive interpreter would."""
        self._bind()
        out = io.StringIO()
        refused = ""
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            more = self.console.push(line)
        if not more and self._before is not None:
            try:
                self.catch_up()
            except EditError as exc:
                refused = str(exc)
                out.write(refused + "\n")
            self._before = None
        self._bind()
        made, self.made = (self.made, []) if not more else ([], self.made)
        return Result(more, out.getvalue(), made, refused)


def replay_console(doc: GraphDocument, record: Json) -> list[Edit]:
    """A session's console edit, made again: the statement run on the document; returns the
    edits it made."""
    session = ConsoleSession(doc)
    session.source = record["code"]
    session.begin()
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(record["code"], "<console>", "exec"), session.namespace)  # noqa: S102
    session.catch_up()
    return session.made
