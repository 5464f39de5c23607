"""The Patterns dock's widgets, laid out: :class:`PatternsForm` makes them and connects
nothing -- the panel and its presenters each connect the widgets they are given."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
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

from fxstudio.core.flows.patterns import BUILTINS, DEFAULT_RULES
from fxstudio.qt.fitting import FittingScrollArea, LinesLabel, rows_height

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
    """The Patterns dock's widgets, laid out (nothing connected: each presenter connects the
    widgets it is given); ``body`` is the dock's widget."""

    def __init__(self) -> None:
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.setContentsMargins(4, 4, 4, 4)
        self.rewrite_list = QListWidget(body)
        self.rewrite_list.setObjectName("rewriteList")
        self.rewrite_list.addItem(MINE_TITLE)
        self.rewrite_list.item(0).setData(Qt.ItemDataRole.UserRole, MINE)
        self.rewrite_list.item(0).setToolTip(MINE_ABOUT)
        for name, builtin in BUILTINS.items():
            item = QListWidgetItem(builtin.title or name)
            item.setData(Qt.ItemDataRole.UserRole, name)
            item.setToolTip(f"{name}: {builtin.summary}")
            self.rewrite_list.addItem(item)
        shown = rows_height(self.rewrite_list, min(self.rewrite_list.count(), 8))  # all, whole
        self.rewrite_list.setFixedHeight(shown)
        self.rewrite_list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.rewrite_about = QLabel(MINE_ABOUT, body)
        self.rewrite_about.setObjectName("rewriteAbout")
        self.rewrite_about.setWordWrap(True)
        self.argument_row = QWidget(body)
        arg_layout = QHBoxLayout(self.argument_row)
        arg_layout.setContentsMargins(0, 0, 0, 0)
        self.rewrite_argument = QLineEdit(self.argument_row)
        self.rewrite_argument.setObjectName("rewriteArgument")
        arg_layout.addWidget(QLabel("Argument", self.argument_row))
        arg_layout.addWidget(self.rewrite_argument, 1)
        self.argument_row.hide()
        layout.addWidget(QLabel("<b>Rewrite</b>", body))
        layout.addWidget(self.rewrite_list)
        layout.addWidget(self.rewrite_about)
        layout.addWidget(self.argument_row)
        self.pattern_area = QWidget(body)  # the user's own pattern: shown for it only
        mine = QVBoxLayout(self.pattern_area)
        mine.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.name = QLineEdit("pattern", body)
        self.name.setObjectName("patternName")
        self.make_button = QPushButton("Make pattern", body)
        self.make_button.setObjectName("makePattern")
        self.make_button.setToolTip("Make a pattern of the selected nodes (box or Ctrl+click them)")
        self.open_button = QPushButton("Open…", body)
        self.open_button.setToolTip("Open a pattern file (def pattern, def replacement, RULES)")
        self.save_button = QPushButton("Save…", body)
        self.save_button.setToolTip("Save the pattern, its replacement and rules as a .py file")
        row.addWidget(QLabel("Name", body))
        row.addWidget(self.name, 1)
        row.addWidget(self.make_button)
        mine.addLayout(row)
        files = QHBoxLayout()
        files.addWidget(self.open_button)
        files.addWidget(self.save_button)
        files.addStretch(1)
        mine.addLayout(files)
        mono = QFont("monospace")
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.pattern_code = QPlainTextEdit(body)
        self.pattern_code.setObjectName("patternCode")
        self.pattern_code.setFont(mono)
        self.pattern_code.setPlaceholderText(
            "def pattern(x):\n    return torch.relu(x + 1.0)\n\n"
            "(or select nodes and press Make pattern)"
        )
        rules = QGridLayout()
        self.scope = QComboBox(body)
        self.scope.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.scope.setMinimumContentsLength(12)
        self.scope.setObjectName("ruleScope")
        self.scope.setToolTip("The rules below are for every node, or for the node chosen here")
        self.scope.addItem("Rules for every node", None)
        rules.addWidget(self.scope, 0, 0, 1, 2)
        self.rule_boxes: dict[str, QCheckBox] = {}
        for i, (key, text, on, _off, meaning) in enumerate(RULE_BOXES):
            box = QCheckBox(text, body)
            box.setToolTip(meaning)
            box.setObjectName(f"rule_{key}")
            box.setChecked(getattr(DEFAULT_RULES, key) == on)
            self.rule_boxes[key] = box
            rules.addWidget(box, 1 + i // 2, i % 2)
        self.attrs = QLineEdit(body)
        self.attrs.setObjectName("ruleAttrs")
        self.attrs.setPlaceholderText(
            "compare these module attributes too, e.g. kernel_size, stride"
        )
        rules.addWidget(self.attrs, 2 + len(RULE_BOXES) // 2, 0, 1, 2)
        buttons = QHBoxLayout()
        self.find_button = QPushButton("Find", body)
        self.find_button.setObjectName("findMatches")
        self.fx_button = QPushButton("torch.fx rules", body)
        self.fx_button.setToolTip("Match as torch.fx.replace_pattern does: op and target only")
        self.why_button = QPushButton("Why not here?", body)
        self.why_button.setObjectName("whyNotHere")
        self.why_button.setToolTip("Explain why the selected node is not part of a match")
        self.prev_button = QPushButton("◀", body)
        self.next_button = QPushButton("▶", body)
        for b in (self.prev_button, self.next_button):
            b.setMaximumWidth(32)
        self.prev_button.setToolTip("The previous match")
        self.next_button.setToolTip("The next match")
        for b in (self.find_button, self.fx_button, self.why_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        self.summary = LinesLabel("No pattern yet.", body)  # (whole, however long)
        self.summary.setObjectName("matchSummary")
        self.match_list = QListWidget(body)
        self.match_list.setObjectName("matchList")
        self.explanation = QPlainTextEdit(body)
        self.explanation.setObjectName("explanation")
        self.explanation.setReadOnly(True)
        self.explanation.setFont(mono)
        self.explanation.setPlaceholderText("Why a node did not match is told here.")
        rep_row = QHBoxLayout()
        self.replacement_choice = QComboBox(body)
        self.replacement_choice.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.replacement_choice.setMinimumContentsLength(12)
        self.replacement_choice.setObjectName("replacementChoice")
        self.replacement_choice.addItem("the function below", "")
        self.replacement_choice.addItem("the replacement box (selected nodes)", BOX)
        self.replace_button = QPushButton("Replace accepted", body)
        self.replace_button.setObjectName("replaceMatches")
        self.box_button = QPushButton("Selection as replacement", body)
        self.box_button.setObjectName("replacementBox")
        self.box_button.setToolTip(
            "Build the replacement with the editing tools, select its nodes, press this"
        )
        rep_row.addWidget(self.replacement_choice, 1)
        rep_buttons = QHBoxLayout()
        rep_buttons.addWidget(self.box_button)
        rep_buttons.addStretch(1)
        self.replacement_code = QPlainTextEdit(body)
        self.replacement_code.setObjectName("replacementCode")
        self.replacement_code.setFont(mono)
        self.replacement_code.setPlaceholderText(REPLACEMENT_HINT)
        self.check_label = QLabel("", body)
        self.check_label.setObjectName("checkResult")
        self.check_label.setWordWrap(True)
        self.undo_button = QPushButton("Undo the rewrite", body)
        self.undo_button.setObjectName("undoRewrite")
        self.undo_button.hide()
        self.apply_button = QPushButton("Apply anyway", body)
        self.apply_button.setObjectName("applyAnyway")
        self.apply_button.setToolTip(
            "Apply the rewrite although the model then computes other values (one undo step)"
        )
        self.apply_button.hide()
        self.report_button = QPushButton("Save report…", body)
        self.report_button.setObjectName("saveRewriteReport")
        self.report_button.setToolTip(
            "The replacement's matches, skips and check, saved as a JSON file (the report the "
            "command line's rewrite prints)"
        )
        self.report_button.setEnabled(False)
        mine.addWidget(self.pattern_code)
        mine.addLayout(rules)
        mine.addLayout(buttons)
        results = QWidget(body)
        results_layout = QVBoxLayout(results)
        results_layout.setContentsMargins(0, 0, 0, 0)
        summary_row = QHBoxLayout()  # what was found, and what to do with it, always in sight
        summary_row.addWidget(self.summary, 1)
        summary_row.addWidget(self.prev_button)
        summary_row.addWidget(self.next_button)
        summary_row.addWidget(self.replace_button)
        results_layout.addLayout(summary_row)
        results_layout.addWidget(self.check_label)
        result_row = QHBoxLayout()
        result_row.addWidget(self.apply_button)
        result_row.addWidget(self.undo_button)
        result_row.addWidget(self.report_button)
        result_row.addStretch(1)
        results_layout.addLayout(result_row)
        self.match_list.setMinimumHeight(rows_height(self.match_list, 4))
        results_layout.addWidget(self.match_list, 1)
        self.replacement_area = QWidget(body)  # the user's own replacement: for their pattern
        bottom_layout = QVBoxLayout(self.replacement_area)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addLayout(rep_row)
        bottom_layout.addLayout(rep_buttons)
        bottom_layout.addWidget(self.replacement_code)
        split = QSplitter(Qt.Orientation.Vertical, body)
        split.setObjectName("patternsSplit")
        for part in (self.pattern_area, results, self.explanation, self.replacement_area):
            split.addWidget(part)
        split.setStretchFactor(1, 2)
        layout.addWidget(split, 1)
        # scrolled: the dock shares its column with the code view and must not push it away
        # (fitted: a plain one gave the body its preferred height and scrolled Find out of sight)
        scroll = FittingScrollArea()
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.set_fitted(body)
        self.body = scroll  # (the dock's widget)
