"""The edit set, declared once: each kind of edit's function (declared where it is written,
in :mod:`~fxstudio.core.edits.user`), the record a session stores of it (the function's own
parameters, by name), and its text form (declared in :mod:`~fxstudio.core.edits.language`).
The replay (:mod:`fxstudio.core.sessions.replay`), the typed-edit language, the console and the list
of edits all read :data:`EDIT_KINDS`; a new edit is a function with :func:`edit_kind` (and,
to be typed, a :func:`text_form`).

Example:
    >>> from fxstudio.core import edits  # declares them
    >>> kind = EDIT_KINDS["add_input"]
    >>> kind.fields
    ('name', 'type', 'default')
    >>> kind.text.syntax if kind.text else None
    'input NAME[:TYPE] [DEFAULT]'
    >>> kind.record(name="scale", type="float")
    {'edit': 'add_input', 'name': 'scale', 'type': 'float'}
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.results import Json

F = TypeVar("F", bound=Callable[..., Any])

#: How a text form makes its edit: ``parse(doc, text, rest)``, ``rest`` the words after the
#: verb (at most three, the last one holding the rest of the line); it returns the
#: :class:`~fxstudio.core.edits.engine.Edit` made.  The registry only declares the edit set
#: (names, records, text forms) and calls nothing of the engine, so it sits below it.
Parse = Callable[[GraphDocument, str, list[str]], Any]

#: The width of the syntax column in the list of edits.
SYNTAX_WIDTH = 34


@dataclass(frozen=True)
class TextForm:
    """An edit written as a line of text: ``rename NODE NEW``."""

    syntax: str  # the verb, then what follows it
    about: tuple[str, ...]  # what it does, a line or a few
    words: int  # how many words must follow the verb
    parse: Parse

    @property
    def verb(self) -> str:
        return self.syntax.split()[0]

    def usage(self) -> str:
        """Its line (or lines) in the list of edits."""
        rest = "".join(f"\n{'':<{SYNTAX_WIDTH}}{line}" for line in self.about[1:])
        return f"{self.syntax:<{SYNTAX_WIDTH}}{self.about[0]}{rest}"


@dataclass(frozen=True)
class EditKind:
    """One kind of edit: its function, the record a session stores of it, its text form."""

    name: str  # the record's "edit"
    function: Callable[..., Any]  # (doc, ...) -> the Edit made
    #: the function's parameters (after the document) and the record's keys for them
    stored: tuple[tuple[str, str], ...]
    text: TextForm | None = field(default=None)

    @property
    def fields(self) -> tuple[str, ...]:
        """What a record of this edit may hold (besides ``"edit"``)."""
        return tuple(key for _, key in self.stored)

    def record(self, **values: Any) -> dict[str, Any]:
        """The record of one edit of this kind (what the session file stores); its keys
        are this kind's :attr:`fields`."""
        unknown = set(values) - set(self.fields)
        if unknown:
            raise TypeError(f"A '{self.name}' record has no {', '.join(sorted(unknown))}.")
        return {"edit": self.name, **values}

    def make_again(self, doc: GraphDocument, record: Json) -> Any:
        """The edit a record describes, made again on ``doc`` (a field it leaves out takes
        the function's default)."""
        kwargs = {param: record[key] for param, key in self.stored if key in record}
        return self.function(doc, **kwargs)


#: Every kind of edit, by its record's name.
EDIT_KINDS: dict[str, EditKind] = {}
#: The text forms, by verb, in the order the list of edits shows them.
TEXT_FORMS: dict[str, TextForm] = {}


def edit_kind(**stored_as: str) -> Callable[[F], F]:
    """Declare the decorated function an edit: records of it are named after it and hold
    its parameters (after the document) by name, or by the name ``stored_as`` gives one."""

    def declare(fn: F) -> F:
        params = list(inspect.signature(fn).parameters)[1:]
        stored = tuple((p, stored_as.get(p, p)) for p in params)
        EDIT_KINDS[fn.__name__] = EditKind(fn.__name__, fn, stored)
        return fn

    return declare


def text_form(kind: str, syntax: str, *about: str, words: int = 1) -> Callable[[Parse], Parse]:
    """Declare the decorated ``parse(doc, text, rest)`` the text form of the edit ``kind``,
    written ``syntax`` and needing ``words`` words after its verb."""

    def declare(parse: Parse) -> Parse:
        form = TextForm(syntax, about, words, parse)
        EDIT_KINDS[kind] = replace(EDIT_KINDS[kind], text=form)
        TEXT_FORMS[form.verb] = form
        return parse

    return declare


def recorded(kind: str, **values: Any) -> dict[str, Any]:
    """The record of an edit of ``kind`` (see :meth:`EditKind.record`)."""
    return EDIT_KINDS[kind].record(**values)


def usage() -> str:
    """The list of edits written as text, one form a line."""
    return "\n".join(form.usage() for form in TEXT_FORMS.values())
