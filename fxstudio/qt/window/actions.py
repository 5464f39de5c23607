"""The window's commands, declared as data: one :class:`Action` per command -- its id, text,
menu, keys, icon, whether it is on the toolbar, what it needs to act, and what it runs.
The menus, the toolbar, the command palette and the keyboard-shortcut list are all built
from :data:`ACTIONS` (and the panels' own actions, such as the Step dock's).

A command that cannot act is disabled, not silent: :func:`update` is called whenever a
document opens or closes, it changes, the selection changes, editing is locked or a command
ran.  What a command needs is ``needs`` (a document, a selection, editing not locked) and, for
a few, ``when(window)`` (something copied to paste, an input that can move that way, a
collapsed module to expand).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenu, QToolBar

from fxstudio.core.compare.sides import last_rewrite
from fxstudio.qt.resources import icon
from fxstudio.qt.window import compare_flow
from fxstudio.qt.window.node_data import node_data_of

SK = QKeySequence.StandardKey
#: What an action needs to act: a document, a selected node, editing not locked.
DOC, SELECTION, EDIT = 1, 2, 4
SEP = "-"  # a separator in a menu's list
#: The keys of a standard key on a platform that gives it none.
FALLBACK_KEYS = {
    SK.Open: "Ctrl+O",
    SK.Refresh: "F5",
    SK.Save: "Ctrl+S",
    SK.SaveAs: "Ctrl+Shift+S",
    SK.Close: "Ctrl+W",
    SK.Quit: "Ctrl+Q",
    SK.Find: "Ctrl+F",
    SK.FindNext: "F3",
    SK.FindPrevious: "Shift+F3",
    SK.ZoomIn: "Ctrl++",
    SK.ZoomOut: "Ctrl+-",
    SK.HelpContents: "F1",
}
MENUS = ("&File", "&Edit", "&View", "&Rewrite", "&Step", "&Help")


@dataclass(frozen=True)
class Action:
    id: str  # its objectName (actionOpen)
    text: str
    menu: str
    run: Callable[[Any], object]  # called with the window (what it returns is dropped)
    keys: str | QKeySequence.StandardKey | None = None
    tip: str = ""
    icon: str = ""  # a file in resources/icons
    needs: int = 0
    checkable: bool = False
    checked: bool = False
    when: Callable[[Any], bool] | None = None  # and only when this says so (given the window)


def _export(fmt: str) -> Callable[[Any], None]:
    return lambda w: w.saving.export_dialog(fmt)


ACTIONS: tuple[Action | str, ...] = (
    Action(
        "actionOpen",
        "&Open model…",
        "&File",
        lambda w: w.show_open_dialog(),
        SK.Open,
        "Open a model file, an importable model or a built-in example",
        "open.svg",
    ),
    "&File:@recent",
    Action(
        "actionReload",
        "&Reload",
        "&File",
        lambda w: w.session.reload(),
        SK.Refresh,
        "Load and capture the current model again",
        "reload.svg",
        DOC,
    ),
    "&File:-",
    Action(
        "actionSaveSession",
        "&Save session",
        "&File",
        lambda w: w.saving.save_session(),
        SK.Save,
        "Save the model, its edits and the view as a .fxstudio session",
        "save.svg",
        DOC,
    ),
    Action(
        "actionSaveSessionAs",
        "Save session &as…",
        "&File",
        lambda w: w.saving.save_session(ask=True),
        SK.SaveAs,
        needs=DOC,
    ),
    "&File:-",
    Action(
        "actionSavePython",
        "Save as &Python module…",
        "&File",
        _export("py"),
        "Ctrl+E",
        "A standalone .py module with its weights in a .safetensors file beside it",
        "save-python.svg",
        DOC,
    ),
    Action("actionSaveCode", "Save &forward code…", "&File", _export("code"), needs=DOC),
    Action(
        "actionExportTorchScript",
        "Export &TorchScript…",
        "&File",
        _export("torchscript"),
        needs=DOC,
    ),
    Action(
        "actionExportPt2",
        "Export torch.e&xport program (.pt2)…",
        "&File",
        _export("pt2"),
        needs=DOC,
    ),
    Action("actionExportOnnx", "Export &ONNX…", "&File", _export("onnx"), needs=DOC),
    "&File:-",
    Action(
        "actionExportImage",
        "Export &picture (PNG, SVG)…",
        "&File",
        lambda w: w.saving.export_image_dialog(),
        tip="Save the canvas: the whole graph, or the visible area",
        needs=DOC,
    ),
    "&File:-",
    Action(
        "actionCompareWith",
        "Co&mpare with…",
        "&File",
        lambda w: compare_flow.compare_with(w),
        tip="Open another model or session beside this graph: nodes aligned, differences "
        "listed, values compared on the same inputs",
        needs=DOC,
    ),
    Action(
        "actionCompareBeforeRewrite",
        "Compare with &before the last rewrite",
        "&File",
        lambda w: compare_flow.compare_before_rewrite(w),
        tip="This graph beside the same model before its last rewrite",
        needs=DOC,
        when=lambda w: w.document is not None and last_rewrite(w.document) is not None,
    ),
    "&File:-",
    Action(
        "actionClose",
        "&Close model",
        "&File",
        lambda w: w.close_document(),
        SK.Close,
        "Close the model (asks to save changes first)",
        needs=DOC,
    ),
    Action("actionQuit", "&Quit", "&File", lambda w: w.close(), SK.Quit),
    "&Edit:@undo",
    "&Edit:-",
    Action(
        "actionInsert",
        "&Insert node…",
        "&Edit",
        lambda w: w.dialogs.insert(),
        "Ctrl+I",
        "Insert a function, method, module or weight after the selected node, or on the "
        "selected edge",
        "insert.svg",
        DOC | EDIT,
    ),
    Action(
        "actionDelete",
        "&Delete",
        "&Edit",
        lambda w: w.edits.delete_selection(),
        "Del",
        "Delete the selected nodes (their users take their input when it fits)",
        "delete.svg",
        DOC | SELECTION | EDIT,
    ),
    Action(
        "actionCopy",
        "&Copy nodes",
        "&Edit",
        lambda w: w.edits.copy_selection(),
        "Ctrl+C",
        needs=DOC | SELECTION,
    ),
    Action(
        "actionPaste",
        "&Paste nodes",
        "&Edit",
        lambda w: w.edits.paste(),
        "Ctrl+V",
        "Copies of the copied nodes, with new names, after the last of them",
        needs=DOC | EDIT,
        when=lambda w: w.edits.can_paste(),
    ),
    Action(
        "actionRename",
        "Re&name node…",
        "&Edit",
        lambda w: w.dialogs.rename(),
        "F2",
        needs=DOC | SELECTION | EDIT,
    ),
    Action(
        "actionChangeTarget",
        "Change &target…",
        "&Edit",
        lambda w: w.dialogs.change_target(),
        "Ctrl+T",
        "Call another function, method or submodule (e.g. relu → gelu)",
        needs=DOC | SELECTION | EDIT,
    ),
    Action(
        "actionReturnSelected",
        "Return the selected &values",
        "&Edit",
        lambda w: w.edits.set_outputs(list(w.selection.names)),
        tip="Make the graph return the selected nodes' values",
        needs=DOC | SELECTION | EDIT,
    ),
    Action(
        "actionAddInput",
        "Add &input…",
        "&Edit",
        lambda w: w.dialogs.add_input(),
        tip="A new argument of forward, with an optional default value",
        needs=DOC | EDIT,
    ),
    Action(
        "actionInputEarlier",
        "Move input &earlier",
        "&Edit",
        lambda w: w.edits.move_input(-1),
        needs=DOC | SELECTION | EDIT,
        when=lambda w: w.edits.can_move_input(-1),
    ),
    Action(
        "actionInputLater",
        "Move input &later",
        "&Edit",
        lambda w: w.edits.move_input(+1),
        needs=DOC | SELECTION | EDIT,
        when=lambda w: w.edits.can_move_input(+1),
    ),
    "&Edit:-",
    Action("actionFind", "&Find node…", "&Edit", lambda w: w.search.show(), SK.Find, needs=DOC),
    Action(
        "actionFindNext", "Find ne&xt", "&Edit", lambda w: w.search.next(), SK.FindNext, needs=DOC
    ),
    Action(
        "actionFindPrevious",
        "Find pre&vious",
        "&Edit",
        lambda w: w.search.previous(),
        SK.FindPrevious,
        needs=DOC,
    ),
    Action(
        "actionCommandPalette",
        "Command &palette…",
        "&View",
        lambda w: w.show_command_palette(),
        "Ctrl+Shift+P",
        "Find any command by name",
    ),
    Action(
        "actionFit",
        "&Fit to window",
        "&View",
        lambda w: w.canvas.fit(),
        "F",
        icon="fit.svg",
        needs=DOC,
    ),
    Action(
        "actionZoomIn",
        "Zoom &in",
        "&View",
        lambda w: w.canvas.zoom_in(),
        SK.ZoomIn,
        icon="zoom-in.svg",
        needs=DOC,
    ),
    Action(
        "actionZoomOut",
        "Zoom &out",
        "&View",
        lambda w: w.canvas.zoom_out(),
        SK.ZoomOut,
        icon="zoom-out.svg",
        needs=DOC,
    ),
    Action(
        "actionActualSize",
        "&Actual size (100%)",
        "&View",
        lambda w: w.canvas.actual_size(),
        "Ctrl+0",
        needs=DOC,
    ),
    "&View:-",
    Action(
        "actionExpandAll",
        "&Expand all modules",
        "&View",
        lambda w: w.canvas_controller.expand_all(),
        needs=DOC,
        when=lambda w: bool(w.document.collapsed),
    ),
    Action(
        "actionCollapseAll",
        "&Collapse top-level modules",
        "&View",
        lambda w: w.canvas_controller.collapse_top_level(),
        needs=DOC,
    ),
    Action(
        "actionLoadNodeData",
        "Load &node data…",
        "&View",
        lambda w: node_data_of(w).choose(),
        tip="Tint the canvas by per-node numbers from a file: Model Explorer node data, "
        "Netron metrics, a CSV (node, value) or JSON",
        needs=DOC,
    ),
    Action(
        "actionClearNodeData",
        "Clear node data",
        "&View",
        lambda w: node_data_of(w).clear(),
        needs=DOC,
        when=lambda w: (
            getattr(w, "node_data", None) is not None and w.node_data.overlay is not None
        ),
    ),
    Action(
        "actionRelayout",
        "&Relayout",
        "&View",
        lambda w: w.canvas_controller.relayout(from_scratch=True),
        "Ctrl+L",
        "Lay the graph out again from scratch",
        "relayout.svg",
        DOC,
    ),
    Action(
        "actionMinimap",
        "&Overview map",
        "&View",
        lambda w: w.canvas_controller.show_minimap(w.action("actionMinimap").isChecked()),
        "Ctrl+M",
        "Show the whole graph small in the canvas corner",
        checkable=True,
        checked=True,
    ),
    "&View:-",
    "&View:@layouts",
    "&View:@docks",
    "&View:-",
    Action(
        "actionResetLayout",
        "&Reset layout",
        "&View",
        lambda w: w.window_state.reset_layout(),
        tip="Put the docks of this task layout back where they were at the first start",
    ),
    "&View:@theme",
    "&Rewrite:@panel",
    "&Step:@panel",
    Action(
        "actionLearnFx",
        "&Learn FX",
        "&Help",
        lambda w: w.learn(),
        tip="A guided lesson in ten checked steps, on this window",
    ),
    Action(
        "actionHelp",
        "&Keyboard shortcuts",
        "&Help",
        lambda w: w.show_shortcuts(),
        SK.HelpContents,
    ),
    Action("actionAbout", "&About fxstudio", "&Help", lambda w: w.show_about()),
)


#: The toolbar, in order (``-``: a separator).
TOOLBAR = (
    "actionOpen", "actionReload", "actionSaveSession", "actionSavePython", SEP,
    "actionUndo", "actionRedo", SEP,
    "actionInsert", "actionDelete", SEP,
    "actionFit", "actionZoomIn", "actionZoomOut", "actionRelayout",
)  # fmt: skip


def build(window: Any) -> tuple[dict[str, QAction], dict[str, QMenu]]:
    """The actions of :data:`ACTIONS` and the menus they go in.  Places named ``@…`` in the
    table are left for the window to fill (:func:`place`: the Recent menu, undo and redo,
    the docks, the theme, a panel's actions).  ``window`` (a QMainWindow) has a signal
    ``actionStarted``, emitted as a command starts, before it runs; once it ran, what every
    command can do is worked out again (:func:`update`)."""
    menus = {}
    for title in MENUS:
        menu = window.menuBar().addMenu(title)
        menu.setObjectName("menu" + title.strip("&"))
        menus[title] = menu
    actions: dict[str, QAction] = {}
    for entry in ACTIONS:
        if isinstance(entry, str):
            title, _, what = entry.partition(":")
            if what == SEP:
                menus[title].addSeparator()
            else:  # a place for the window to fill: a named, empty marker action
                marker = menus[title].addAction("")
                marker.setObjectName(what)
                marker.setVisible(False)
            continue
        action = QAction(entry.text, window)
        action.setObjectName(entry.id)
        if entry.tip:
            action.setToolTip(entry.tip)
            action.setStatusTip(entry.tip)
        if isinstance(entry.keys, QKeySequence.StandardKey):
            bindings = QKeySequence.keyBindings(entry.keys)
            if not bindings and entry.keys in FALLBACK_KEYS:
                bindings = [QKeySequence(FALLBACK_KEYS[entry.keys])]
            action.setShortcuts(bindings)
        elif entry.keys:
            action.setShortcut(QKeySequence(entry.keys))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        if entry.icon:
            action.setIcon(icon(entry.icon))
        if entry.checkable:
            action.setCheckable(True)
            action.setChecked(entry.checked)
        action.triggered.connect(window.actionStarted)
        action.triggered.connect(lambda _checked=False, e=entry: e.run(window))
        action.triggered.connect(lambda _checked=False: update(window, actions))
        menus[entry.menu].addAction(action)
        actions[entry.id] = action
    return actions, menus


def fill_toolbar(toolbar: QToolBar, actions: dict[str, QAction]) -> None:
    for name in TOOLBAR:
        if name == SEP:
            toolbar.addSeparator()
        else:
            toolbar.addAction(actions[name])


def place(menu: QMenu, marker: str, actions: Sequence[QAction | QMenu]) -> None:
    """Put ``actions`` (or submenus) where the marker ``marker`` is in ``menu``."""
    where = next(a for a in menu.actions() if a.objectName() == marker)
    for item in actions:
        if isinstance(item, QMenu):
            menu.insertMenu(where, item)
        else:
            menu.insertAction(where, item)


def update(window: Any, actions: dict[str, QAction]) -> None:
    """Enable each action of the table only when it can act."""
    session = window.session
    have = DOC if session.document is not None else 0
    if window.selection.names:
        have |= SELECTION
    if not session.locked:
        have |= EDIT
    for entry in ACTIONS:
        if isinstance(entry, Action) and entry.id in actions:
            can = entry.needs & have == entry.needs
            if can and entry.when is not None:
                can = entry.when(window)
            actions[entry.id].setEnabled(can)
