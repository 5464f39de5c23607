"""The canvas's context menu: what was right-clicked (:class:`Target`: a module's group, a
node, the module it is or is in) and the actions offered on it -- the canvas's own (expand or
collapse a module) and the docks', which they add when the controller asks
(``CanvasController.menuRequested(menu, target)``: the Run dock's *Run this module*).

A menu is built by :func:`build` (testable: its actions are triggered like any) and shown by
the controller where the user right-clicked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QMenu, QWidget

from fxstudio.core.graph.document import GraphDocument
from fxstudio.qt.canvas.items import GroupItem, NodeItem
from fxstudio.qt.canvas.scene import GraphScene


@dataclass(frozen=True)
class Target:
    """What a context menu is about: ``group`` (a module's path) or ``node`` (a node's
    name), and ``module``: the module it is (the group, a ``call_module`` node's target) or,
    ``own`` false, the module a node is in (None: at the top level)."""

    group: str | None = None
    node: str | None = None
    module: str | None = None
    own: bool = True


def target_at(scene: GraphScene, doc: GraphDocument, pos: QPointF) -> Target | None:
    """What is drawn at ``pos`` (the topmost node or group), or None (the background)."""
    for item in scene.items(pos):
        if isinstance(item, NodeItem) and item.name in doc:
            node = doc.node(item.name)
            if node.op == "call_module":
                return Target(node=item.name, module=str(node.target))
            return Target(node=item.name, module=scene.parent_of.get(item.name) or None, own=False)
        if isinstance(item, GroupItem):
            return Target(group=item.path, module=item.path)
    return None


def build(parent: QWidget, target: Target, collapsed: bool, toggle: Callable[[], None]) -> QMenu:
    """The canvas's own actions on ``target`` (``collapsed``: its group is folded;
    ``toggle()`` folds or unfolds it); the docks add theirs after."""
    menu = QMenu(parent)
    menu.setObjectName("canvasMenu")
    if target.group is not None:
        label = "Expand" if collapsed else "Collapse"
        menu.addAction(f"{label} {target.group}").triggered.connect(lambda: toggle())
    return menu
