"""The Step dock: run the document's graph node by node (the step flow's stepper,
:func:`fxstudio.core.flows.step_through`, moved one step at a time) and show each node's
value; the canvas, the node table and the code follow the node last run (selecting it
there), and the card shows its generated line and the user's source line -- the three-way
link.

Every move runs in a worker thread on a copy of the graph (the window stays live; the
document is never changed by stepping).  An edit of the graph ends the stepping (the card is
cleared, the count is the edited graph's): the next move starts again on the edited graph; a
move that was under way when the graph changed is dropped.  Collapsed modules follow debugger
rules: *Over* runs a collapsed module in one step, *Step* expands it and stops at its first
node.  Each action is enabled only when it can act (*Back* once a node has run, *Step* until
the end, *To selected* and *Breakpoint* with a selected node).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from fxstudio.core.flows import Stepper
from fxstudio.core.flows.layout import drawn_tree
from fxstudio.core.flows.step import picture, step_move
from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.core.graph.graphviews import format_target
from fxstudio.qt import theme
from fxstudio.qt.copies import Copy, run_on_copy
from fxstudio.qt.forms import ShapeWatcher
from fxstudio.qt.panels.base import DocumentPanel, in_words
from fxstudio.qt.panels.step import form as step_form
from fxstudio.qt.workers import Task


class StepPanel(DocumentPanel, step_form.StepForm):
    """The dock's controller; its actions also fill the window's *Step* menu."""

    id, title, menu = "step", "Step", "&Step"
    moved = Signal()  # a move finished (or was dropped) and the card shows where it is
    failed = Signal(str)  # a move (or starting) failed: the text says why

    def build(self) -> QWidget:
        self.stepper: Stepper | None = None
        self.task: Task | None = None
        self.breakpoint_names: set[str] = set()  # kept when the stepper starts again
        self._filling = False
        body = step_form.build(self, self.ctx.window)
        self.shape = ShapeWatcher(body, lambda shape: step_form.arrange(self, shape == "wide"))
        self.restart_action.triggered.connect(lambda: self._move(lambda s: s.restart()))
        self.back_action.triggered.connect(lambda: self._move(lambda s: s.back()))
        self.into_action.triggered.connect(self.step_into)
        self.over_action.triggered.connect(self.step_over)
        self.out_action.triggered.connect(lambda: self._move(lambda s: s.step_out()))
        self.continue_action.triggered.connect(lambda: self._move(lambda s: s.run_to_end()))
        self.to_selected_action.triggered.connect(self.run_to_selected)
        self.breakpoint_action.triggered.connect(self.toggle_breakpoint)
        self.slider.valueChanged.connect(self._slid)
        self.slider.sliderReleased.connect(lambda: self._slid(self.slider.value()))
        self.first_difference.clicked.connect(self._go_to_first_difference)
        self.selection.changed.connect(lambda _names: self._enable())
        self._enable()
        return body

    def menu_actions(self) -> list[QAction]:
        return list(self.actions)

    # -- the document -----------------------------------------------------------------

    def on_document(self, doc: GraphDocument | None) -> None:
        self.stepper = None
        self.breakpoint_names = set()
        self._show()
        self.status_label.setText("")  # (what it said was of the graph before)

    def on_change(self, event: DocumentEvent) -> None:
        """The graph changed (shapes worked out again after an edit change no node): the
        stepping ends, and the card and the count are of the edited graph."""
        if event.kind in (ChangeKind.VIEW_CHANGED, ChangeKind.SHAPES_CHANGED):
            return
        assert self.document is not None
        if self.breakpoint_names:
            self.breakpoint_names &= set(self.document.node_names())
        stepping, self.stepper = self.stepper is not None, None
        if self.busy:  # the move under way is dropped when it ends (_moved)
            return
        self.session.soon(self._show)
        if stepping:
            self.status_label.setText(
                "The graph was edited: the next step starts again on the new graph."
            )

    def _enable(self) -> None:
        """Each action only when it can act: the slider and breakpoints with a document,
        moves when no move runs -- back once a node has run, forward until the end."""
        s, doc = self.stepper, self.document
        idle = doc is not None and len(doc) > 0 and not self.busy
        started = s is not None and s.position > 0
        ahead = s is None or not s.finished
        selected = doc is not None and self.selection.current in doc
        for action, can in (
            (self.restart_action, idle and started),
            (self.back_action, idle and started),
            (self.into_action, idle and ahead),
            (self.over_action, idle and ahead),
            (self.out_action, idle and ahead),
            (self.continue_action, idle and ahead),
            (self.to_selected_action, idle and selected),
            (self.breakpoint_action, selected),
        ):
            action.setEnabled(can)
        self.slider.setEnabled(doc is not None)

    # -- moves ----------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.task is not None

    def _move(self, fn: Callable[[Stepper], Any], text: str = "Running…") -> None:
        """Run ``fn(stepper)`` in a worker (the stepper is made first, on a copy of the
        graph, when there is none).  Its stepper is taken while the graph is the one it
        started on (:mod:`fxstudio.qt.window.graph_state`: an edit undone is the same graph)."""
        if self.document is None or self.busy:
            return
        stepper = self.stepper
        breakpoints = set(self.breakpoint_names)

        def work(copy: Copy) -> Stepper:
            return step_move(stepper, copy.detached, fn, breakpoints=breakpoints, say=copy.say)

        job = run_on_copy(
            self,
            work,
            self._moved,
            stale=self._moved_stale,
            gone=self._moved_gone,
            failed=self._move_failed,
            copy=stepper is None,  # (a stepper carries its own copy)
            states=self.session,
            parent=self,
        )
        if not job.started:  # reading the graph failed: told (_move_failed)
            return
        self.task = job.task
        self.task.stage.connect(self.status_label.setText)
        self.status_label.setText(text)
        self._enable()

    def _finish_task(self) -> None:
        task, self.task = self.task, None
        if task is not None:
            task.wait()
        self._enable()

    def _moved_stale(self, _stepper: Stepper) -> None:
        """Stepped the graph before an edit: dropped, and said so."""
        self._dropped(
            "The graph changed while it ran: the next step starts again on the graph as it is."
        )

    def _moved_gone(self, _stepper: Stepper) -> None:
        """Stepped a model no longer open: dropped."""
        self._dropped()

    def _dropped(self, why: str = "") -> None:
        self._finish_task()
        self._show()
        if why:
            self.status_label.setText(why)
        self.moved.emit()

    def _moved(self, stepper: Stepper) -> None:
        self._finish_task()
        self.stepper = stepper
        stepper.set_breakpoints(self.breakpoint_names & set(stepper.index))  # (set while busy)
        self._show()
        current = stepper.current
        if current is not None and self.document is not None and current in self.document:
            self.selection.select([current])  # the canvas, table and code follow
        self.moved.emit()

    def _move_failed(self, exc: BaseException) -> None:
        self._finish_task()
        self._show()
        self.status_label.setText(in_words(exc))
        self.failed.emit(in_words(exc))

    def _collapsed_around(self, name: str | None) -> list[str]:
        """The collapsed module groups holding ``name``, outermost first."""
        doc = self.document
        if doc is None or name is None or not doc.collapsed:
            return []
        return [
            g.path
            for g in drawn_tree(doc).walk()  # (as drawn: with the group set aside)
            if g.path in doc.collapsed and name in g.all_nodes()
        ]

    def _next(self) -> str | None:
        if self.stepper is not None:
            return self.stepper.next_node
        doc = self.document
        return doc.node_names()[0] if doc is not None and len(doc) else None

    def step_into(self) -> None:
        """One node; a collapsed module around it is expanded first (entered)."""
        assert self.document is not None
        for group in self._collapsed_around(self._next()):
            self.document.set_collapsed(group, False)
        self._move(lambda s: s.step() if not s.finished else None)

    def step_over(self) -> None:
        """A collapsed module in one step (its output shown), else one node."""
        groups = self._collapsed_around(self._next())
        if groups:
            self._move(lambda s: s.step_over(groups[0]), f"Running module {groups[0]}…")
        else:
            self._move(lambda s: s.step() if not s.finished else None)

    def run_to_selected(self) -> None:
        name = self.selection.current
        if name is None:
            self.message.emit("Select the node to run to, then Run to selected.")
            return
        self._move(lambda s: s.run_to(name), f"Running to {name}…")

    def goto(self, position: int) -> None:
        self._move(lambda s: s.goto(position))

    def toggle_breakpoint(self) -> None:
        name = self.selection.current
        if name is None:
            self.message.emit("Select the node to break at, then Breakpoint (F9).")
            return
        self.breakpoint_names ^= {name}
        if self.stepper is not None and not self.busy:
            self.stepper.set_breakpoints(self.breakpoint_names & set(self.stepper.index))
        self._show_breakpoints()

    def _slid(self, value: int) -> None:
        if self._filling or self.slider.isSliderDown():
            return
        if self.stepper is None or value != self.stepper.position:
            self.goto(value)

    def _go_to_first_difference(self) -> None:
        s = self.stepper
        first = s.first_difference() if s is not None else None
        if first is not None:
            self._move(lambda st: st.run_to(first))

    # -- the card -----------------------------------------------------------------------

    def _show_breakpoints(self) -> None:
        names = sorted(self.breakpoint_names)
        self.breakpoints.setText(", ".join(names) if names else "none (F9 on a selected node)")

    def _show(self) -> None:
        s, doc = self.stepper, self.document
        self._enable()
        self._show_breakpoints()
        self._filling = True
        self.slider.setRange(0, len(s) if s is not None else len(doc) if doc is not None else 0)
        self.slider.setValue(s.position if s is not None else 0)
        self._filling = False
        name = s.current if s is not None else None
        if doc is None:
            self.where.setText("Open a model to step through it.")
        elif s is None or name is None:
            total = len(doc) if s is None else len(s)
            self.where.setText(f"Before the first node (0 of {total} run). Step (F11) to begin.")
        else:
            where = f"Node {s.position} of {len(s)} run"
            if s.finished:
                where += " — at the end"
            if s.recomputed:
                where += (
                    f" — stepped back past the last {s.window} kept values: "
                    f"{s.recomputed} nodes were run again"
                )
            self.where.setText(where)
        if s is None or name is None:
            self.heading.setText("")
            step_form.show_summary(self, None)
            for label in (self.eager, self.code_line, self.source_line, self.picture_caption):
                label.setText("")
            self.picture.clear()
            self.first_difference.hide()
            return
        node = s.order[s.index[name]]
        self.heading.setText(f"{name}   ({node.op} {format_target(node)})")
        summary = s.summary(name)
        step_form.show_summary(self, summary)
        pic = picture(s.value(name)) if s.kept(name) else None
        if pic is not None:
            self.picture.setPixmap(step_form.picture_pixmap(pic))
            self.picture_caption.setText(pic.caption)
        else:
            self.picture.clear()
            self.picture_caption.setText("")
        agreement = s.agreements.get(name)
        if agreement is None:
            self.eager.setText(
                "no module boundary here" if s.eager is not None else "not compared (no source)"
            )
            self.eager.setStyleSheet("")
        else:
            self.eager.setText(agreement.describe())
            c = theme.colors()
            self.eager.setStyleSheet(f"color: {c.bad if agreement.differs else c.good}")
        first = s.first_difference()
        self.first_difference.setVisible(first is not None)
        if first is not None:
            self.first_difference.setText(f"⚠ First node that differs from eager: {first} — go")
        self._show_lines(name)
        self.status_label.setText("")

    def _show_lines(self, name: str) -> None:
        doc = self.document
        if doc is None or name not in doc:
            self.code_line.setText("")
            self.source_line.setText("")
            return
        line = doc.code_line_map().get(name)
        code = doc.code().splitlines()
        if line is not None and 0 < line <= len(code):
            self.code_line.setText(f"line {line}: {code[line - 1].strip()}")
        else:
            self.code_line.setText("")
        loc = doc.source_location(name)
        self.source_line.setText(
            f"{loc.filename.rpartition('/')[2]}:{loc.lineno}: {loc.text.strip()}" if loc else "—"
        )
        if loc:
            self.source_line.setToolTip(f"{loc.filename}:{loc.lineno}")
