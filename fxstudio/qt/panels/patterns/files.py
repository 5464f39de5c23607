"""The Patterns dock's files: a pattern file (its pattern, replacement and rules) opened and
saved, and the last replacement's report saved as the JSON ``fxstudio rewrite --json``
prints."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from fxstudio.core.errors import UserError
from fxstudio.core.flows import Report, RewriteSpec
from fxstudio.core.flows.patterns import read_pattern_file, write_pattern_file
from fxstudio.qt.file_dialogs import JSON_TYPE, FileType, ask_save_path
from fxstudio.qt.panels.patterns.rules import RulesPresenter

PYTHON_TYPE = FileType("Python", (".py",))


class PatternFiles:
    """*Open…* and *Save…* of the pattern (``name``, the two editors and the ``rules``), and
    *Save report…* of the last replacement (``report()``); a file opened is then found
    (``opened()``).  ``say(text)``: what was not done and why; ``note(text, ms)``: the status
    bar's passing note; the file dialogs are over ``parent``."""

    def __init__(
        self,
        parent: QWidget,
        buttons: tuple[QPushButton, QPushButton, QPushButton],  # open, save, save report
        name: QLineEdit,
        pattern_code: QPlainTextEdit,
        replacement_code: QPlainTextEdit,
        replacement_choice: QComboBox,
        rules: RulesPresenter,
        report: Callable[[], Report | None],
        opened: Callable[[], object],
        say: Callable[[str], None],
        note: Callable[[str, int], None],
    ) -> None:
        self.parent, self.name, self.rules = parent, name, rules
        self.pattern_code, self.replacement_code = pattern_code, replacement_code
        self.replacement_choice = replacement_choice
        self.report, self.opened_then, self.say, self.note = report, opened, say, note
        self.opened: tuple[str, str, str] | None = None  # a pattern file, its two functions
        open_button, save_button, report_button = buttons
        open_button.clicked.connect(lambda: self.open_file())
        save_button.clicked.connect(lambda: self.save_file())
        report_button.clicked.connect(lambda: self.save_report())

    def save_report(self, path: str | None = None) -> bool:
        """The last replacement's report as JSON (the same ``fxstudio rewrite --json``
        prints)."""
        report = self.report()
        if report is None:
            self.say("Replace something first: the report is of a replacement.")
            return False
        if path is None:
            chosen = ask_save_path(
                self.parent, "Save the rewrite's report", "rewrite.json", (JSON_TYPE,)
            )
            if chosen is None:
                return False
            path = str(chosen[0])
        try:
            report.write(path)
        except (UserError, OSError) as exc:
            self.say(str(exc))
            return False
        self.note(f"Saved {path}", 5000)
        return True

    def save_file(self, path: str | None = None) -> bool:
        if path is None:
            chosen = ask_save_path(
                self.parent, "Save pattern", f"{self.name.text() or 'pattern'}.py", (PYTHON_TYPE,)
            )
            if chosen is None:
                return False
            path = str(chosen[0])
        code = self.pattern_code.toPlainText()
        if not code.strip():
            self.say("There is no pattern to save yet.")
            return False
        try:
            write_pattern_file(
                path, code, self.replacement_code.toPlainText(), self.rules.default_rules
            )
        except (UserError, OSError) as exc:
            self.say(str(exc))
            return False
        return True

    def open_file(self, path: str | None = None) -> bool:
        """Read a pattern file, show it and its rules, and find its pattern (``opened()``)."""
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self.parent, "Open pattern", "", "Python (*.py)")
            if not path:
                return False
        try:
            pattern, replacement, rules = read_pattern_file(path)
        except UserError as exc:
            self.say(str(exc))
            return False
        self.pattern_code.setPlainText(pattern)
        if replacement:
            self.replacement_code.setPlainText(replacement)
            self.replacement_choice.setCurrentIndex(0)
        self.opened = (str(path), pattern, self.replacement_code.toPlainText())
        self.rules.set_rules(rules)
        self.opened_then()
        return True

    def spec(self) -> RewriteSpec:
        """The rewrite the editors hold: the pattern file's functions as the command line
        names them (``FILE.py:pattern``) while they are as opened, else the code typed."""
        pattern, replacement = self.pattern_code.toPlainText(), self.replacement_code.toPlainText()
        rules = self.rules.default_rules
        if self.opened is not None and self.opened[1:] == (pattern, replacement):
            path = self.opened[0]
            return RewriteSpec(
                pattern=f"{path}:pattern", replacement=f"{path}:replacement", rules=rules
            )
        return RewriteSpec(pattern_code=pattern, replacement_code=replacement, rules=rules)
