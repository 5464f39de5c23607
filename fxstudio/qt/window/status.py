"""The status bar: the session's messages, a node/module count, whether the document is
structure only (no weights), the open under way (with
where the model's code is once it takes a while, and *Cancel*), and a long layout's
progress (with *Stop layout*).

A *passing* message -- "Not done: …", or one about the graph as an edit left it -- is of the
moment it was shown: the next thing done (a command started, an edit, undo or redo, another
document, a save) takes it away, so it never speaks of an earlier state."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QStatusBar,
    QWidget,
)

from fxstudio.core.graph.document import ChangeKind, DocumentEvent
from fxstudio.core.wording import for_window
from fxstudio.qt.canvas.controller import CanvasController
from fxstudio.qt.window.session import DocumentSession, open_stage, shortened

WHERE_AFTER_S = 2.0  # opening takes this long: the status bar says where the model's code is

#: The permanent note of a structure-only document, and what it means.
STRUCTURE_ONLY = "Structure only: no weights"
STRUCTURE_TIP = (
    "This document holds the model's structure only: every shape and dtype, no weights. "
    "Looking, editing, rewriting and saving work; running, profiling, stepping and compiling "
    "need the weights (open it again without Structure only, or a smaller configuration)."
)


def structure_reason(notes: list[str]) -> str:
    """Why a document holds no weights, whole: the open's notes that say so (the status bar
    cuts the one it shows at the window's width), then what that means -- as paragraphs, so
    that a tooltip wraps them (a plain one is a single line, past the screen's edge)."""
    said = [for_window(n) for n in notes if "structure only" in n or "no weights" in n]
    return "".join(f"<p>{html.escape(text)}</p>" for text in [*said, STRUCTURE_TIP])


class StatusArea(QObject):
    """Shows ``session``'s status and busy state, and ``canvas``'s layout progress, in
    ``bar``; the window's title follows the document and whether it is modified."""

    def __init__(
        self, bar: QStatusBar, session: DocumentSession, canvas: CanvasController, window: Any
    ) -> None:
        super().__init__(window)
        self.bar, self.session, self.window = bar, session, window
        self._modules = 0
        self._passing = ""  # the passing message shown, if it still is
        self._where = ""  # where in the model's code the open under way is, last looked
        self.summary = QLabel(bar)
        self.structure = QLabel(STRUCTURE_ONLY, bar)  # shown while the document has no weights
        self.structure.setToolTip(structure_reason([]))  # (and why, once a document says)
        self.structure.setCursor(Qt.CursorShape.PointingHandCursor)  # a click: why, whole
        self.structure.installEventFilter(self)
        self.structure.hide()
        self.progress = QProgressBar(bar)
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(160)
        self.progress.hide()
        self.cancel = QPushButton("Cancel", bar)
        self.cancel.hide()
        self.cancel.clicked.connect(lambda: session.cancel_open())
        self.layout_progress = QProgressBar(bar)
        self.layout_progress.setMaximumWidth(160)
        self.layout_progress.setFormat("layout %v/%m")
        self.layout_progress.hide()
        self.layout_stop = QPushButton("Stop layout", bar)
        self.layout_stop.hide()
        self.layout_stop.clicked.connect(canvas.stop_layout)
        for widget in (
            self.structure,
            self.summary,
            self.layout_progress,
            self.layout_stop,
            self.progress,
            self.cancel,
        ):
            bar.addPermanentWidget(widget)
        self._watch = QTimer(self)  # where the model's code is, while opening takes long
        self._watch.setInterval(1000)
        self._watch.timeout.connect(self._watch_loading)
        self._layout_timer = QTimer(self)  # a layout that takes a while shows its progress
        self._layout_timer.setSingleShot(True)
        self._layout_timer.timeout.connect(self.layout_progress.show)
        self._layout_timer.timeout.connect(self.layout_stop.show)
        session.status.connect(self.show)
        session.busy.connect(self._busy)
        session.openProgress.connect(self._open_progressed)
        session.documentChanged.connect(lambda _doc: self.update_summary())
        session.changed.connect(self._changed)
        session.modifiedChanged.connect(lambda _modified: self.update_title())
        session.caughtUp.connect(self.update_summary)
        canvas.layoutStarted.connect(lambda: self._layout_timer.start(300))
        canvas.layoutProgress.connect(self._layout_progressed)
        for signal in (canvas.layoutDone, canvas.layoutFailed, canvas.layoutStopped):
            signal.connect(self._layout_finished)
        canvas.layoutDone.connect(self._notes)
        moved_on = (session.undo_stack.indexChanged, session.documentChanged, session.saved)
        for signal in (*moved_on, window.actionStarted):
            signal.connect(self._moved_on)
        bar.destroyed.connect(self._bar_gone)  # (closing: the bar goes before the session)
        bar.installEventFilter(self)  # a long message elided before the counts, not cut

    def message_rect(self) -> QRect:
        """Where the message is drawn: left of the first permanent widget shown."""
        right = self.bar.width() - 12
        for child in self.bar.findChildren(
            QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly
        ):
            if child.isVisible() and child.x() > 6:
                right = min(right, child.x() - 8)
        return QRect(6, 0, max(right - 6, 0), self.bar.height())

    def shown_message(self) -> str:
        """The message as it fits (elided at the end; the whole in the tooltip)."""
        text = self.bar.currentMessage()
        width = self.message_rect().width()
        return self.bar.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, width)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.structure and event.type() == QEvent.Type.MouseButtonRelease:
            if getattr(self.window, "interactive", True):  # (a test's window shows none)
                self.explain_structure()
            return True
        if watched is self.bar and event.type() == QEvent.Type.Paint and self.bar.currentMessage():
            shown = self.shown_message()
            full = self.bar.currentMessage()
            self.bar.setToolTip(full if shown != full else "")
            painter = QPainter(self.bar)
            painter.setPen(self.bar.palette().windowText().color())
            align = Qt.AlignmentFlag.AlignLeading | Qt.AlignmentFlag.AlignVCenter
            painter.drawText(self.message_rect(), int(align), shown)
            painter.end()
            return True
        return False

    def explain_structure(self) -> QMessageBox:
        """Why the document holds no weights, whole, in a message (its text selectable)."""
        box = QMessageBox(
            QMessageBox.Icon.Information, STRUCTURE_ONLY, STRUCTURE_ONLY, parent=self.window
        )
        box.setInformativeText(self.structure.toolTip())
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.open()
        return box

    def show(self, text: str, ms: int = 0, passing: bool = False) -> None:
        """Show ``text`` for ``ms`` (0: until replaced); ``passing``: only until the next
        thing is done.  Core's messages name command-line options: shown as the window's places."""
        text = for_window(text)
        self.bar.showMessage(text, ms)
        self._passing = text if passing else ""

    def _moved_on(self, *_args: object) -> None:
        if self._passing and self.bar.currentMessage() == self._passing:
            self.bar.clearMessage()
        self._passing = ""

    def _bar_gone(self) -> None:
        self._passing = ""  # nothing shown any more: nothing to take away

    def _busy(self, busy: bool) -> None:
        opening = busy and self.session.opening is not None
        self.progress.setRange(0, 0)
        self.progress.setVisible(busy)
        self.cancel.setVisible(opening)
        if opening:
            self._where = ""
            self._watch.start()
        else:
            self._watch.stop()

    def _open_progressed(self, _stage: str, done: int, total: int) -> None:
        """A stage with a count fills the bar; one without (tracing, export) runs it."""
        self.progress.setRange(0, total)  # (0, 0): busy, no count
        self.progress.setValue(done)
        self._say_opening()

    def _watch_loading(self) -> None:
        """Once opening takes a while, say where in the model's code it is."""
        if self.session.opening is None:
            self._watch.stop()
            return
        if self.session.seconds_opening() >= WHERE_AFTER_S:
            loc = self.session.where()
            self._where = (
                f" — running {Path(loc.filename).name}:{loc.lineno}: {loc.text}" if loc else ""
            )
        self._say_opening()

    def _say_opening(self) -> None:
        """What the open runs now (its stage, and once it takes a while, for how long and
        where in the model's code) -- the model's spec shortened, so that the stage is seen
        in the bar (a 405B configuration's spec alone fills it)."""
        request = self.session.opening
        if request is None:
            return
        seconds = self.session.seconds_opening()
        said = open_stage(request, self.session.open_stage)
        if not said and self.session.lingering is not None:
            said = "Waiting for the cancelled open's code to end"
        stage = f" — {said}" if said else ""
        spec = shortened(request.spec)
        if seconds < WHERE_AFTER_S:
            self.show(f"Opening {spec} ({request.frontend}){stage}…")
            return
        self.show(f"Opening {spec} for {seconds:.0f} s{stage}{self._where}  (Cancel stops it)")

    def _layout_progressed(self, done: int, total: int) -> None:
        self.layout_progress.setRange(0, max(total, 1))
        self.layout_progress.setValue(done)

    def _layout_finished(self, *_args: object) -> None:
        self._layout_timer.stop()
        self.layout_progress.hide()
        self.layout_stop.hide()

    def _notes(self, layout: Any) -> None:
        for note in layout.notes:
            self.show(note, 15000)

    def _changed(self, event: DocumentEvent) -> None:
        doc = self.session.document
        # A big graph's module tree comes with the catch-up: counted then.
        waits = doc is not None and doc.defer_heavy and event.kind is not ChangeKind.SHAPES_CHANGED
        self.update_summary(recount=event.kind is not ChangeKind.VIEW_CHANGED and not waits)

    def update_title(self) -> None:
        self.window.setWindowTitle(self.session.title())

    def update_summary(self, recount: bool = True) -> None:
        doc = self.session.document
        self.update_title()
        self.structure.setVisible(doc is not None and not doc.weights)
        self.structure.setToolTip(structure_reason(doc.notes if doc is not None else []))
        if doc is None:
            self.summary.clear()
            return
        if recount:
            self._modules = sum(1 for _ in doc.module_tree().walk()) - 1
        self.summary.setText(f"{len(doc)} nodes · {self._modules} modules · {doc.request.frontend}")
