"""The Patterns dock: make a pattern from the selected nodes (or type one), see every match
on the canvas, ask why a node did not match, and replace the accepted matches as one undo
step, with the numerical check shown after it.

Everything it does is a call into :mod:`fxstudio.core.patterns`; the replacement is pushed
as one :class:`~fxstudio.qt.commands.EditCommand`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QListWidgetItem,
    QPlainTextEdit,
    QWidget,
)

from fxstudio.core.document import ChangeKind, DocumentEvent, GraphDocument, PatternBox
from fxstudio.core.errors import UserError
from fxstudio.core.patterns.apply import RewriteSpec, run
from fxstudio.core.patterns.explain import explain, side_by_side
from fxstudio.core.patterns.files import read_pattern_file, write_pattern_file
from fxstudio.core.patterns.matcher import Found, Match, Matcher
from fxstudio.core.patterns.pattern import (
    DEFAULT_RULES,
    Pattern,
    Rules,
    compile_function,
    from_function,
    from_nodes,
)
from fxstudio.core.patterns.reasons import Failure
from fxstudio.core.patterns.replace import graph_replacement
from fxstudio.qt import theme
from fxstudio.qt.bridge import SelectionModel
from fxstudio.qt.commands import EditCommand
from fxstudio.qt.pattern_marks import PatternMarks
from fxstudio.qt.patterns_widgets import BOX, RULE_BOXES, build


def _busy(method: Callable[..., Any]) -> Callable[..., Any]:
    """A wait cursor while ``method`` runs (a rewrite of thousands of matches takes seconds)."""

    @functools.wraps(method)
    def run(*args: Any, **kwargs: Any) -> Any:
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            return method(*args, **kwargs)
        finally:
            QApplication.restoreOverrideCursor()

    return run


class PatternsPanel(QObject):
    """The dock's controller; ``dock`` is the widget the main window places."""

    rewritten = Signal(object)  # the core Report after a replacement
    message = Signal(str)

    def __init__(
        self,
        parent: QWidget,
        selection: SelectionModel,
        undo_stack: QUndoStack,
    ) -> None:
        super().__init__(parent)
        self.selection = selection
        self.undo_stack = undo_stack
        self.document: GraphDocument | None = None
        self.pattern: Pattern | None = None
        self.found: Found | None = None
        self.marks = PatternMarks()
        self.scene: Any = None
        self._unsubscribe: Any = None
        self.default_rules = DEFAULT_RULES  # the rules for every node ...
        self.node_rules: dict[str, Rules] = {}  # ... and for single nodes
        self._setting = False  # the checkboxes are being set, not edited
        self.replacement_box: Pattern | None = None
        self._build(parent)

    # --- the widgets -----------------------------------------------------------------------

    def _build(self, parent: QWidget) -> None:
        build(self, parent)

    # --- the document ----------------------------------------------------------------------

    def set_document(self, doc: GraphDocument | None) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.document = doc
        self.pattern = None
        self.found = None
        self.marks.clear()
        self.match_list.clear()
        self.summary.setText("No pattern yet.")
        if doc is not None:
            self._unsubscribe = doc.subscribe(self._changed)
            self._boxes_from_document()
        self.redraw()

    def set_scene(self, scene: Any) -> None:
        self.scene = scene
        self.redraw()

    def redraw(self) -> None:
        self.marks.redraw(self.scene)

    def _changed(self, event: DocumentEvent) -> None:
        if event.kind is ChangeKind.VIEW_CHANGED:
            self._boxes_from_document()
            return
        # the graph changed: the matches are of the old graph
        if self.found is not None:
            self.found = None
            self.marks.matches, self.marks.partial, self.marks.culprit = [], [], None
            self.match_list.clear()
            self.explanation.clear()  # a match's table or a miss of the old graph
            self.summary.setText("The graph changed: Find again.")
        self._boxes_from_document()

    def _boxes_from_document(self) -> None:
        doc = self.document
        self.marks.boxes = (
            [(b.name, list(b.nodes)) for b in doc.pattern_boxes] if doc is not None else []
        )

    # --- making and finding ----------------------------------------------------------------

    def rules(self) -> Rules:
        """The rules the checkboxes show (for every node, or for the node in ``scope``)."""
        values: dict[str, Any] = {}
        for key, _text, on, off, _meaning in RULE_BOXES:
            values[key] = on if self.rule_boxes[key].isChecked() else off
        attrs = tuple(a.strip() for a in self.attrs.text().split(",") if a.strip())
        if attrs and values["module"] == "type":
            values.update(module="attrs", attrs=attrs)
        return replace(DEFAULT_RULES, **values)

    def _show_rules(self, rules: Rules) -> None:
        self._setting = True
        try:
            for key, _text, on, _off, _meaning in RULE_BOXES:
                self.rule_boxes[key].setChecked(getattr(rules, key) in (on, "attrs"))
            self.attrs.setText(", ".join(rules.attrs))
        finally:
            self._setting = False

    def set_rules(self, rules: Rules) -> None:
        """The same rules for every node (the per-node choices are dropped)."""
        self.default_rules = rules
        self.node_rules = {}
        self.scope.setCurrentIndex(0)
        self._show_rules(rules)

    def _scope_changed(self, index: int) -> None:
        name = self.scope.itemData(index)
        self._show_rules(
            self.node_rules.get(name, self.default_rules) if name else self.default_rules
        )

    def _rules_edited(self, *_: Any) -> None:
        if self._setting:
            return
        name = self.scope.currentData()
        if name:
            self.node_rules[name] = self.rules()
        else:
            self.default_rules = self.rules()

    def _fill_scope(self, pattern: Pattern) -> None:
        self.scope.blockSignals(True)
        self.scope.clear()
        self.scope.addItem("Rules for every node", None)
        for n in pattern.compute_nodes:
            self.scope.addItem(f"Rules for {n.name} ({n.op})", n.name)
        self.scope.blockSignals(False)
        self.node_rules = {
            k: v for k, v in self.node_rules.items() if k in {n.name for n in pattern.compute_nodes}
        }
        self._show_rules(self.default_rules)

    def _with_rules(self, pattern: Pattern) -> Pattern:
        pattern = pattern.with_rules(self.default_rules)
        names = {n.name for n in pattern.compute_nodes}
        pattern.node_rules = {k: v for k, v in self.node_rules.items() if k in names}
        return pattern

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
        doc.pattern_boxes = [b for b in doc.pattern_boxes if b.name != title]
        doc.pattern_boxes.append(PatternBox(title, tuple(pattern.origin)))
        doc.emit(ChangeKind.VIEW_CHANGED)  # sessions keep the box; the canvas draws it
        self.find()
        return pattern

    def _current_pattern(self) -> Pattern | None:
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
            dialect = doc.source.frontend if doc.source.frontend in ("fx", "export") else "fx"
            self.pattern = from_function(
                fn, dialect=dialect, rules=self.default_rules, source=source
            )
            self._fill_scope(self.pattern)
            self.pattern = self._with_rules(self.pattern)
        except UserError as exc:
            self.message.emit(str(exc))
            return None
        return self.pattern

    @_busy
    def find(self) -> Found | None:
        pattern = self._current_pattern()
        doc = self.document
        if pattern is None or doc is None:
            return None
        self.found = Matcher(pattern).find(doc.graph_module)
        self._list_matches()
        if not self.found.matches:
            self._explain(None)
        return self.found

    def _list_matches(self) -> None:
        found = self.found
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
            item = QListWidgetItem(f"skipped: {s.failure.describe()}")
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            item.setForeground(Qt.GlobalColor.darkGray)
            self.match_list.addItem(item)
        self.match_list.blockSignals(False)
        n, k = len(found.matches), len(found.skipped)
        words = [f"{n} match{'es' if n != 1 else ''}"]
        if k:
            words.append(f"{k} skipped")
        words.append(f"{found.seconds * 1000:.0f} ms")
        self.summary.setText(", ".join(words) + "".join(f"\n⚠ {w}" for w in found.warnings))
        self.marks.matches = [m.graph_nodes for m in found.matches]
        self.marks.current = 0 if found.matches else None
        self.marks.partial, self.marks.culprit = [], None
        self.redraw()
        if found.matches:
            self.match_list.setCurrentRow(0)

    def step(self, delta: int) -> None:
        if not self.found or not self.found.matches:
            return
        row = (max(self.match_list.currentRow(), 0) + delta) % len(self.found.matches)
        self.match_list.setCurrentRow(row)

    def _show_match(self, row: int) -> None:
        if self.found is None or not 0 <= row < len(self.found.matches):
            return
        m = self.found.matches[row]
        self.marks.current = row
        self.redraw()
        self.selection.select(m.graph_nodes)
        if self.document is not None and self.pattern is not None:
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
        if self.found is None and self.find() is None:
            return
        self._explain(node)

    @_busy
    def _explain(self, at: str | None) -> None:
        doc, pattern = self.document, self.pattern
        if doc is None or pattern is None:
            return
        why = explain(doc.graph_module, pattern, at=at, found=self.found)
        self.explanation.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.explanation.setPlainText(why.describe())
        target = why.at if at is not None else (why.near[0] if why.near else None)
        if isinstance(target, Failure):
            self.marks.partial = list(target.partial.values())
            self.marks.culprit = target.culprit if target.culprit in doc else None
        elif isinstance(target, Match):
            self.marks.partial, self.marks.culprit = [], None
        self.redraw()

    # --- replacing ---------------------------------------------------------------------------

    @_busy
    def replace_accepted(self) -> None:
        doc = self.document
        if doc is None:
            return
        builtin = self.replacement_choice.currentData()
        try:
            if builtin == BOX:
                if self.replacement_box is None:
                    self.message.emit(
                        "Select the replacement's nodes and press 'Selection as replacement' first."
                    )
                    return
                if self.found is None and self.find() is None:
                    return
                report = run(
                    doc,
                    RewriteSpec(),
                    accepted=self.accepted(),
                    pattern=self.pattern,
                    replacement=graph_replacement(self.replacement_box),
                    found=self.found,
                )
            elif builtin:
                spec = RewriteSpec(builtin=str(builtin))
                report = run(doc, spec)
            else:
                if self.found is None and self.find() is None:
                    return
                if not self.found or not self.found.matches:
                    self.message.emit("The pattern has no match to replace.")
                    return
                spec = RewriteSpec(
                    pattern_code=self.pattern_code.toPlainText(),
                    replacement_code=self.replacement_code.toPlainText(),
                    rules=self.default_rules,
                )
                report = run(
                    doc, spec, accepted=self.accepted(), pattern=self.pattern, found=self.found
                )
        except UserError as exc:
            self.message.emit(str(exc))
            return
        result = report.result
        if result.edit is None:
            reasons = "; ".join(why for _, why in result.skipped[:3])
            self.message.emit(f"Nothing was replaced{': ' + reasons if reasons else '.'}")
            return
        self.undo_stack.push(EditCommand(result.edit))
        check = report.check
        text = f"{result.edit.label}."
        if result.skipped:
            text += f" Skipped {len(result.skipped)}: " + "; ".join(
                w for _, w in result.skipped[:3]
            )
        if check is not None:
            text += "\n" + check.describe(report.intended)
            ok = check.ok
        else:
            ok = True
        ok = ok or report.intended
        colour = theme.colors().good if ok else theme.colors().bad
        self.check_label.setText(text)
        self.check_label.setStyleSheet(f"color: {colour}; font-weight: bold;")
        self.undo_button.setVisible(not ok)
        self.rewritten.emit(report)

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

    # --- pattern files -----------------------------------------------------------------------

    def save_file(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self.dock, "Save pattern", f"{self.name.text() or 'pattern'}.py", "Python (*.py)"
            )
            if not path:
                return False
        code = self.pattern_code.toPlainText()
        if not code.strip():
            self.message.emit("There is no pattern to save yet.")
            return False
        try:
            write_pattern_file(path, code, self.replacement_code.toPlainText(), self.default_rules)
        except (UserError, OSError) as exc:
            self.message.emit(str(exc))
            return False
        return True

    def open_file(self, path: str | None = None) -> bool:
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self.dock, "Open pattern", "", "Python (*.py)")
            if not path:
                return False
        try:
            pattern, replacement, rules = read_pattern_file(path)
        except UserError as exc:
            self.message.emit(str(exc))
            return False
        self.pattern = None
        self.pattern_code.setPlainText(pattern)
        if replacement:
            self.replacement_code.setPlainText(replacement)
            self.replacement_choice.setCurrentIndex(0)
        self.set_rules(rules)
        self.find()
        return True

    def _undo_rewrite(self) -> None:
        self.undo_stack.undo()
        self.undo_button.hide()
        self.check_label.setText("The rewrite was undone.")
        self.check_label.setStyleSheet("")
