"""The Patterns dock's matching rules: the checkboxes for every node of the pattern, or for
one node chosen in the scope combo, and what they give the pattern."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QPushButton

from fxstudio.core.flows.patterns import DEFAULT_RULES, FX_RULES, Pattern, Rules
from fxstudio.qt.panels.patterns.form import RULE_BOXES


class RulesPresenter:
    """The rules the checkboxes (``boxes``, by rule), the module attributes (``attrs``) and
    the scope combo (``scope``: every node, or one node of the pattern) hold; ``fx_button``
    sets the rules ``torch.fx.replace_pattern`` matches by."""

    def __init__(
        self,
        scope: QComboBox,
        boxes: dict[str, QCheckBox],
        attrs: QLineEdit,
        fx_button: QPushButton,
    ) -> None:
        self.scope, self.boxes, self.attrs = scope, boxes, attrs
        self.default_rules: Rules = DEFAULT_RULES  # the rules for every node ...
        self.node_rules: dict[str, Rules] = {}  # ... and for single nodes
        self._setting = False  # the checkboxes are being set, not edited
        scope.currentIndexChanged.connect(self.scope_changed)
        for box in boxes.values():
            box.toggled.connect(self.edited)
        attrs.editingFinished.connect(self.edited)
        fx_button.clicked.connect(lambda: self.set_rules(FX_RULES))

    def shown(self) -> Rules:
        """The rules the checkboxes show (for every node, or for the node in ``scope``)."""
        values: dict[str, Any] = {}
        for key, _text, on, off, _meaning in RULE_BOXES:
            values[key] = on if self.boxes[key].isChecked() else off
        attrs = tuple(a.strip() for a in self.attrs.text().split(",") if a.strip())
        if attrs and values["module"] == "type":
            values.update(module="attrs", attrs=attrs)
        return replace(DEFAULT_RULES, **values)

    def _show(self, rules: Rules) -> None:
        self._setting = True
        try:
            for key, _text, on, _off, _meaning in RULE_BOXES:
                self.boxes[key].setChecked(getattr(rules, key) in (on, "attrs"))
            self.attrs.setText(", ".join(rules.attrs))
        finally:
            self._setting = False

    def set_rules(self, rules: Rules) -> None:
        """The same rules for every node (the per-node choices are dropped)."""
        self.default_rules = rules
        self.node_rules = {}
        self.scope.setCurrentIndex(0)
        self._show(rules)

    def scope_changed(self, index: int) -> None:
        name = self.scope.itemData(index)
        self._show(self.node_rules.get(name, self.default_rules) if name else self.default_rules)

    def edited(self, *_: object) -> None:
        if self._setting:
            return
        name = self.scope.currentData()
        if name:
            self.node_rules[name] = self.shown()
        else:
            self.default_rules = self.shown()

    def fill_scope(self, pattern: Pattern) -> None:
        """The scope combo offers the nodes of ``pattern`` (rules for nodes it lacks dropped)."""
        self.scope.blockSignals(True)
        self.scope.clear()
        self.scope.addItem("Rules for every node", None)
        for n in pattern.compute_nodes:
            self.scope.addItem(f"Rules for {n.name} ({n.op})", n.name)
        self.scope.blockSignals(False)
        names = {n.name for n in pattern.compute_nodes}
        self.node_rules = {k: v for k, v in self.node_rules.items() if k in names}
        self._show(self.default_rules)

    def applied(self, pattern: Pattern) -> Pattern:
        """``pattern`` with the rules ticked (for every node, and node by node)."""
        pattern = pattern.with_rules(self.default_rules)
        names = {n.name for n in pattern.compute_nodes}
        pattern.node_rules = {k: v for k, v in self.node_rules.items() if k in names}
        return pattern
