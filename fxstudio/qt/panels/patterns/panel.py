"""The Patterns dock: make a pattern from the selected nodes (or type one), see every match
on the canvas, ask why a node did not match, and replace the accepted matches as one undo
step, with the numerical check shown after it.

Everything it does is a call into :mod:`fxstudio.core.flows.patterns` and
:func:`~fxstudio.core.flows.rewrite_flow` -- what ``fxstudio rewrite`` runs -- and nothing
slow runs on the GUI thread: finding and explaining read the graph in a worker while edits
wait; replacing runs on a detached copy in a worker, and the rewritten graph is adopted as
one edit (:mod:`fxstudio.core.edits.snapshots`).  *Save report…* writes the JSON ``fxstudio
rewrite --json`` prints.

The panel lays out its :class:`~fxstudio.qt.panels.patterns.form.PatternsForm` and gives its
widgets to the presenters that own them: the matching rules (``rules``), the pattern files
(``files``), the matches shown (``matches``), the list of rewrites and a built-in's preview
(``rewrites``) and a replacement's check (``check``); it keeps the pattern, the search, the
explanation and the replacement, and wires the presenters with callbacks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from fxstudio.core.edits.snapshots import Snapshot
from fxstudio.core.errors import UserError
from fxstudio.core.flows import (
    Report,
    RewriteRequest,
    RewriteSpec,
    RewrittenCopy,
    rewrite_copy,
)
from fxstudio.core.flows.patterns import (
    DEFAULT_RULES,
    Builtin,
    Explanation,
    Found,
    Pattern,
    explain,
    find_matches,
    graph_replacement,
    pattern_from_code,
    pattern_from_nodes,
    side_by_side,
)
from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.qt.canvas.marks import PatternMarks
from fxstudio.qt.copies import Copy, run_on_copy
from fxstudio.qt.panels.base import DocumentPanel, in_words
from fxstudio.qt.panels.patterns.check import RewriteCheck
from fxstudio.qt.panels.patterns.files import PatternFiles
from fxstudio.qt.panels.patterns.form import BOX, NO_REPLACEMENT, PatternsForm
from fxstudio.qt.panels.patterns.matches import MatchesView
from fxstudio.qt.panels.patterns.rewrites import RewriteList
from fxstudio.qt.panels.patterns.rules import RulesPresenter
from fxstudio.qt.workers import Task

R = TypeVar("R")


class PatternsPanel(DocumentPanel):
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
        self.replacement_box: Pattern | None = None
        self.task: Task | None = None
        self.marks = PatternMarks()
        form = self.form = PatternsForm()
        # the widgets the panel works with itself (and the window's tests press)
        self.name, self.pattern_code = form.name, form.pattern_code
        self.make_button, self.find_button = form.make_button, form.find_button
        self.why_button, self.next_button = form.why_button, form.next_button
        self.summary, self.match_list = form.summary, form.match_list
        self.explanation, self.check_label = form.explanation, form.check_label
        self.replacement_choice = form.replacement_choice
        self.replacement_code, self.replace_button = form.replacement_code, form.replace_button
        self.rewrite_list = form.rewrite_list
        self.rules = RulesPresenter(form.scope, form.rule_boxes, form.attrs, form.fx_button)
        self.check = RewriteCheck(
            form.check_label,
            (form.apply_button, form.undo_button, form.report_button),
            form.summary,
            self.undo_stack,
            document=lambda: self.document,
            say=self.message.emit,
            note=self.status.emit,
            explain=lambda why: self.matches.show_explanation(why, None),
            rewritten=self.rewritten.emit,
            withheld=self.withheld.emit,
        )
        self.files = PatternFiles(
            self.dock,
            (form.open_button, form.save_button, form.report_button),
            form.name,
            form.pattern_code,
            form.replacement_code,
            form.replacement_choice,
            self.rules,
            report=lambda: self.check.report,
            opened=self._opened,
            say=self.message.emit,
            note=self.status.emit,
        )
        self.matches = MatchesView(
            form.summary,
            form.match_list,
            form.explanation,
            (form.prev_button, form.next_button),
            self.marks,
            redraw=self.redraw,
            note=self.status.emit,
            contains=lambda name: self.document is not None and name in self.document,
        )
        self.rewrites = RewriteList(
            form.rewrite_list,
            form.rewrite_about,
            form.argument_row,
            form.rewrite_argument,
            self,
            self.dock,
            self.matches,
            start=self._start,
            document=lambda: self.document,
            ready=lambda: not self.busy() and not self.session.locked,
            chosen=self._rewrite_chosen,
            found=self.found.emit,
            made=lambda: self._made_by(self.check.report),
        )
        form.make_button.clicked.connect(self.make_from_selection)
        form.find_button.clicked.connect(lambda: self.find())
        form.why_button.clicked.connect(self.why_not_here)
        form.match_list.currentRowChanged.connect(self.show_match)
        form.replace_button.clicked.connect(lambda: self.replace_accepted())
        form.box_button.clicked.connect(self.use_selection_as_replacement)
        form.replacement_code.textChanged.connect(self.update_replace)
        form.replacement_choice.currentIndexChanged.connect(lambda _i: self.update_replace())
        self.ctx.canvas.layoutDone.connect(lambda _layout: self.redraw())
        form.rewrite_list.setCurrentRow(0)
        return form.body

    # --- what the window and the lesson call ---------------------------------------------------

    def menu_actions(self) -> list[QAction]:
        """One command per built-in: the dock with it chosen and previewed."""
        return self.rewrites.menu_actions()

    def choose_rewrite(self, name: str) -> None:
        """Bring the dock forward with the built-in ``name`` chosen (and previewed)."""
        self.rewrites.choose_rewrite(name)

    def open_file(self, path: str | None = None) -> bool:
        """Read a pattern file and find its pattern (``found`` tells when)."""
        return self.files.open_file(path)

    def save_report(self, path: str | None = None) -> bool:
        """The last replacement's report as JSON (what ``fxstudio rewrite --json`` prints)."""
        return self.files.save_report(path)

    @property
    def report(self) -> Report | None:
        """The last replacement's report (applied, or held back for its check)."""
        return self.check.report

    def step(self, delta: int) -> None:
        self.matches.step(delta)

    # --- the document ----------------------------------------------------------------------

    def on_document(self, doc: GraphDocument | None) -> None:
        self.pattern = None
        for action in self.rewrites.menu_actions():  # a built-in rewrites a graph: one now
            action.setEnabled(doc is not None)
        self.marks.clear()
        self.check.set("", None)
        self._boxes_from_document()
        if self.rewrites.chosen_builtin() and doc is not None:
            self.rewrites.graph_changed_under_preview()
        else:
            self.rewrites.forget_matches("No pattern yet.")

    def redraw(self) -> None:
        self.marks.redraw(self.ctx.canvas.scene)

    def on_change(self, event: DocumentEvent) -> None:
        if event.kind is ChangeKind.VIEW_CHANGED:
            self._boxes_from_document()
            self.redraw()
            return
        if self.rewrites.chosen_builtin():  # its preview is of the graph before this change
            self.rewrites.graph_changed_under_preview()
        elif self.matches.result is not None:  # the matches are of the graph before it
            self.rewrites.forget_matches("The graph changed: Find again.")
        report = self.check.report
        if self.check.held is not None:  # held back on a copy of the graph before this change
            self.check.drop_withheld("The graph changed: the rewrite held back is dropped.")
        elif report is not None and report.result.edit is not None:
            if not self._is_current(report):  # its check is of another graph now
                self.check.set("", None)
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

    def _made_by(self, report: Report | None) -> str:
        """The built-in whose rewrite (``report``'s) is the graph's last edit, else ""."""
        if report is None or report.result.edit is None or not self._is_current(report):
            return ""
        return str(report.result.edit.record.get("builtin") or "")

    def _boxes_from_document(self) -> None:
        doc = self.document
        self.marks.boxes = (
            [(b.name, list(b.nodes)) for b in doc.pattern_boxes] if doc is not None else []
        )

    def _rewrite_chosen(self, builtin: Builtin | None) -> None:
        """Another rewrite chosen: the user's pattern and replacement shown for theirs only
        (a built-in's skips say why in the list)."""
        for part in (self.form.pattern_area, self.form.replacement_area, self.explanation):
            part.setVisible(builtin is None)
        self.replace_button.setText("Replace accepted" if builtin is None else "Replace")
        self.check.set("", None)  # (of the rewrite chosen before)
        self.update_replace()

    def _opened(self) -> None:
        """A pattern file was opened: its pattern is found."""
        self.pattern = None
        self.find()

    # --- making and finding ----------------------------------------------------------------

    def make_from_selection(self) -> Pattern | None:
        doc = self.document
        names = list(self.selection.names)
        if doc is None or not names:
            self.message.emit("Select the nodes of the pattern first (box or Ctrl+click them).")
            return None
        title = self.name.text().strip() or "pattern"
        try:
            pattern = pattern_from_nodes(doc, names, title, self.rules.default_rules)
        except UserError as exc:
            self.message.emit(str(exc))
            return None
        self.pattern = pattern
        self.pattern_code.setPlainText(pattern.code())
        self.rules.fill_scope(pattern)
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
            self.pattern = self.rules.applied(self.pattern)
            return self.pattern
        if not text:
            self.message.emit("Make a pattern from selected nodes, or type one as a function.")
            return None
        try:
            dialect = doc.request.chosen_frontend or "fx"
            self.pattern = pattern_from_code(text, dialect, self.rules.default_rules)
            self.rules.fill_scope(self.pattern)
            self.pattern = self.rules.applied(self.pattern)
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
        work: Callable[[], R],
        done: Callable[[R], None],
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
        then(value)
        self.update_replace()  # (after: a preview may have found nothing to replace)
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
            self.matches.show_found(found)
            self.found.emit(found)
            if then is not None:
                then(found)
            elif not found.matches:
                self.explain(None)

        return self._start("Finding…", lambda: find_matches(gm, pattern), done)

    def show_match(self, row: int) -> None:
        if self.matches.result is None or not 0 <= row < len(self.matches.result.matches):
            return
        m = self.matches.result.matches[row]
        self.marks.current = row
        self.redraw()
        self.selection.select(m.graph_nodes)
        self.ctx.canvas.center_on(m.graph_nodes)
        if self.rewrites.chosen_builtin():
            self.matches.show_place(row)
        elif self.document is not None and self.pattern is not None:
            self.explanation.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)  # a table
            self.explanation.setPlainText(side_by_side(self.document.graph_module, self.pattern, m))

    # --- why not -----------------------------------------------------------------------------

    def why_not_here(self) -> None:
        node = self.selection.current
        if node is None:
            self.message.emit("Select the node you expected to match, then ask again.")
            return
        if self.matches.result is None:
            self.find(then=lambda _found: self.explain(node))
        else:
            self.explain(node)

    def explain(
        self, at: str | None = None, then: Callable[[Explanation], None] | None = None
    ) -> bool:
        """Why the pattern does not match (``at``: that node), in a worker; ``explained``
        tells when it is shown."""
        doc, pattern, found = self.document, self.pattern, self.matches.result
        if doc is None or pattern is None:
            return False
        gm = doc.graph_module

        def done(why: Explanation) -> None:
            self.matches.show_explanation(why, at)
            self.explained.emit(why)
            if then is not None:
                then(why)

        return self._start("Explaining…", lambda: explain(gm, pattern, at=at, found=found), done)

    # --- replacing ---------------------------------------------------------------------------

    def replace_accepted(self) -> bool:
        """Replace the accepted matches (or run the chosen built-in) on a detached copy in a
        worker; the result becomes one undo step.  ``rewritten`` tells when it is applied."""
        doc = self.document
        if doc is None:
            return False
        choice = self.replacement_choice.currentData()
        kwargs: dict[str, Any] = {}
        if self.rewrites.chosen_builtin():
            spec = RewriteSpec(builtin=self.rewrites.chosen_builtin())
        else:
            if self.current_pattern() is None:
                return False
            kwargs = {"pattern": self.pattern, "found": self.matches.result}
            if self.matches.result is not None:
                kwargs["accepted"] = frozenset(self.matches.accepted())
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
                spec = self.files.spec()

        def work(copy: Copy) -> RewrittenCopy:
            return rewrite_copy(copy.detached(), RewriteRequest(spec, **kwargs))

        return self._start_on_copy(
            "Replacing… (on a copy of the graph; it becomes one undo step)",
            work,
            self.check.rewritten_on_copy,
        )

    def update_replace(self) -> None:
        """*Replace* is for a built-in, or a pattern with its replacement: an empty
        replacement is no replacement (never an example's code)."""
        builtin = self.rewrites.chosen_builtin()
        missing = (
            not builtin
            and self.replacement_choice.currentData() != BOX
            and not self.replacement_code.toPlainText().strip()
        )
        previewed = self.rewrites.previewed
        nothing = bool(builtin) and previewed is not None and not previewed.result.replaced
        self.replace_button.setEnabled(not self.busy() and not missing and not nothing)
        tip = NO_REPLACEMENT if missing else ""
        if nothing and previewed is not None:
            tip = f"Nothing to replace here: {previewed.verdict or 'no place to change'}"
        self.replace_button.setToolTip(tip)

    def use_selection_as_replacement(self) -> None:
        doc = self.document
        names = list(self.selection.names)
        if doc is None or not names:
            self.message.emit("Select the nodes of the replacement first.")
            return
        try:
            self.replacement_box = pattern_from_nodes(doc, names, "replacement", DEFAULT_RULES)
        except UserError as exc:
            self.message.emit(str(exc))
            return
        self.replacement_choice.setCurrentIndex(self.replacement_choice.findData(BOX))
        self.replacement_code.setPlainText(self.replacement_box.code())
        self.marks.boxes = [*self.marks.boxes, ("replacement", list(self.replacement_box.origin))]
        self.redraw()
