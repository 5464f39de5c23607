"""Step 2 of Learn FX, *Watch the trace happen*: the graph's nodes shown on the canvas one by
one in the order tracing made them, each with the line of the learner's code that made it
(:class:`TraceReplay`; the lesson panel adds its widgets to the step and hears how far it got).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QWidget

from fxstudio.core.flows import lesson as course
from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt import theme
from fxstudio.qt.canvas.controller import CanvasController
from fxstudio.qt.panels.lesson.form import button
from fxstudio.qt.selection import SelectionModel

FADED = 0.12  # the canvas during the trace replay: nodes not created yet
REPLAY_SPEEDS = (600, 300, 120, 40, 10)  # ms a node, the speed slider's positions


class TraceReplay(QObject):
    """The replay on ``canvas``: ``document()`` is the graph, ``showing()`` whether its step is
    shown (else the replay stops), ``seen(n)`` is told as the n-th node appears;
    ``replayed()`` once the last one has."""

    replayed = Signal()

    def __init__(
        self,
        canvas: CanvasController,
        selection: SelectionModel,
        document: Callable[[], GraphDocument | None],
        showing: Callable[[], bool],
        seen: Callable[[int], None],
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.canvas, self.selection = canvas, selection
        self.document, self.showing, self.seen = document, showing, seen
        self.ms = REPLAY_SPEEDS[2]  # a node every ms
        self.timer = QTimer(self)
        self.timer.timeout.connect(self._next)
        self.at = 0  # nodes shown

    def widgets(self, parent: QWidget) -> list[QWidget]:
        """The step's widgets, made on ``parent``: Replay and Skip, the speed slider, a note
        when the graph was edited, and the line of the node shown last."""
        row, speed = QWidget(parent), QWidget(parent)
        lay, speed_lay = QHBoxLayout(row), QHBoxLayout(speed)
        lay.setContentsMargins(0, 0, 0, 0)
        speed_lay.setContentsMargins(0, 0, 0, 0)
        replay = button(row, "▶ Replay the trace", "lessonReplay", self.start)
        skip = button(row, "Skip to the end", "lessonReplaySkip", self.skip)
        skip.setToolTip("Show every node at once, as the trace left the graph")
        lay.addWidget(replay)
        lay.addWidget(skip)
        lay.addStretch(1)
        self.slider = QSlider(Qt.Orientation.Horizontal, speed)
        self.slider.setObjectName("lessonReplaySpeed")
        self.slider.setRange(0, len(REPLAY_SPEEDS) - 1)
        self.slider.setPageStep(1)
        near = min(REPLAY_SPEEDS, key=lambda ms: abs(ms - self.ms))
        self.slider.setValue(REPLAY_SPEEDS.index(near))
        self.slider.valueChanged.connect(self.set_speed)
        self.slider.setToolTip("How fast the nodes appear (slower ◀ ▶ faster)")
        self.speed_label = QLabel(speed)
        self.speed_label.setObjectName("lessonReplaySpeedLabel")
        speed_lay.addWidget(QLabel("Speed:", speed))
        speed_lay.addWidget(self.slider, 1)
        speed_lay.addWidget(self.speed_label)
        self.set_speed(self.slider.value())
        self.note = QLabel(parent)  # an edited graph: says so
        self.note.setObjectName("lessonReplayNote")
        self.note.setWordWrap(True)
        self.note.setStyleSheet(f"color: {theme.colors().pending}")
        self._note_edits()
        self.label = QLabel(parent)
        self.label.setObjectName("lessonReplayLabel")
        self.label.setWordWrap(True)
        return [row, speed, self.note, self.label]

    def set_speed(self, position: int) -> None:
        """The speed slider moved: the next nodes come at its pace (``REPLAY_SPEEDS``)."""
        self.ms = REPLAY_SPEEDS[position]
        self.speed_label.setText(f"{self.ms} ms a node")
        if self.timer.isActive():
            self.timer.setInterval(self.ms)

    def start(self) -> None:
        """Show the nodes one by one in the order tracing made them, with the user's line:
        the canvas starts faded and each node (and its wires) appears as it is created.  An
        edited graph is replayed as it is now, and the note above says so."""
        self.at = 0
        self._note_edits()
        self._fade(True)
        self.timer.start(self.ms)
        self._next()

    def stop(self) -> None:
        """The step is left: a replay under way stops, the canvas whole again."""
        if self.timer.isActive():
            self.timer.stop()
            self._fade(False)

    def skip(self) -> None:
        """The end of the replay at once: every node shown, the last one's line."""
        doc = self.document()
        if doc is None or not self.showing():
            return
        self.timer.stop()
        self.at = max(0, len(course.trace_order(doc)) - 1)
        self._fade(False)
        self._next()

    def _note_edits(self) -> None:
        doc = self.document()
        note = course.replay_note(doc) if doc is not None else ""
        self.note.setText(note)
        self.note.setVisible(bool(note))

    def _scene_items(self) -> tuple[dict[str, Any], list[Any]]:
        scene = self.canvas.scene
        return getattr(scene, "nodes", {}), list(getattr(scene, "edges", []))

    def _fade(self, on: bool) -> None:
        nodes, edges = self._scene_items()
        for item in [*nodes.values(), *(e for e in edges if e is not None)]:
            item.setOpacity(FADED if on else 1.0)

    def _appear(self, name: str, made: set[str]) -> None:
        nodes, edges = self._scene_items()
        if name in nodes:
            nodes[name].setOpacity(1.0)
        for edge in edges:
            if edge is not None and {edge.source_name, edge.target_name} <= made:
                edge.setOpacity(1.0)

    def _next(self) -> None:
        doc = self.document()
        if doc is None or not self.showing():
            self.timer.stop()
            self._fade(False)
            return
        order = course.trace_order(doc)
        if self.at >= len(order):
            self.timer.stop()
            return
        name, op, loc = order[self.at]
        self.at += 1
        self._appear(name, {n for n, _, _ in order[: self.at]})
        self.selection.select([name])
        if loc is not None:
            where = f"{loc.filename.rpartition('/')[2]}:{loc.lineno}: {loc.text}"
        else:  # no line of the user's made it (the output): the generated line
            line = doc.code_line_map().get(name)
            where = f"generated: {doc.code().splitlines()[line - 1].strip()}" if line else "—"
        self.label.setText(
            f"Node {self.at} of {len(order)}: <b>{name}</b> ({op})<br><tt>{where}</tt>"
        )
        self.seen(self.at)  # the verdict counts along
        if self.at == len(order):
            self.timer.stop()
            self._fade(False)
            self.replayed.emit()
