"""The Patterns dock's list of rewrites: the user's own pattern, and every built-in with what
it does.  Choosing a built-in previews it before anything changes -- it runs on a copy of the
graph in a worker (``fxstudio rewrite --builtin NAME --dry-run`` runs the same), and the
places it would change are drawn on the canvas and listed, with those it would skip and why;
*Replace* then makes it one undo step.  Each built-in is also a command of the *Rewrite*
menu, and so of the command palette ("Fold conv + BatchNorm").
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QListWidgetItem

from fxstudio.core.flows import Report, RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.patterns.builtins import BUILTINS
from fxstudio.core.patterns.found import Found
from fxstudio.core.wording import for_window
from fxstudio.qt.panels.base import in_words
from fxstudio.qt.panels.patterns_form import MINE, MINE_ABOUT, PatternsForm

RETRY_MS = 200  # how soon a preview the dock could not start yet is tried again


def skipped_item(text: str) -> QListWidgetItem:
    """A row of the match list for a place left alone: greyed, not checkable."""
    item = QListWidgetItem(text)
    item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
    item.setForeground(Qt.GlobalColor.darkGray)
    item.setToolTip(text)
    return item


class RewriteListMixin(PatternsForm):
    """For :class:`~fxstudio.qt.panels.patterns.PatternsPanel`: the rewrite chosen, its
    preview, its commands."""

    result: Found | None
    document: GraphDocument | None

    def connect_rewrite_list(self) -> None:
        self.previewed: Report | None = None  # the chosen built-in's, on the graph as it is
        self.placed = False  # the status bar shows a place of the preview
        self.rewrite_actions = self._make_actions()
        self.rewrite_list.currentRowChanged.connect(lambda _row: self.rewrite_chosen())
        self.rewrite_list.setCurrentRow(0)

    def chosen_name(self) -> str:
        """The built-in chosen in the list, by name; ``MINE`` for the user's pattern."""
        item = self.rewrite_list.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item is not None else MINE

    def chosen_builtin(self) -> str:
        """The built-in chosen, as ``NAME`` or ``NAME:ARGUMENT``; "" for the user's pattern."""
        name = self.chosen_name()
        if not name:
            return ""
        arg = self.rewrite_argument.text().strip() if BUILTINS[name].argument else ""
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
        self.pattern_area.setVisible(builtin is None)
        self.replacement_area.setVisible(builtin is None)
        self.explanation.setVisible(builtin is None)  # (a built-in's skips say why in the list)
        self.argument_row.setVisible(bool(builtin and builtin.argument))
        if builtin is not None and builtin.argument and not self.rewrite_argument.text():
            self.rewrite_argument.setText(builtin.argument)
        self.rewrite_about.setText(
            MINE_ABOUT if builtin is None else f"{builtin.summary}  ({builtin.name})"
        )
        self.replace_button.setText("Replace accepted" if builtin is None else "Replace")
        self.set_check("", None)  # (of the rewrite chosen before)
        self.update_replace()
        self.forget_matches("")
        if builtin is not None:
            self.preview()

    def forget_matches(self, text: str) -> None:
        """The matches shown are of another graph or another rewrite: gone, ``text`` said."""
        self.result = self.previewed = None
        self.marks.matches, self.marks.partial, self.marks.culprit = [], [], None
        self.match_list.clear()
        self.explanation.clear()
        self.summary.setText(text)
        if self.placed:  # the status bar's "Place 3 of 15" is of those matches
            self.placed = False
            self.status.emit("", 0)
        self.redraw()

    # --- the preview ---------------------------------------------------------------------------

    def preview(self) -> bool:
        """Run the chosen built-in on a copy of the graph (in a worker): what it would change
        and skip, drawn and listed, nothing changed."""
        spec, doc = self.chosen_builtin(), self.document
        if not spec or doc is None:
            return False

        def work() -> Report:
            return rewrite_flow(doc, RewriteRequest(RewriteSpec(builtin=spec), dry_run=True))

        return bool(
            self._start(
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
        r = report.result
        self.result = Found(r.replaced, r.found.skipped, r.found.warnings, r.seconds_match)
        self.match_list.blockSignals(True)
        self.match_list.clear()
        for i, m in enumerate(r.replaced, 1):
            item = QListWidgetItem(f"{i}. {', '.join(m.graph_nodes)}")
            item.setData(Qt.ItemDataRole.UserRole, m.index)
            self.match_list.addItem(item)
        skips = [f"skipped {m.anchor}: {why}" for m, why in r.skipped]
        skips += [f"skipped: {for_window(s.failure.describe())}" for s in r.found.skipped]
        for text in skips:
            self.match_list.addItem(skipped_item(text))
        self.match_list.blockSignals(False)
        title = BUILTINS[spec.partition(":")[0]].title or spec
        n, k = len(r.replaced), len(skips)
        if n:
            text = f"{title}: {n} place{'s' if n != 1 else ''} to change"
            text += f", {k} skipped" if k else ""
            text += ". Replace makes them one undo step."
        else:  # how many places it looked at, and why it left each alone
            text = f"{title}: nothing to change -- {report.verdict}"
            text += "; each one below." if k else "."
        self.summary.setText(text + "".join(f"\n⚠ {w}" for w in r.found.warnings))
        self.marks.matches = [m.graph_nodes for m in r.replaced]
        self.marks.current = 0 if r.replaced else None
        self.redraw()
        if r.replaced:
            self.match_list.setCurrentRow(0)
        self.found.emit(self.result)

    def preview_failed(self, exc: BaseException) -> None:
        """The built-in cannot run here (another dialect, a wrong argument): said in the
        dock, where the preview would be."""
        text = in_words(exc)
        self.forget_matches(text)

    def show_preview_match(self, row: int) -> None:
        """A place the built-in changes, in the status bar's words (it is on the canvas)."""
        assert self.result is not None
        m = self.result.matches[row]
        n = len(self.result.matches)
        self.status.emit(f"Place {row + 1} of {n}: replaces {', '.join(m.graph_nodes)}", 8000)
        self.placed = True

    def graph_changed_under_preview(self) -> None:
        """The graph changed: preview the chosen built-in again once the change is in."""
        self.forget_matches("The graph changed: previewing again…")
        QTimer.singleShot(0, self._preview_again)

    def _preview_again(self) -> None:
        if not self.chosen_builtin() or self.previewed is not None or self.document is None:
            return
        if self.busy() or self.session.locked:
            # a preview or an edit under way (two changes in a row, a big graph's catch-up):
            # after it, not a refusal in a message box
            QTimer.singleShot(RETRY_MS, self._preview_again)
            return
        self.preview()

    # --- the menu ------------------------------------------------------------------------------

    def menu_actions(self) -> list[QAction]:
        """One command per built-in: the dock with it chosen and previewed."""
        return self.rewrite_actions

    def _make_actions(self) -> list[QAction]:
        out = []
        for name, b in BUILTINS.items():
            action = QAction(b.title or name, self)  # type: ignore[call-overload]
            action.setObjectName(f"actionRewrite_{name}")
            action.setToolTip(b.summary)
            action.setStatusTip(b.summary)
            action.triggered.connect(lambda _=False, n=name: self.choose_rewrite(n))
            action.setEnabled(False)  # until a model is open
            out.append(action)
        return out
