"""The Patterns dock's files: a pattern file (its pattern, replacement and rules) opened and
saved, and the last replacement's report saved as the JSON ``fxstudio rewrite --json``
prints."""

from __future__ import annotations

from PySide6.QtWidgets import QFileDialog

from fxstudio.core.errors import UserError
from fxstudio.core.patterns.files import read_pattern_file, write_pattern_file
from fxstudio.qt.panels.patterns_form import PatternsForm


class PatternFilesMixin(PatternsForm):
    """For :class:`~fxstudio.qt.panels.patterns.PatternsPanel`."""

    opened: tuple[str, str, str] | None

    def save_report(self, path: str | None = None) -> bool:
        """The last replacement's report as JSON (the same ``fxstudio rewrite --json``
        prints)."""
        if self.report is None:
            self.message.emit("Replace something first: the report is of a replacement.")
            return False
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self.dock, "Save the rewrite's report", "rewrite.json", "JSON (*.json)"
            )
            if not path:
                return False
        try:
            self.report.write(path)
        except (UserError, OSError) as exc:
            self.message.emit(str(exc))
            return False
        self.status.emit(f"Saved {path}", 5000)
        return True

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
        """Read a pattern file and find its pattern (``found`` tells when)."""
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
        self.opened = (str(path), pattern, self.replacement_code.toPlainText())
        self.set_rules(rules)
        self.find()
        return True
