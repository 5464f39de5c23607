"""The Patterns dock's matches: what a search (or a built-in's preview) found, listed with
the places it left alone and why, counted in the summary, outlined on the canvas, stepped
through with ◀ ▶ -- and why a node did not match, told below them."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QListWidget, QListWidgetItem, QPlainTextEdit, QPushButton

from fxstudio.core.flows import Report
from fxstudio.core.flows.patterns import Explanation, Failure, Found, Match
from fxstudio.core.wording import for_window
from fxstudio.qt.canvas.marks import PatternMarks
from fxstudio.qt.panels.patterns.check import bring_into_view

Item = Qt.ItemFlag


def skipped_item(text: str) -> QListWidgetItem:
    """A row of the match list for a place left alone: greyed, not checkable."""
    item = QListWidgetItem(text)
    item.setFlags(Item.ItemIsEnabled | Item.ItemIsSelectable)
    item.setForeground(Qt.GlobalColor.darkGray)
    item.setToolTip(text)
    return item


class MatchesView:
    """The matches of the graph as it is (``result``) in ``summary``, ``match_list`` and
    ``marks`` (drawn again by ``redraw()``), ◀ ▶ (``buttons``) to step through them, and
    ``explanation`` for why a node did not match.  ``note(text, ms)``: the status bar's
    passing note (a place of a preview); ``contains(name)``: the graph has that node."""

    def __init__(
        self,
        summary: QLabel,
        match_list: QListWidget,
        explanation: QPlainTextEdit,
        buttons: tuple[QPushButton, QPushButton],  # previous, next
        marks: PatternMarks,
        redraw: Callable[[], None],
        note: Callable[[str, int], None],
        contains: Callable[[str], bool],
    ) -> None:
        self.summary, self.match_list, self.explanation = summary, match_list, explanation
        self.marks, self.redraw, self.note, self.contains = marks, redraw, note, contains
        self.result: Found | None = None  # the matches of the graph as it is
        self.placed = False  # the status bar shows a place of a preview
        previous, following = buttons
        previous.clicked.connect(lambda: self.step(-1))
        following.clicked.connect(lambda: self.step(1))

    def show_found(self, found: Found, current: bool = True) -> None:
        """``found``'s matches (checked: accepted) and skips listed; ``current``: the first
        one looked at."""
        self.result = found
        self.match_list.blockSignals(True)
        self.match_list.clear()
        for m in found.matches:
            item = QListWidgetItem(f"{m.index + 1}. {', '.join(m.graph_nodes)}")
            item.setFlags(item.flags() | Item.ItemIsUserCheckable)
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

    def show_preview(self, title: str, report: Report, after: bool = False) -> Found:
        """A built-in's dry run (``title``): the places it would change, those it would skip
        and why; returns them as the matches shown.  ``after``: of the graph its own rewrite
        just made (told below, by the check) -- what is left, not a verdict read as stale."""
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
        n, k = len(r.replaced), len(skips)
        if n:
            text = f"{title}: {n}{' more' if after else ''} place{'s' if n != 1 else ''}"
            text += f" to change{', ' + str(k) + ' skipped' if k else ''}"
            text += ". Replace makes them one undo step."
        elif after:  # the rewrite below left nothing for it: no verdict on the graph before
            text = f"{title}: done -- nothing left to change"
            text += f"; {k} skipped, each one below." if k else "."
        else:  # how many places it looked at, and why it left each alone
            text = f"{title}: nothing to change -- {report.verdict}"
            text += "; each one below." if k else "."
        self.summary.setText(text + "".join(f"\n⚠ {w}" for w in r.found.warnings))
        self.marks.matches = [m.graph_nodes for m in r.replaced]
        self.marks.current = 0 if r.replaced else None
        self.redraw()
        if r.replaced:
            self.match_list.setCurrentRow(0)
        return self.result

    def forget(self, text: str) -> None:
        """The matches shown are of another graph or another rewrite: gone, ``text`` said."""
        self.result = None
        self.marks.matches, self.marks.partial, self.marks.culprit = [], [], None
        self.match_list.clear()
        self.explanation.clear()
        self.summary.setText(text)
        if self.placed:  # the status bar's "Place 3 of 15" is of those matches
            self.placed = False
            self.note("", 0)
        self.redraw()

    def show_place(self, row: int) -> None:
        """A place a built-in changes, in the status bar's words (it is on the canvas)."""
        assert self.result is not None
        m = self.result.matches[row]
        n = len(self.result.matches)
        self.note(f"Place {row + 1} of {n}: replaces {', '.join(m.graph_nodes)}", 8000)
        self.placed = True

    def step(self, delta: int) -> None:
        if not self.result or not self.result.matches:
            return
        row = (max(self.match_list.currentRow(), 0) + delta) % len(self.result.matches)
        self.match_list.setCurrentRow(row)

    def accepted(self) -> set[int]:
        """The matches ticked, by index."""
        out = set()
        for i in range(self.match_list.count()):
            item = self.match_list.item(i)
            index = item.data(Qt.ItemDataRole.UserRole)
            if index is not None and item.checkState() == Qt.CheckState.Checked:
                out.add(int(index))
        return out

    def show_explanation(self, why: Explanation, at: str | None) -> None:
        """Why the pattern does not match (``at``: that node, kept selected), the nearest
        miss marked on the canvas."""
        if self.result is not None:  # (the summary said what ran)
            self.show_found(self.result, current=at is None)
        self.explanation.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.explanation.setPlainText(for_window(why.describe()))
        if at is not None:
            QTimer.singleShot(0, lambda: bring_into_view(self.explanation, top=True))
        target = why.at if at is not None else (why.near[0] if why.near else None)
        if isinstance(target, Failure):
            self.marks.partial = list(target.partial.values())
            self.marks.culprit = target.culprit if self.contains(target.culprit) else None
        elif isinstance(target, Match):
            self.marks.partial, self.marks.culprit = [], None
        self.redraw()
