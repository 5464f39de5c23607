"""The Patterns dock's matching rules: the checkboxes for every node of the pattern, or for
one node chosen in the scope combo, and what they give the pattern."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fxstudio.core.patterns.pattern import DEFAULT_RULES, Pattern, Rules
from fxstudio.qt.panels.patterns_form import RULE_BOXES, PatternsForm


class RulesMixin(PatternsForm):
    """The rules half of :class:`~fxstudio.qt.panels.patterns.PatternsPanel` (its widgets
    are ``rule_boxes``, ``attrs`` and ``scope``, made by the form)."""

    default_rules: Rules
    node_rules: dict[str, Rules]
    _setting: bool

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

    def scope_changed(self, index: int) -> None:
        name = self.scope.itemData(index)
        self._show_rules(
            self.node_rules.get(name, self.default_rules) if name else self.default_rules
        )

    def rules_edited(self, *_: object) -> None:
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
        names = {n.name for n in pattern.compute_nodes}
        self.node_rules = {k: v for k, v in self.node_rules.items() if k in names}
        self._show_rules(self.default_rules)

    def _with_rules(self, pattern: Pattern) -> Pattern:
        pattern = pattern.with_rules(self.default_rules)
        names = {n.name for n in pattern.compute_nodes}
        pattern.node_rules = {k: v for k, v in self.node_rules.items() if k in names}
        return pattern
