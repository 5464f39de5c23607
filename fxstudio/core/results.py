"""What a flow's result promises -- the command line prints it, ``--json`` writes it, the
window shows it -- and the JSON it is written as.

:class:`Result` is a Protocol: a flow's result class satisfies it by having the methods
(``tests/core/test_results.py`` checks every flow's; mypy checks a result passed where a
:class:`Result` is asked for).

    >>> from fxstudio.core.flows.memory import MemoryResult
    >>> issubclass(MemoryResult, Result)
    True
"""

from __future__ import annotations

import os
from typing import Any, Protocol, runtime_checkable

#: A JSON object as ``json.loads`` gives it (``--json``'s output, a session's records).
Json = dict[str, Any]


@runtime_checkable
class Result(Protocol):
    """A flow's result: the same data as JSON (``--json``), in words (what the command line
    prints: a text, or its lines) and written to a file."""

    def to_json(self) -> Json | list[Json]: ...

    def describe(self) -> str | list[str]: ...

    def write(self, path: str | os.PathLike[str]) -> object: ...
