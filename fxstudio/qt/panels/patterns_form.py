"""The Patterns dock's widgets, laid out; their signals go to the panel's methods."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QFont, QUndoStack
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDockWidget,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from fxstudio.core.flows import Report
from fxstudio.core.patterns.builtins import BUILTINS
from fxstudio.core.patterns.explain import Explanation
from fxstudio.core.patterns.found import Found
from fxstudio.core.patterns.pattern import DEFAULT_RULES, FX_RULES, Pattern, Rules
from fxstudio.qt.canvas.marks import PatternMarks
from fxstudio.qt.fitting import FittingScrollArea, rows_height
from fxstudio.qt.panels.base import PanelContext
from fxstudio.qt.seams import Session
from fxstudio.qt.selection import SelectionModel

BOX = "__box__"  # the replacement-choice entry for a replacement box
MINE = ""  # the rewrite list's entry for the user's own pattern
MINE_TITLE = "Your pattern"
MINE_ABOUT = (
    "Select nodes and press Make pattern (or type a pattern function), Find its matches, "
    "then Replace them with the function or the nodes you give."
)
REPLACEMENT_HINT = (  # placeholder text only: an example is never a replacement
    "def replacement(x, y):\n    return ...\n\n"
    "(a function of the pattern's inputs, in the same order; or build it in the graph, "
    "select it and press Selection as replacement)"
)
NO_REPLACEMENT = (
    "Write the replacement first: a function of the pattern's inputs below (or use a "
    "replacement box)."
)

RULE_BOXES = (  # (rule, label, value when ticked, value when not, what it means)
    (
        "module",
        "Submodules by type",
        "type",
        "name",
        "a call_module matches any submodule of the same class, whatever its name",
    ),
    (
        "spelling",
        "Equivalent spellings",
        "equivalent",
        "exact",
        "torch.relu = F.relu = x.relu() = nn.ReLU, in-place variants too",
    ),
    ("commutative", "Commutative add, mul", True, False, "a + b matches b + a"),
    (
        "arguments",
        "Keyword = positional",
        "normalize",
        "exact",
        "torch.sum(x, dim=1) matches torch.sum(x, 1); a default given or left out is the same",
    ),
    ("literals", "Literals: any value", "any", "exact", "x + 1.0 matches x + 2.0"),
    (
        "outside_users",
        "Outside users allowed",
        True,
        False,
        "an inner node may also be used outside the match (it is then kept)",
    ),
    ("same_shape", "Same shape", True, False, "the graph node's recorded shape must be this one's"),
    ("same_dtype", "Same dtype", True, False, "the graph node's recorded dtype must be this one's"),
)


class PatternsForm:
    """The Patterns dock's widgets, as :func:`build` makes them on the panel, and the panel's
    methods their signals go to (declared for the type checker only)."""

    rewrite_list: QListWidget
    rewrite_about: QLabel
    argument_row: QWidget
    rewrite_argument: QLineEdit
    pattern_area: QWidget
    name: QLineEdit
    make_button: QPushButton
    open_button: QPushButton
    save_button: QPushButton
    pattern_code: QPlainTextEdit
    scope: QComboBox
    rule_boxes: dict[str, QCheckBox]
    attrs: QLineEdit
    find_button: QPushButton
    fx_button: QPushButton
    why_button: QPushButton
    prev_button: QPushButton
    next_button: QPushButton
    summary: QLabel
    match_list: QListWidget
    explanation: QPlainTextEdit
    replacement_choice: QComboBox
    replace_button: QPushButton
    box_button: QPushButton
    replacement_code: QPlainTextEdit
    check_label: QLabel
    undo_button: QPushButton
    apply_button: QPushButton
    report_button: QPushButton
    replacement_area: QWidget

    if TYPE_CHECKING:  # the panel's (and its mixins'): build connects them, the mixins call them
        message: SignalInstance  # (str)
        status: SignalInstance  # (str, int)
        found: SignalInstance  # (Found)
        rewritten: SignalInstance  # (Report)
        withheld: SignalInstance  # (Report)
        ctx: PanelContext
        dock: QDockWidget
        session: Session
        selection: SelectionModel
        undo_stack: QUndoStack
        marks: PatternMarks
        pattern: Pattern | None
        default_rules: Rules
        report: Report | None

        def apply_anyway(self) -> bool: ...
        def busy(self) -> bool: ...
        def redraw(self) -> None: ...
        def set_check(self, text: str, state: str | None) -> None: ...
        def _show_explanation(self, why: Explanation, at: str | None) -> None: ...
        def _start(
            self,
            text: str,
            work: Callable[[], Any],
            done: Callable[[Any], None],
            failed: Callable[[BaseException], None] | None = None,
        ) -> bool: ...
        def find(self, then: Callable[[Found], object] | None = None) -> bool: ...
        def make_from_selection(self) -> Pattern | None: ...
        def open_file(self, path: str | None = None) -> bool: ...
        def preview(self) -> bool: ...
        def replace_accepted(self) -> bool: ...
        def rules_edited(self, *_: object) -> None: ...
        def save_file(self, path: str | None = None) -> bool: ...
        def save_report(self, path: str | None = None) -> bool: ...
        def scope_changed(self, index: int) -> None: ...
        def set_rules(self, rules: Rules) -> None: ...
        def show_match(self, row: int) -> None: ...
        def step(self, delta: int) -> None: ...
        def undo_rewrite(self) -> None: ...
        def update_replace(self) -> None: ...
        def use_selection_as_replacement(self) -> None: ...
        def why_not_here(self) -> None: ...


def build(panel: PatternsForm) -> QWidget:
    """Make the dock's widgets on ``panel`` (``panel.find_button``, …); returns its body."""
    body = QWidget()
    layout = QVBoxLayout(body)
    layout.setContentsMargins(4, 4, 4, 4)
    panel.rewrite_list = QListWidget(body)
    panel.rewrite_list.setObjectName("rewriteList")
    panel.rewrite_list.addItem(MINE_TITLE)
    panel.rewrite_list.item(0).setData(Qt.ItemDataRole.UserRole, MINE)
    panel.rewrite_list.item(0).setToolTip(MINE_ABOUT)
    for name, builtin in BUILTINS.items():
        item = QListWidgetItem(builtin.title or name)
        item.setData(Qt.ItemDataRole.UserRole, name)
        item.setToolTip(f"{name}: {builtin.summary}")
        panel.rewrite_list.addItem(item)
    shown = rows_height(panel.rewrite_list, min(panel.rewrite_list.count(), 8))  # all, whole
    panel.rewrite_list.setFixedHeight(shown)
    panel.rewrite_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    panel.rewrite_about = QLabel(MINE_ABOUT, body)
    panel.rewrite_about.setObjectName("rewriteAbout")
    panel.rewrite_about.setWordWrap(True)
    panel.argument_row = QWidget(body)
    arg_layout = QHBoxLayout(panel.argument_row)
    arg_layout.setContentsMargins(0, 0, 0, 0)
    panel.rewrite_argument = QLineEdit(panel.argument_row)
    panel.rewrite_argument.setObjectName("rewriteArgument")
    panel.rewrite_argument.editingFinished.connect(lambda: panel.preview())
    arg_layout.addWidget(QLabel("Argument", panel.argument_row))
    arg_layout.addWidget(panel.rewrite_argument, 1)
    panel.argument_row.hide()
    layout.addWidget(QLabel("<b>Rewrite</b>", body))
    layout.addWidget(panel.rewrite_list)
    layout.addWidget(panel.rewrite_about)
    layout.addWidget(panel.argument_row)
    panel.pattern_area = QWidget(body)  # the user's own pattern: shown for it only
    mine = QVBoxLayout(panel.pattern_area)
    mine.setContentsMargins(0, 0, 0, 0)
    row = QHBoxLayout()
    panel.name = QLineEdit("pattern", body)
    panel.name.setObjectName("patternName")
    panel.make_button = QPushButton("Make pattern", body)
    panel.make_button.setObjectName("makePattern")
    panel.make_button.setToolTip("Make a pattern of the selected nodes (box or Ctrl+click them)")
    panel.make_button.clicked.connect(panel.make_from_selection)
    panel.open_button = QPushButton("Open…", body)
    panel.open_button.setToolTip("Open a pattern file (def pattern, def replacement, RULES)")
    panel.open_button.clicked.connect(lambda: panel.open_file())
    panel.save_button = QPushButton("Save…", body)
    panel.save_button.setToolTip("Save the pattern, its replacement and rules as a .py file")
    panel.save_button.clicked.connect(lambda: panel.save_file())
    row.addWidget(QLabel("Name", body))
    row.addWidget(panel.name, 1)
    row.addWidget(panel.make_button)
    mine.addLayout(row)
    files = QHBoxLayout()
    files.addWidget(panel.open_button)
    files.addWidget(panel.save_button)
    files.addStretch(1)
    mine.addLayout(files)
    mono = QFont("monospace")
    mono.setStyleHint(QFont.StyleHint.Monospace)
    panel.pattern_code = QPlainTextEdit(body)
    panel.pattern_code.setObjectName("patternCode")
    panel.pattern_code.setFont(mono)
    panel.pattern_code.setPlaceholderText(
        "def pattern(x):\n    return torch.relu(x + 1.0)\n\n"
        "(or select nodes and press Make pattern)"
    )
    rules = QGridLayout()
    panel.scope = QComboBox(body)
    panel.scope.setSizeAdjustPolicy(
        QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
    )
    panel.scope.setMinimumContentsLength(12)
    panel.scope.setObjectName("ruleScope")
    panel.scope.setToolTip("The rules below are for every node, or for the node chosen here")
    panel.scope.addItem("Rules for every node", None)
    panel.scope.currentIndexChanged.connect(panel.scope_changed)
    rules.addWidget(panel.scope, 0, 0, 1, 2)
    panel.rule_boxes = {}
    for i, (key, text, on, _off, meaning) in enumerate(RULE_BOXES):
        box = QCheckBox(text, body)
        box.setToolTip(meaning)
        box.setObjectName(f"rule_{key}")
        box.setChecked(getattr(DEFAULT_RULES, key) == on)
        box.toggled.connect(panel.rules_edited)
        panel.rule_boxes[key] = box
        rules.addWidget(box, 1 + i // 2, i % 2)
    panel.attrs = QLineEdit(body)
    panel.attrs.setObjectName("ruleAttrs")
    panel.attrs.setPlaceholderText("compare these module attributes too, e.g. kernel_size, stride")
    panel.attrs.editingFinished.connect(panel.rules_edited)
    rules.addWidget(panel.attrs, 2 + len(RULE_BOXES) // 2, 0, 1, 2)
    buttons = QHBoxLayout()
    panel.find_button = QPushButton("Find", body)
    panel.find_button.setObjectName("findMatches")
    panel.find_button.clicked.connect(lambda: panel.find())
    panel.fx_button = QPushButton("torch.fx rules", body)
    panel.fx_button.setToolTip("Match as torch.fx.replace_pattern does: op and target only")
    panel.fx_button.clicked.connect(lambda: panel.set_rules(FX_RULES))
    panel.why_button = QPushButton("Why not here?", body)
    panel.why_button.setObjectName("whyNotHere")
    panel.why_button.setToolTip("Explain why the selected node is not part of a match")
    panel.why_button.clicked.connect(panel.why_not_here)
    panel.prev_button = QPushButton("◀", body)
    panel.next_button = QPushButton("▶", body)
    for b in (panel.prev_button, panel.next_button):
        b.setMaximumWidth(32)
    panel.prev_button.setToolTip("The previous match")
    panel.next_button.setToolTip("The next match")
    panel.prev_button.clicked.connect(lambda: panel.step(-1))
    panel.next_button.clicked.connect(lambda: panel.step(1))
    for b in (panel.find_button, panel.fx_button, panel.why_button):
        buttons.addWidget(b)
    buttons.addStretch(1)
    panel.summary = QLabel("No pattern yet.", body)
    panel.summary.setObjectName("matchSummary")
    panel.summary.setWordWrap(True)
    panel.match_list = QListWidget(body)
    panel.match_list.setObjectName("matchList")
    panel.match_list.currentRowChanged.connect(panel.show_match)
    panel.explanation = QPlainTextEdit(body)
    panel.explanation.setObjectName("explanation")
    panel.explanation.setReadOnly(True)
    panel.explanation.setFont(mono)
    panel.explanation.setPlaceholderText("Why a node did not match is told here.")
    rep_row = QHBoxLayout()
    panel.replacement_choice = QComboBox(body)
    panel.replacement_choice.setSizeAdjustPolicy(
        QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
    )
    panel.replacement_choice.setMinimumContentsLength(12)
    panel.replacement_choice.setObjectName("replacementChoice")
    panel.replacement_choice.addItem("the function below", "")
    panel.replacement_choice.addItem("the replacement box (selected nodes)", BOX)
    panel.replace_button = QPushButton("Replace accepted", body)
    panel.replace_button.setObjectName("replaceMatches")
    panel.replace_button.clicked.connect(lambda: panel.replace_accepted())
    panel.box_button = QPushButton("Selection as replacement", body)
    panel.box_button.setObjectName("replacementBox")
    panel.box_button.setToolTip(
        "Build the replacement with the editing tools, select its nodes, press this"
    )
    panel.box_button.clicked.connect(panel.use_selection_as_replacement)
    rep_row.addWidget(panel.replacement_choice, 1)
    rep_buttons = QHBoxLayout()
    rep_buttons.addWidget(panel.box_button)
    rep_buttons.addStretch(1)
    panel.replacement_code = QPlainTextEdit(body)
    panel.replacement_code.setObjectName("replacementCode")
    panel.replacement_code.setFont(mono)
    panel.replacement_code.setPlaceholderText(REPLACEMENT_HINT)
    panel.replacement_code.textChanged.connect(panel.update_replace)
    panel.replacement_choice.currentIndexChanged.connect(lambda _i: panel.update_replace())
    panel.check_label = QLabel("", body)
    panel.check_label.setObjectName("checkResult")
    panel.check_label.setWordWrap(True)
    panel.undo_button = QPushButton("Undo the rewrite", body)
    panel.undo_button.setObjectName("undoRewrite")
    panel.undo_button.hide()
    panel.undo_button.clicked.connect(panel.undo_rewrite)
    panel.apply_button = QPushButton("Apply anyway", body)
    panel.apply_button.setObjectName("applyAnyway")
    panel.apply_button.setToolTip(
        "Apply the rewrite although the model then computes other values (one undo step)"
    )
    panel.apply_button.hide()
    panel.apply_button.clicked.connect(lambda: panel.apply_anyway())
    panel.report_button = QPushButton("Save report…", body)
    panel.report_button.setObjectName("saveRewriteReport")
    panel.report_button.setToolTip(
        "The replacement's matches, skips and check, saved as a JSON file (the report the "
        "command line's rewrite prints)"
    )
    panel.report_button.setEnabled(False)
    panel.report_button.clicked.connect(lambda: panel.save_report())
    mine.addWidget(panel.pattern_code)
    mine.addLayout(rules)
    mine.addLayout(buttons)
    results = QWidget(body)
    results_layout = QVBoxLayout(results)
    results_layout.setContentsMargins(0, 0, 0, 0)
    summary_row = QHBoxLayout()  # what was found, and what to do with it, always in sight
    summary_row.addWidget(panel.summary, 1)
    summary_row.addWidget(panel.prev_button)
    summary_row.addWidget(panel.next_button)
    summary_row.addWidget(panel.replace_button)
    results_layout.addLayout(summary_row)
    results_layout.addWidget(panel.check_label)
    result_row = QHBoxLayout()
    result_row.addWidget(panel.apply_button)
    result_row.addWidget(panel.undo_button)
    result_row.addWidget(panel.report_button)
    result_row.addStretch(1)
    results_layout.addLayout(result_row)
    panel.match_list.setMinimumHeight(rows_height(panel.match_list, 4))
    results_layout.addWidget(panel.match_list, 1)
    panel.replacement_area = QWidget(body)  # the user's own replacement: for their pattern
    bottom_layout = QVBoxLayout(panel.replacement_area)
    bottom_layout.setContentsMargins(0, 0, 0, 0)
    bottom_layout.addLayout(rep_row)
    bottom_layout.addLayout(rep_buttons)
    bottom_layout.addWidget(panel.replacement_code)
    split = QSplitter(Qt.Orientation.Vertical, body)
    split.setObjectName("patternsSplit")
    for part in (panel.pattern_area, results, panel.explanation, panel.replacement_area):
        split.addWidget(part)
    split.setStretchFactor(1, 2)
    layout.addWidget(split, 1)
    # scrolled: the dock shares its column with the code view and must not push it away
    # (fitted: a plain one gave the body its preferred height and scrolled Find out of sight)
    scroll = FittingScrollArea()
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.set_fitted(body)
    return scroll
