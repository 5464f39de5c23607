"""The Learn FX dock (*Help ▸ Learn FX*): the lesson of :mod:`fxstudio.core.lesson`, step by
step, over the real window.  Each step sets the window up (opens the model it needs) and
checks what the learner does there -- the checks are core functions; this controller only
records the facts they read (the node selected, how far the Step dock ran, a pattern that
missed, a trap fixed, the speed-up measured) and re-checks when the document or a fact
changes.  The lesson state is saved in the session file and resumes with it.  Step 2's
trace replay is :mod:`~fxstudio.qt.panels.lesson.replay`'s.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMainWindow, QTextBrowser, QWidget

from fxstudio.core.errors import CaptureError
from fxstudio.core.flows import Profile
from fxstudio.core.flows import lesson as course
from fxstudio.core.flows.lesson import (
    PASS_MODEL,
    STEPS,
    TRAPS,
    Diagnosis,
    LessonState,
    Verdict,
    record_comparison,
    record_stepper,
    record_trap,
)
from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.core.graph.request import OpenRequest
from fxstudio.qt import theme
from fxstudio.qt.forms import ShapeWatcher
from fxstudio.qt.panels.base import DocumentPanel
from fxstudio.qt.panels.code import CodePanel
from fxstudio.qt.panels.lesson import form as lesson_form
from fxstudio.qt.panels.lesson.form import Widget, button
from fxstudio.qt.panels.lesson.replay import TraceReplay
from fxstudio.qt.panels.patterns.check import bring_into_view
from fxstudio.qt.panels.patterns.panel import PatternsPanel
from fxstudio.qt.panels.run.panel import RunPanel
from fxstudio.qt.panels.step.panel import StepPanel
from fxstudio.qt.workers import Task

ROOM = 0.5  # a dock a step works in, shorter than this part of the window, is made a tab


class LessonPanel(DocumentPanel, lesson_form.LessonForm):
    """The lesson's controller; it works with the Step, Run, Patterns and code docks."""

    id, title = "lesson", "Learn FX"
    requires = (StepPanel, RunPanel, PatternsPanel, CodePanel)

    checked = Signal(object)  # the Verdict of the step shown, after every check
    replayed = Signal()  # the trace replay reached its last node
    diagnosed = Signal(object)  # a Diagnosis of the trap just opened
    resumed = Signal()  # a saved session's lesson is read: the window shows the Learn layout
    traced = Signal(str)  # a fresh trace of the model (spec) was counted, for step 10

    def build(self) -> QWidget:
        self.state = LessonState()
        self.active = False  # the lesson was started (its state goes into saved sessions)
        self.diagnosis: Diagnosis | None = None
        self._trap: tuple[str, OpenRequest] | None = None  # a trap being opened
        self._counting = ""  # the spec whose fresh trace a worker counts (step 10)
        self.replayer = TraceReplay(
            self.ctx.canvas,
            self.selection,
            lambda: self.document,
            lambda: self.step.id == "trace",
            self._replayed_to,
            self,
        )
        self.replayer.replayed.connect(self.replayed)
        body = lesson_form.build(self)
        self.shape = ShapeWatcher(body, lambda shape: lesson_form.arrange(self, shape == "wide"))
        self.back_button.clicked.connect(lambda: self.go(self.state.step - 1))
        self.next_button.clicked.connect(
            lambda: self.go(self.state.step + 1) if self.active else self.start()
        )
        self.check_button.clicked.connect(self.recheck)
        self._not_started()
        self.selection.changed.connect(self._selected)
        self.panel(StepPanel).moved.connect(self._stepped)
        self.panel(RunPanel).finished.connect(self._run_finished)
        self.panel(PatternsPanel).found.connect(self._found)
        self.session.loaded.connect(self._loaded)
        self.session.loadFailed.connect(self._load_failed)
        return body

    def _not_started(self) -> None:
        """What the dock says before the lesson starts (the Learn layout shows it so)."""
        self.heading.setText(f"Learn FX — {len(STEPS)} checked steps on this window")
        doc = self.document
        spec = doc.request.spec if doc is not None else None
        self.text.setMarkdown(lesson_form.not_started_text(spec, self.state.model))
        self.back_button.setEnabled(False)
        self.check_button.setEnabled(False)
        self.next_button.setText("Start ▶")
        self.next_button.setEnabled(True)

    def on_document(self, doc: GraphDocument | None) -> None:  # facts of the one before go
        self.state.seen_model(doc.request.spec if doc is not None else None)
        if not self.active:
            self._not_started()

    def open(self, request: OpenRequest) -> bool:
        """Open what a step needs in place of the document -- asking first, as every command
        that replaces it does (Cancel keeps it and its undo history); a failure is the
        lesson's to explain (no message box).  True when the open started."""
        return self.session.replace(request, tell=False)

    # -- starting, moving -----------------------------------------------------------------

    @property
    def step(self) -> course.Step:
        return STEPS[self.state.step]

    def start(self, state: LessonState | None = None) -> None:
        """Show the dock at the saved step (or the first)."""
        self.active = True
        self.check_button.setEnabled(True)
        if state is not None:
            self.state = state
        self.dock.show()
        self.dock.raise_()
        self.go(self.state.step)

    def go(self, index: int) -> None:
        index = max(0, min(index, len(STEPS) - 1))
        self.replayer.stop()
        self.state.step = index
        step = self.step
        if step.begin is not None and step.id not in self.state.done:  # (not again once done)
            step.begin(self.document, self.state)
        spec = step.opens(self.document, self.state) if step.opens is not None else None
        if spec:
            self.open(OpenRequest(spec))
        self.render()

    def render(self) -> None:
        step, doc = self.step, self.document
        for i, b in enumerate(self.step_buttons):
            b.setChecked(i == self.state.step)
            done = STEPS[i].id in self.state.done
            b.setText(f"✓{i + 1}" if done else str(i + 1))
        self.heading.setText(f"Step {self.state.step + 1} of {len(STEPS)} — {step.title}")
        lesson_form.show_markdown(self.text, step.intro(doc, self.state))
        self.task.setText("Your turn: " + step.task(doc, self.state))
        lesson_form.clear(self.extra_layout)
        getattr(self, f"_extra_{step.id}", lambda: None)()
        self.back_button.setEnabled(self.state.step > 0)
        self.recheck()

    def recheck(self) -> Verdict:
        step = self.step
        verdict = step.check(self.document, self.state)
        if verdict.ok:
            self.state.mark(step.id)
            self.step_buttons[self.state.step].setText(f"✓{self.state.step + 1}")
        colour = theme.colors().good if verdict.ok else theme.colors().pending
        self.verdict.setText(("✓ " if verdict.ok else "… ") + verdict.message)
        self.verdict.setStyleSheet(f"color: {colour}; font-weight: bold")
        last = self.state.step == len(STEPS) - 1
        self.next_button.setEnabled(not last and (verdict.ok or step.id in self.state.done))
        if last and verdict.ok:
            self.next_button.setText("Done ✓")
        else:
            self.next_button.setText("Next ▶")
        self.checked.emit(verdict)
        return verdict

    # -- facts from the window ----------------------------------------------------------------

    def _selected(self, names: list[str]) -> None:
        self.state.facts["selected"] = names[0] if len(names) == 1 else None
        if self.active and self.step.id == "code":
            self.recheck()

    def _stepped(self) -> None:
        stepper = self.panel(StepPanel).stepper
        if stepper is not None:
            record_stepper(self.state, stepper)
        if self.active and self.step.id == "interpret":
            self.recheck()

    def _found(self, found: Any) -> None:
        """The Patterns dock found a pattern's matches: step 7 counts them (none: it still
        misses; some: what is left is Replace)."""
        if self.active and self.step.id == "pattern":
            self.state.facts["matched"] = len(found.matches)
            if found.matches:  # in sight in the dock: Replace accepted, the step's next press
                bring_into_view(self.panel(PatternsPanel).replace_button)
            self.recheck()

    def _run_finished(self, result: object) -> None:  # a Profile, or what stopped the run
        if isinstance(result, Profile) and result.comparison is not None:
            record_comparison(self.state, result.comparison)
            if self.active:
                self.recheck()

    def _loaded(self, doc: GraphDocument) -> None:
        saved = doc.session_extra.get("lesson") if doc.session_extra else None
        if saved and not self.active:
            self.state = LessonState.from_json(saved)
            self.state.seen_model(doc.request.spec)  # (a session saved before facts_of)
            self.resumed.emit()  # the Learn layout (the window's)
            if not self.active:
                self.start()
            return
        if not self.active:
            return
        record_trap(self.state, doc)
        trap = self._trap
        self._trap = None
        if (
            trap is not None
            and doc.request.spec == trap[1].spec
            and trap[0] not in self.state.facts.get("fixed", [])
        ):
            self._diagnose(lambda: course.diagnose(trap[1], doc), trap[1])
        self.render()

    def on_change(self, event: DocumentEvent) -> None:
        if self.active and event.kind is not ChangeKind.VIEW_CHANGED:
            self.recheck()

    def _load_failed(self, exc: BaseException) -> None:
        trap, self._trap = self._trap, None
        if self.active and trap is not None and isinstance(exc, CaptureError):
            self._diagnose(lambda: course.diagnose(trap[1], exc), trap[1])

    # -- the steps' own widgets ----------------------------------------------------------------

    def _add(self, widget: Widget) -> Widget:
        self.extra_layout.addWidget(widget)
        return widget

    def _extra_trace(self) -> None:
        for widget in self.replayer.widgets(self.extra):
            self._add(widget)

    def _replayed_to(self, shown: int) -> None:
        self.state.facts["replayed"] = max(int(self.state.facts.get("replayed", 0)), shown)
        self.recheck()

    def _extra_ir(self) -> None:
        doc = self.document
        if doc is None:
            return
        for q in course.quiz(doc):
            self._add(
                lesson_form.quiz_box(self.extra, q, self.state.answers.get(q.id), self.answer)
            )

    def answer(self, question: str, value: str) -> None:
        self.state.answers[question] = value
        self.recheck()

    def _extra_code(self) -> None:
        self._add(
            button(
                self.extra,
                "Show Generated code",
                "lessonShowCode",
                lambda: self._raise(CodePanel),
            )
        )

    def _extra_interpret(self) -> None:
        self._add(
            button(
                self.extra,
                "Show the Step dock",
                "lessonShowStep",
                lambda: self._raise(StepPanel),
            )
        )

    def _raise(self, cls: type[DocumentPanel]) -> None:
        """Show the dock a step works in, with room to work in it: one that is not shown, or
        is squeezed under another (a layout without it), goes in front as a tab of the
        Generated code column (as tall as the window)."""
        dock = self.panel(cls).dock
        window, code = self.ctx.window, self.panel(CodePanel).dock
        squeezed = dock.isHidden() or dock.height() < window.height() * ROOM
        if (
            isinstance(window, QMainWindow)
            and squeezed
            and not dock.isFloating()
            and code is not dock
            and code.isVisible()
            and not code.isFloating()
        ):
            window.tabifyDockWidget(code, dock)
        dock.show()
        dock.raise_()

    def _extra_pattern(self) -> None:
        self._add(button(self.extra, "Try the pattern", "lessonTryPattern", self.try_pattern))
        self._add(button(self.extra, "Fix it", "lessonFixPattern", self.fix_pattern))

    def try_pattern(self) -> None:
        """The deliberate miss in the Patterns dock, found: it does not match; why is shown
        (``checked`` tells when the verdict says so)."""
        patterns = self.panel(PatternsPanel)

        def missed(why: Any) -> None:
            first = why.describe().strip().splitlines()
            self.state.facts["missed"] = first[0] if first else "no match"
            bring_into_view(patterns.explanation, top=True)  # the why, in sight in the dock
            self.recheck()

        def found(result: Any) -> None:
            if result.matches:
                self.recheck()
            else:
                patterns.explain(None, then=missed)

        self._load_pattern(fixed=False, then=found)

    def fix_pattern(self) -> None:
        """The pattern that matches, in the Patterns dock, found."""
        self._load_pattern(fixed=True)

    def _load_pattern(self, fixed: bool, then: Any = None) -> bool:
        doc = self.document
        ex = course.pattern_exercise(doc) if doc is not None else None
        if ex is None:
            return False
        patterns = self.panel(PatternsPanel)
        self._raise(PatternsPanel)
        patterns.pattern_code.setPlainText(ex.fix if fixed else ex.miss)
        patterns.replacement_code.setPlainText(ex.replacement)
        return bool(patterns.find(then=then))

    def _extra_failures(self) -> None:
        fixed = set(self.state.facts.get("fixed", []))
        for cid, spec, label in TRAPS:
            row = QWidget(self.extra)
            lay = QHBoxLayout(row)
            lay.setContentsMargins(0, 0, 0, 0)
            mark = QLabel(("✓ " if cid in fixed else "· ") + label, row)
            lay.addWidget(mark, 1)
            lay.addWidget(
                button(
                    row,
                    "Open",
                    f"lessonOpen_{cid}",
                    lambda _=False, c=cid, s=spec: self.open_trap(c, s),
                )
            )
            self._add(row)
        self.diagnosis_view = self._add(QTextBrowser(self.extra))
        self.diagnosis_view.setObjectName("lessonDiagnosis")
        self.diagnosis_view.setMinimumHeight(180)
        self.fix_row = QWidget(self.extra)
        self.fix_layout = QHBoxLayout(self.fix_row)
        self.fix_layout.setContentsMargins(0, 0, 0, 0)
        self._add(self.fix_row)
        if self.diagnosis is not None:
            self._show_diagnosis(self.diagnosis)

    def open_trap(self, cid: str, spec: str) -> None:
        request = OpenRequest(spec)
        if self.open(request):
            self._trap = (cid, request)
            self.diagnosis = None

    def _diagnose(self, fn: Any, request: OpenRequest) -> None:
        """Explain a trap in a worker (the fixes are tried: each captures the model again)."""
        task = Task(fn, self)
        task.succeeded.connect(self._diagnosed)
        task.failed.connect(lambda exc: self.verdict.setText(f"Could not explain it: {exc}"))
        if self.step.id == "failures" and hasattr(self, "diagnosis_view"):
            self.diagnosis_view.setPlainText(f"Explaining {request.spec}…")
        task.start()

    def _diagnosed(self, found: list[Diagnosis]) -> None:
        if not found:
            return
        self.diagnosis = found[0]
        if self.step.id == "failures":
            self._show_diagnosis(found[0])
        self.diagnosed.emit(found[0])

    def _show_diagnosis(self, d: Diagnosis) -> None:
        loc = d.location
        where = f"{loc.filename.rpartition('/')[2]}:{loc.lineno}" if loc else "unknown line"
        line = f"\n\n```python\n{loc.text.strip()}\n```" if loc and loc.text else ""
        lesson_form.show_markdown(
            self.diagnosis_view, f"**{d.title}** at `{where}`{line}\n\n{d.explanation}"
        )
        lesson_form.clear(self.fix_layout)
        for i, fix in enumerate(d.fixes):
            b = button(
                self.fix_row,
                f"Fix: {fix.label}",
                f"lessonFix{i}",
                lambda _=False, f=fix: self.open(f.request),
            )
            b.setToolTip(fix.explanation)
            self.fix_layout.addWidget(b)
        if not d.fixes:
            self.fix_layout.addWidget(
                QLabel(
                    "fxstudio cannot fix this one itself: change the code as above.", self.fix_row
                )
            )

    def _extra_pass(self) -> None:
        self._add(
            button(
                self.extra,
                "Open the ResNet",
                "lessonOpenResnet",
                lambda: self.open(OpenRequest(PASS_MODEL)),
            )
        )
        self._add(
            button(self.extra, "Show the Run dock", "lessonShowRun", lambda: self._raise(RunPanel))
        )
        self._add(
            button(
                self.extra,
                "Show the Patterns dock",
                "lessonShowPatterns",
                lambda: self._raise(PatternsPanel),
            )
        )

    def _extra_export(self) -> None:
        self._add(
            button(self.extra, "Open with torch.export", "lessonOpenExport", self.open_export)
        )
        spec, doc = course.trace_size_wanted(self.state), self.document
        if (
            spec
            and spec != self._counting
            and doc is not None
            and doc.request.spec == spec
            and doc.request.frontend == "fx"
        ):
            self._count_trace(doc.request)

    def _count_trace(self, request: OpenRequest) -> None:
        """Count a fresh symbolic trace of ``request``'s model in a worker (it runs the
        model's code): step 10 compares the export graph with it, not with the graph open
        now, which the learner edited (``traced(spec)`` once it is counted)."""
        task = Task(lambda: course.traced_nodes(request), self)
        self._counting = request.spec
        task.finished.connect(lambda: setattr(self, "_counting", ""))

        def counted(nodes: int) -> None:
            course.record_trace_size(self.state, request.spec, nodes)
            self.traced.emit(request.spec)
            if self.active and self.step.id == "export":
                self.recheck()

        task.succeeded.connect(counted)
        task.start()

    def open_export(self) -> None:
        doc = self.document
        spec = doc.request.spec if doc is not None and doc.request.spec else self.state.model
        self.open(OpenRequest(spec, frontend="export"))
