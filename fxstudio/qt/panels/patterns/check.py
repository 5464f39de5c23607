"""The Patterns dock after a replacement ran on its copy of the graph: applied as one undo
step with its numerical check shown -- or, when the check finds other values where the
rewrite should have kept them, *not* applied: the dock says so in red and offers *Apply
anyway* for a rewrite meant to change the values (``fxstudio rewrite`` refuses the same
way, and writes it with ``--allow-difference``).  A rewrite kept that way says so, with
*Undo the rewrite* beside it.  A rewrite that could not be checked (a structure-only
document: nothing to run) is applied and says why it was not checked -- not a failure."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QTimer
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import QLabel, QPushButton, QScrollArea, QWidget

from fxstudio.core.edits.snapshots import Snapshot
from fxstudio.core.errors import UserError
from fxstudio.core.flows import Report, RewrittenCopy
from fxstudio.core.flows.patterns import Explanation
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt import theme
from fxstudio.qt.editing.commands import EditCommand

# the check label's states: passed (or meant to differ), withheld, kept knowingly, not checked
PASSED, WITHHELD, KEPT, UNCHECKED = "passed", "withheld", "kept", "unchecked"


@dataclass
class Withheld:
    """A rewrite made on a copy whose check failed: what *Apply anyway* adopts."""

    snap: Snapshot
    rewritten: RewrittenCopy


def bring_into_view(shown: QWidget, top: bool = False) -> None:
    """Scroll the dock to ``shown`` (its body is in a scroll area); ``top``: with its
    top at the top, as much of it in sight as the dock has room for."""
    area = shown.parentWidget()
    while area is not None and not isinstance(area, QScrollArea):
        area = area.parentWidget()
    if area is None or not shown.isVisible():
        return
    content, bar = area.widget(), area.verticalScrollBar()
    if top and content is not None and bar is not None:
        bar.setValue(shown.mapTo(content, QPoint(0, 0)).y() - 8)
    elif not top:
        area.ensureWidgetVisible(shown, 0, 8)


class RewriteCheck:
    """The check of a replacement made on a copy, and what follows from it: the label
    (``check_label``), *Apply anyway* (``apply_button``), *Undo the rewrite*
    (``undo_button``, on ``undo_stack``) and *Save report…* (``report_button``), shown as the
    check goes; the edit's label in ``summary``.  ``document()``: the graph it is adopted
    into; ``say(text)``: what was not done and why; ``note(text, ms)``: the status bar's
    passing note; ``explain(why)``: a replacement that found nothing says why;
    ``rewritten(report)`` / ``withheld(report)``: applied, or held back."""

    def __init__(
        self,
        check_label: QLabel,
        buttons: tuple[QPushButton, QPushButton, QPushButton],  # apply anyway, undo, report
        summary: QLabel,
        undo_stack: QUndoStack,
        document: Callable[[], GraphDocument | None],
        say: Callable[[str], None],
        note: Callable[[str, int], None],
        explain: Callable[[Explanation], None],
        rewritten: Callable[[Report], None],
        withheld: Callable[[Report], None],
    ) -> None:
        self.check_label, self.summary, self.undo_stack = check_label, summary, undo_stack
        self.apply_button, self.undo_button, self.report_button = buttons
        self.document, self.say, self.note, self.explain = document, say, note, explain
        self.rewritten, self.withheld = rewritten, withheld
        self.report: Report | None = None  # the last replacement's
        self.held: Withheld | None = None  # a replacement whose check failed, not applied
        self.apply_button.clicked.connect(lambda: self.apply_anyway())
        self.undo_button.clicked.connect(self.undo_rewrite)

    def rewritten_on_copy(self, snap: Snapshot, rewritten: RewrittenCopy) -> None:
        """The worker's replacement is back: apply it (one undo step), or -- its check failed
        -- hold it back and say why."""
        doc = self.document()
        report = rewritten.report
        result = report.result
        self.held = None
        if result.edit is None or doc is None:
            reasons = report.verdict or "; ".join(why for _, why in result.skipped[:3])
            if not result.found.matches and report.explanation is not None:
                self.explain(report.explanation)
            self.summary.setText("Nothing was replaced.")
            self.say(f"Nothing was replaced{': ' + reasons if reasons else '.'}")
            return
        if report.check_failed:
            assert report.check is not None
            self.held = Withheld(snap, rewritten)
            self.report = report  # (its report can be saved: what was refused and why)
            self.summary.setText(f"{result.edit.label}: held back.")
            self.set(
                f"{report.check.describe()}\nNot applied: the model would compute other "
                "values. If the rewrite is meant to change them, press Apply anyway.",
                WITHHELD,
            )
            self.note("Not applied: the rewrite's check failed (see the Patterns dock)", 8000)
            self.withheld(report)
            return
        self._apply(snap, rewritten, PASSED)

    def apply_anyway(self) -> bool:
        """Apply the rewrite held back for its failed check, knowingly."""
        held = self.held
        if held is None:
            return False
        self.held = None
        held.rewritten.report.intended = True  # the user means it to change the values
        return self._apply(held.snap, held.rewritten, KEPT)

    def _apply(self, snap: Snapshot, rewritten: RewrittenCopy, how: str) -> bool:
        doc, report = self.document(), rewritten.report
        result = report.result
        assert doc is not None
        try:
            edit = rewritten.adopt(doc, snap)
        except UserError as exc:
            self.set("", None)
            self.say(str(exc))
            return False
        assert edit is not None
        self.report = report
        self.undo_stack.push(EditCommand(edit))
        self.summary.setText(edit.label)
        text = f"{edit.label}."
        if how == KEPT:
            text = f"{edit.label}: applied although the check found other values."
        if result.skipped:
            text += f" Skipped {len(result.skipped)}: " + "; ".join(
                w for _, w in result.skipped[:3]
            )
        if report.check is not None:
            text += "\n" + report.check.describe(report.intended)
        elif report.unchecked:  # (no weights: applied, in the plain colour, not green)
            text += f"\nNot checked: {report.unchecked}."
            how = UNCHECKED if how == PASSED else how
        self.set(text, how)
        self.note(text.splitlines()[0], 8000)  # (not the preview's "Place 3 of 15")
        self.rewritten(report)
        return True

    def set(self, text: str, state: str | None) -> None:
        """The check's words: ``PASSED`` (green), ``WITHHELD`` (red, *Apply anyway*),
        ``KEPT`` (red, *Undo the rewrite*), ``UNCHECKED`` (plain: applied, not checked), or
        ``None`` (no check shown)."""
        c = theme.colors()
        self.check_label.setText(text)
        colour = {PASSED: c.good, WITHHELD: c.bad, KEPT: c.bad}.get(state or "")
        self.check_label.setStyleSheet(f"color: {colour}; font-weight: bold;" if colour else "")
        self.check_label.setVisible(bool(text))  # (no empty gap above the matches)
        self.undo_button.setVisible(state == KEPT)
        self.apply_button.setVisible(state == WITHHELD)
        self.report_button.setEnabled(state is not None)
        self.report_button.setVisible(state is not None)
        if state is None:
            self.report = None
            self.held = None
        elif text:  # the verdict and its buttons in sight, in a dock scrolled elsewhere
            shown = self.apply_button if state == WITHHELD else self.check_label
            QTimer.singleShot(0, lambda: bring_into_view(shown))

    def drop_withheld(self, why: str) -> None:
        """A rewrite held back is of another graph (or rewrite) now: forgotten, ``why`` said."""
        if self.held is not None:
            self.set(why, None)

    def undo_rewrite(self) -> None:
        self.undo_stack.undo()
        self.set("The rewrite was undone.", None)
