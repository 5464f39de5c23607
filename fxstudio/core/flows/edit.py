"""The edit flow's front for the window, besides the edits themselves
(:mod:`fxstudio.core.edits`, which the edit controller and ``fxstudio edit`` call directly):
what to insert (the catalogue the insert palette lists and searches), the Python console
(each statement run against the document, its direct changes turned into edits), and
catching a big graph's code, rows and shapes up after edits, off the GUI thread.

Called by ``fxstudio.qt.editing`` (the edit controller, *Insert node…*'s dialog and palette),
``qt.panels.console`` (the Console dock) and ``qt.window.catch_up``.

Exposes (re-exported, nothing worked out here): :class:`Entry`, :func:`catalogue` and
:func:`search` (:mod:`fxstudio.core.graph.catalogue`); :class:`ConsoleSession` and its
:class:`Result` (:mod:`fxstudio.core.console`); the module :mod:`~fxstudio.core.edits.catchup`
(``needed``, ``compute`` on a snapshot, ``apply`` if the document is still as read).

Example:
    >>> from fxstudio.core.flows import open_document
    >>> doc = open_document("examples:negrelu")
    >>> [e.target for e in search(catalogue(doc), "torch.tanh")][:1]
    ['torch.tanh']
    >>> ConsoleSession(doc).push("[n.name for n in graph.nodes][:3]").output
    "['x', 'y', 'z']\\n"
"""

from __future__ import annotations

from fxstudio.core.console import ConsoleSession, Result
from fxstudio.core.edits import catchup
from fxstudio.core.graph.catalogue import Entry, catalogue, search

__all__ = [
    "ConsoleSession",
    "Entry",
    "Result",
    "catalogue",
    "catchup",
    "search",
]
