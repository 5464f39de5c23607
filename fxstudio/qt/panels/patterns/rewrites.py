"""The Patterns dock's list of rewrites: the user's own pattern, and every built-in with what
it does.  Choosing a built-in previews it before anything changes -- it runs on a copy of the
graph in a worker (``fxstudio rewrite --builtin NAME --dry-run`` runs the same), and the
places it would change are drawn on the canvas and listed, with those it would skip and why;
*Replace* then makes it one undo step.  Each built-in is also a command of the *Rewrite*
menu, and so of the command palette ("Fold conv + BatchNorm").
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QLabel, QLineEdit, QListWidget, QWidget

from fxstudio.core.flows import Report, RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.flows.patterns import BUILTINS, Builtin, Found
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.panels.base import in_words
from fxstudio.qt.panels.patterns.form import MINE, MINE_ABOUT
from fxstudio.qt.panels.patterns.matches import MatchesView

RETRY_MS = 200  # how soon a preview the dock could not start yet is tried again

#: runs ``work()`` in a worker, the dock busy meanwhile, saying ``text``; ``done(result)``
#: after it, ``failed(error)`` if it raised; False if it could not start
Start = Callable[
    [str, Callable[[], Report], Callable[[Report], None], Callable[[BaseException], None]], bool
]


class RewriteList:
    """The rewrite chosen in ``rewrite_list`` (the user's pattern, or a built-in with its
    ``argument`` in ``argument_row``, told in ``about``), its preview shown in ``matches``
    (run by ``start``, once ``ready()`` -- no worker nor edit under way), and one command per
    built-in (:meth:`menu_actions`, children of ``parent``) bringing ``dock`` forward with it
    chosen.  ``chosen(builtin)`` (``None``: the user's pattern) when another is chosen (the
    first, once the panel selects it); ``found(matches)`` after a preview; ``made()``: the
    built-in whose rewrite made the graph as it is ("" when its last edit was another)."""

    def __init__(
        self,
        rewrite_list: QListWidget,
        about: QLabel,
        argument_row: QWidget,
        argument: QLineEdit,
        parent: QObject,
        dock: QDockWidget,
        matches: MatchesView,
        start: Start,
        document: Callable[[], GraphDocument | None],
        ready: Callable[[], bool],
        chosen: Callable[[Builtin | None], None],
        found: Callable[[Found], None],
        made: Callable[[], str],
    ) -> None:
        self.rewrite_list, self.about = rewrite_list, about
        self.argument_row, self.argument = argument_row, argument
        self.dock, self.matches, self.start = dock, matches, start
        self.document, self.ready, self.chosen, self.found = document, ready, chosen, found
        self.made = made
        self.previewed: Report | None = None  # the chosen built-in's, on the graph as it is
        self.rewrite_actions = self._make_actions(parent)
        argument.editingFinished.connect(lambda: self.preview())
        rewrite_list.currentRowChanged.connect(lambda _row: self.rewrite_chosen())

    def chosen_name(self) -> str:
        """The built-in chosen in the list, by name; ``MINE`` for the user's pattern."""
        item = self.rewrite_list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else MINE

    def chosen_builtin(self) -> str:
        """The built-in chosen, as ``NAME`` or ``NAME:ARGUMENT``; "" for the user's pattern."""
        name = self.chosen_name()
        if not name:
            return ""
        arg = self.argument.text().strip() if BUILTINS[name].argument else ""
        return f"{name}:{arg}" if arg else name

    def choose_rewrite(self, name: str) -> None:
        """Bring the dock forward with the built-in ``name`` chosen (and previewed)."""
        self.dock.show()
        self.dock.raise_()
        for row in range(self.rewrite_list.count()):
            if self.rewrite_list.item(row).data(Qt.ItemDataRole.UserRole) == name:
                if row == self.rewrite_list.currentRow():
                    self.preview()
                self.rewrite_list.setCurrentRow(row)
                return

    def rewrite_chosen(self) -> None:
        name = self.chosen_name()
        builtin = BUILTINS.get(name) if name else None
        self.argument_row.setVisible(bool(builtin and builtin.argument))
        if builtin is not None and builtin.argument and not self.argument.text():
            self.argument.setText(builtin.argument)
        self.about.setText(
            MINE_ABOUT if builtin is None else f"{builtin.summary}  ({builtin.name})"
        )
        self.chosen(builtin)
        self.forget_matches("")
        if builtin is not None:
            self.preview()

    def forget_matches(self, text: str) -> None:
        """The matches shown are of another graph or another rewrite: gone, ``text`` said."""
        self.previewed = None
        self.matches.forget(text)

    # --- the preview ---------------------------------------------------------------------------

    def preview(self) -> bool:
        """Run the chosen built-in on a copy of the graph (in a worker): what it would change
        and skip, drawn and listed, nothing changed."""
        spec, doc = self.chosen_builtin(), self.document()
        if not spec or doc is None:
            return False

        def work() -> Report:
            return rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin=spec), dry_run=True))

        return bool(
            self.start(
                "Previewing… (on a copy: nothing changes until Replace)",
                work,
                lambda report: self._previewed(spec, report),
                self.preview_failed,
            )
        )

    def _previewed(self, spec: str, report: Report) -> None:
        if spec != self.chosen_builtin():  # another rewrite was chosen meanwhile
            return
        self.previewed = report
        title = BUILTINS[spec.partition(":")[0]].title or spec
        self.found(self.matches.show_preview(title, report, after=self.made() == spec))

    def preview_failed(self, exc: BaseException) -> None:
        """The built-in cannot run here (another dialect, a wrong argument): said in the
        dock, where the preview would be."""
        text = in_words(exc)
        self.forget_matches(text)

    def graph_changed_under_preview(self) -> None:
        """The graph changed: preview the chosen built-in again once the change is in."""
        self.forget_matches("The graph changed: previewing again…")
        QTimer.singleShot(0, self.rewrite_list, self._preview_again)  # (not once it is gone)

    def _preview_again(self) -> None:
        if not self.chosen_builtin() or self.previewed is not None or self.document() is None:
            return
        if not self.ready():
            # a preview or an edit under way (two changes in a row, a big graph's catch-up):
            # after it, not a refusal in a message box
            QTimer.singleShot(RETRY_MS, self.rewrite_list, self._preview_again)
            return
        self.preview()

    # --- the menu ------------------------------------------------------------------------------

    def menu_actions(self) -> list[QAction]:
        """One command per built-in: the dock with it chosen and previewed."""
        return self.rewrite_actions

    def _make_actions(self, parent: QObject) -> list[QAction]:
        out = []
        for name, b in BUILTINS.items():
            action = QAction(b.title or name, parent)
            action.setObjectName(f"actionRewrite_{name}")
            action.setToolTip(b.summary)
            action.setStatusTip(b.summary)
            action.triggered.connect(lambda _=False, n=name: self.choose_rewrite(n))
            action.setEnabled(False)  # until a model is open
            out.append(action)
        return out
