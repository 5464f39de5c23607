"""The Patterns dock: make a pattern from the selected nodes (or type one), see every match
on the canvas, ask why a node did not match, and replace the accepted matches as one undo
step, with the numerical check shown after it.

Everything it does is a call into :mod:`fxstudio.core.patterns`, and nothing slow runs on
the GUI thread: finding and explaining read the graph in a worker while edits wait;
replacing runs :func:`~fxstudio.core.patterns.apply.rewrite_flow` -- what ``fxstudio
rewrite`` runs -- on a detached copy in a worker, and the rewritten graph is adopted as one
edit (:mod:`fxstudio.core.graph.snapshots`).  *Save report…* writes the JSON ``fxstudio rewrite
--json`` prints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QListWidgetItem, QPlainTextEdit, QWidget

from fxstudio.core.errors import UserError
from fxstudio.core.flows import Report, RewriteRequest, RewriteSpec, rewrite_flow
from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.core.graph.snapshots import Snapshot, propagated, views
from fxstudio.core.patterns.explain import Explanation, explain, side_by_side
from fxstudio.core.patterns.found import Found, Match
from fxstudio.core.patterns.making import compile_function, from_function, from_nodes
from fxstudio.core.patterns.matcher import Matcher
from fxstudio.core.patterns.pattern import DEFAULT_RULES, Pattern, Rules
from fxstudio.core.patterns.reasons import Failure
from fxstudio.core.patterns.replacements import graph_replacement
from fxstudio.core.wording import for_window
from fxstudio.qt.canvas.marks import PatternMarks
from fxstudio.qt.copies import Copy, run_on_copy
from fxstudio.qt.panels.base import DocumentPanel, in_words
from fxstudio.qt.panels.pattern_files import PatternFilesMixin
from fxstudio.qt.panels.pattern_rules import RulesMixin
from fxstudio.qt.panels.patterns_check import CheckMixin, Withheld
from fxstudio.qt.panels.patterns_form import BOX, NO_REPLACEMENT, build
from fxstudio.qt.panels.rewrite_list import RewriteListMixin, skipped_item
from fxstudio.qt.workers import Task

R = TypeVar("R")


class PatternsPanel(RulesMixin, PatternFilesMixin, RewriteListMixin, CheckMixin, DocumentPanel):
    """Signals: ``found(Found)`` after a search, ``explained(Explanation)``,
    ``rewritten(Report)`` after a replacement was applied, ``withheld(Report)`` when its
    check failed and it was not, ``idle()`` when a worker ended."""

    id, title, menu = "patterns", "Patterns", "&Rewrite"

    found = Signal(object)
    explained = Signal(object)
    rewritten = Signal(object)
    withheld = Signal(object)
    idle = Signal()

    def build(self) -> QWidget:
        self.pattern: Pattern | None = None
        self.result: Found | None = None  # the matches of the graph as it is
        self.report: Report | None = None  # the last replacement's
        self.held: Withheld | None = None  # a replacement whose check failed, not applied
        self.marks = PatternMarks()
        self.default_rules = DEFAULT_RULES  # the rules for every node ...
        self.node_rules: dict[str, Rules] = {}  # ... and for single nodes
        self._setting = False  # the checkboxes are being set, not edited
        self.replacement_box: Pattern | None = None
        self.task: Task | None = None
        self.opened: tuple[str, str, str] | None = None  # a pattern file, its two functions
        self.ctx.canvas.layoutDone.connect(lambda _layout: self.redraw())
        body = build(self)
        self.connect_rewrite_list()
        return body

    # --- the document ----------------------------------------------------------------------

    def on_document(self, doc: GraphDocument | None) -> None:
        self.pattern = None
        for action in self.rewrite_actions:  # a built-in rewrites a graph: there is one now
            action.setEnabled(doc is not None)
        self.marks.clear()
        self.set_check("", None)
        self._boxes_from_document()
        if self.chosen_builtin() and doc is not None:
            self.graph_changed_under_preview()
        else:
            self.forget_matches("No pattern yet.")

    def redraw(self) -> None:
        self.marks.redraw(self.ctx.canvas.scene)

    def on_change(self, event: DocumentEvent) -> None:
        if event.kind is ChangeKind.VIEW_CHANGED:
            self._boxes_from_document()
            self.redraw()
            return
        if self.chosen_builtin():  # its preview is of the graph before this change
            self.graph_changed_under_preview()
        elif self.result is not None:  # the matches are of the graph before this change
            self.forget_matches("The graph changed: Find again.")
        if self.held is not None:  # held back on a copy of the graph before this change
            self.drop_withheld("The graph changed: the rewrite held back is dropped.")
        elif self.report is not None and self.report.result.edit is not None:
            if not self._is_current(self.report):  # its check is of another graph now
                self.set_check("", None)
        self._boxes_from_document()

    def _is_current(self, report: Report) -> bool:
        """The report's rewrite is the graph's last edit (not undone, nothing after it)."""
        doc, edit = self.document, report.result.edit
        return (
            doc is not None
            and edit is not None
            and bool(doc.history)
            and (doc.history[-1] is edit.record)
        )

    def _boxes_from_document(self) -> None:
        doc = self.document
        self.marks.boxes = (
            [(b.name, list(b.nodes)) for b in doc.pattern_boxes] if doc is not None else []
        )

    # --- making and finding ----------------------------------------------------------------

    def make_from_selection(self) -> Pattern | None:
        doc = self.document
        names = list(self.selection.names)
        if doc is None or not names:
            self.message.emit("Select the nodes of the pattern first (box or Ctrl+click them).")
            return None
        title = self.name.text().strip() or "pattern"
        try:
            pattern = from_nodes(doc, names, title, self.default_rules)
        except UserError as exc:
            self.message.emit(str(exc))
            return None
        self.pattern = pattern
        self.pattern_code.setPlainText(pattern.code())
        self._fill_scope(pattern)
        doc.set_pattern_box(title, pattern.origin)  # sessions keep the box; the canvas draws it
        self.find()
        return pattern

    def current_pattern(self) -> Pattern | None:
        """The pattern the editor shows (as made, or typed), with the rules ticked."""
        doc = self.document
        if doc is None:
            return None
        text = self.pattern_code.toPlainText().strip()
        shown = (
            (self.pattern.code().strip(), (self.pattern.source or "").strip())
            if self.pattern
            else ()
        )
        if text in shown:  # the pattern as made or typed: only the rules may have changed
            assert self.pattern is not None
            self.pattern = self._with_rules(self.pattern)
            return self.pattern
        if not text:
            self.message.emit("Make a pattern from selected nodes, or type one as a function.")
            return None
        try:
            fn, source = compile_function(text)
            dialect = doc.request.chosen_frontend or "fx"
            self.pattern = from_function(
                fn, dialect=dialect, rules=self.default_rules, source=source
            )
            self._fill_scope(self.pattern)
            self.pattern = self._with_rules(self.pattern)
        except UserError as exc:
            self.message.emit(str(exc))
            return None
        return self.pattern

    def busy(self) -> bool:
        return self.task is not None

    def _begin(self, text: str) -> bool:
        """Editing locked, the buttons off, ``text`` said -- unless the dock works already or
        edits wait for another (then it says so: False)."""
        if self.busy() or self.session.locked:
            self.message.emit(self.session.locked or "The Patterns dock is still working.")
            return False
        self.session.lock(f"{text} Edit once it is done.")
        for b in (self.find_button, self.replace_button, self.why_button, self.make_button):
            b.setEnabled(False)
        self.summary.setText(text)
        return True

    def _start(
        self,
        text: str,
        work: Callable[[], Any],
        done: Callable[[Any], None],
        failed: Callable[[BaseException], None] | None = None,
    ) -> bool:
        """Run ``work()`` in a worker, editing locked meanwhile (it reads the graph itself);
        ``done(result)`` after it (``failed(error)`` if it raised)."""
        if not self._begin(text):
            return False
        task = Task(work, self)
        task.succeeded.connect(lambda result: self._finish(task, done, result))
        task.failed.connect(lambda exc: self._finish(task, failed or self._failed, exc))
        self.task = task
        task.start()
        return True

    def _start_on_copy(
        self, text: str, work: Callable[[Copy], R], done: Callable[[Snapshot, R], None]
    ) -> bool:
        """Run ``work(copy)`` on a copy of the graph in a worker, editing locked meanwhile;
        ``done(snapshot, result)`` after it, whatever the graph did meanwhile (adopting the
        result checks that).  The graph is read in a turn of its own (``session.soon``): on a
        big graph the click's turn only shows that it began."""
        if not self._begin(text):
            return False

        def finish(result: R) -> None:
            self._finish(job.task, lambda r: done(job.snapshot, r), result)

        job = run_on_copy(
            self,
            work,
            finish,
            stale=finish,
            gone=finish,
            failed=lambda exc: self._finish(job.task, self._failed, exc),
            later=self.session.soon,
            parent=self,
        )
        self.task = job.task
        return True

    def _finish(self, task: Task, then: Callable[[Any], None], value: Any) -> None:
        if task is not self.task:
            return
        self.task = None
        self.session.unlock()
        for b in (self.find_button, self.why_button, self.make_button):
            b.setEnabled(True)
        self.update_replace()
        then(value)
        self.idle.emit()

    def _failed(self, exc: BaseException) -> None:
        text = in_words(exc)
        self.summary.setText("Not done.")
        self.message.emit(text)

    def find(self, then: Callable[[Found], object] | None = None) -> bool:
        """Find the pattern's matches (in a worker); ``found`` tells when they are shown."""
        pattern, doc = self.current_pattern(), self.document
        if pattern is None or doc is None:
            return False
        gm = doc.graph_module  # read in the worker while edits wait

        def done(found: Found) -> None:
            self.result = found
            self._list_matches()
            self.found.emit(found)
            if then is not None:
                then(found)
            elif not found.matches:
                self.explain(None)

        return self._start("Finding…", lambda: Matcher(pattern).find(gm), done)

    def _list_matches(self, current: bool = True) -> None:
        found = self.result
        assert found is not None
        self.match_list.blockSignals(True)
        self.match_list.clear()
        for m in found.matches:
            item = QListWidgetItem(f"{m.index + 1}. {', '.join(m.graph_nodes)}")
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            item.setData(Qt.ItemDataRole.UserRole, m.index)
            self.match_list.addItem(item)
        for s in found.skipped:
            self.match_list.addItem(skipped_item(f"skipped: {for_window(s.failure.describe())}"))
        self.match_list.blockSignals(False)
        n, k = len(found.matches), len(found.skipped)
        words = [f"{n} match{'es' if n != 1 else ''}"]
        if k:
            words.append(f"{k} skipped")
        words.append(f"{found.seconds * 1000:.0f} ms")
        self.summary.setText(
            ", ".join(words) + "".join(f"\n⚠ {for_window(w)}" for w in found.warnings)
        )
        self.marks.matches = [m.graph_nodes for m in found.matches]
        self.marks.current = 0 if found.matches and current else None
        self.marks.partial, self.marks.culprit = [], None
        self.redraw()
        if found.matches and current:
            self.match_list.setCurrentRow(0)

    def step(self, delta: int) -> None:
        if not self.result or not self.result.matches:
            return
        row = (max(self.match_list.currentRow(), 0) + delta) % len(self.result.matches)
        self.match_list.setCurrentRow(row)

    def show_match(self, row: int) -> None:
        if self.result is None or not 0 <= row < len(self.result.matches):
            return
        m = self.result.matches[row]
        self.marks.current = row
        self.redraw()
        self.selection.select(m.graph_nodes)
        self.ctx.canvas.center_on(m.graph_nodes)
        if self.chosen_builtin():
            self.show_preview_match(row)
        elif self.document is not None and self.pattern is not None:
            self.explanation.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)  # a table
            self.explanation.setPlainText(side_by_side(self.document.graph_module, self.pattern, m))

    def accepted(self) -> set[int]:
        out = set()
        for i in range(self.match_list.count()):
            item = self.match_list.item(i)
            index = item.data(Qt.ItemDataRole.UserRole)
            if index is not None and item.checkState() == Qt.CheckState.Checked:
                out.add(int(index))
        return out

    # --- why not -----------------------------------------------------------------------------

    def why_not_here(self) -> None:
        node = self.selection.current
        if node is None:
            self.message.emit("Select the node you expected to match, then ask again.")
            return
        if self.result is None:
            self.find(then=lambda _found: self.explain(node))
        else:
            self.explain(node)

    def explain(
        self, at: str | None = None, then: Callable[[Explanation], None] | None = None
    ) -> bool:
        """Why the pattern does not match (``at``: that node), in a worker; ``explained``
        tells when it is shown."""
        doc, pattern, found = self.document, self.pattern, self.result
        if doc is None or pattern is None:
            return False
        gm = doc.graph_module

        def done(why: Explanation) -> None:
            self._show_explanation(why, at)
            self.explained.emit(why)
            if then is not None:
                then(why)

        return self._start("Explaining…", lambda: explain(gm, pattern, at=at, found=found), done)

    def _show_explanation(self, why: Explanation, at: str | None) -> None:
        doc = self.document
        if self.result is not None:  # (the summary said what ran)
            self._list_matches(current=at is None)  # the node asked about stays selected
        self.explanation.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.explanation.setPlainText(for_window(why.describe()))
        if at is not None:
            QTimer.singleShot(0, lambda: self.bring_into_view(self.explanation, top=True))
        target = why.at if at is not None else (why.near[0] if why.near else None)
        if isinstance(target, Failure):
            self.marks.partial = list(target.partial.values())
            self.marks.culprit = target.culprit if doc and target.culprit in doc else None
        elif isinstance(target, Match):
            self.marks.partial, self.marks.culprit = [], None
        self.redraw()

    # --- replacing ---------------------------------------------------------------------------

    def replace_accepted(self) -> bool:
        """Replace the accepted matches (or run the chosen built-in) on a detached copy in a
        worker; the result becomes one undo step.  ``rewritten`` tells when it is applied."""
        doc = self.document
        if doc is None:
            return False
        choice = self.replacement_choice.currentData()
        kwargs: dict[str, Any] = {}
        if self.chosen_builtin():
            spec = RewriteSpec(builtin=self.chosen_builtin())
        else:
            if self.current_pattern() is None:
                return False
            kwargs = {"pattern": self.pattern, "found": self.result}
            if self.result is not None:
                kwargs["accepted"] = frozenset(self.accepted())
            if choice != BOX and not self.replacement_code.toPlainText().strip():
                self.message.emit(NO_REPLACEMENT)
                return False
            if choice == BOX:
                if self.replacement_box is None:
                    self.message.emit(
                        "Select the replacement's nodes and press 'Selection as replacement' first."
                    )
                    return False
                kwargs["replacement"] = graph_replacement(self.replacement_box)
                spec = RewriteSpec()
            else:
                spec = self._spec()

        def work(copy: Copy) -> tuple[GraphDocument, Report, dict[str, Any]]:
            rewritten = copy.detached()
            report = rewrite_flow(rewritten, RewriteRequest(spec, **kwargs))
            if report.result.edit is None:
                return rewritten, report, {}
            return propagated(rewritten), report, views(rewritten)

        return self._start_on_copy(
            "Replacing… (on a copy of the graph; it becomes one undo step)",
            work,
            lambda snap, done: self.rewritten_on_copy(snap, *done),
        )

    def update_replace(self) -> None:
        """*Replace* is for a built-in, or a pattern with its replacement: an empty
        replacement is no replacement (never an example's code)."""
        missing = (
            not self.chosen_builtin()
            and self.replacement_choice.currentData() != BOX
            and not self.replacement_code.toPlainText().strip()
        )
        self.replace_button.setEnabled(not self.busy() and not missing)
        self.replace_button.setToolTip(NO_REPLACEMENT if missing else "")

    def _spec(self) -> RewriteSpec:
        """The rewrite the editors hold: the pattern file's functions as the command line
        names them (``FILE.py:pattern``) while they are as opened, else the code typed."""
        pattern, replacement = self.pattern_code.toPlainText(), self.replacement_code.toPlainText()
        if self.opened is not None and self.opened[1:] == (pattern, replacement):
            path = self.opened[0]
            return RewriteSpec(
                pattern=f"{path}:pattern",
                replacement=f"{path}:replacement",
                rules=self.default_rules,
            )
        return RewriteSpec(
            pattern_code=pattern, replacement_code=replacement, rules=self.default_rules
        )

    def use_selection_as_replacement(self) -> None:
        doc = self.document
        names = list(self.selection.names)
        if doc is None or not names:
            self.message.emit("Select the nodes of the replacement first.")
            return
        try:
            self.replacement_box = from_nodes(doc, names, "replacement", DEFAULT_RULES)
        except UserError as exc:
            self.message.emit(str(exc))
            return
        self.replacement_choice.setCurrentIndex(self.replacement_choice.findData(BOX))
        self.replacement_code.setPlainText(self.replacement_box.code())
        self.marks.boxes = [*self.marks.boxes, ("replacement", list(self.replacement_box.origin))]
        self.redraw()
