"""The Edit menu: undo and redo (the window's), the edits of the selected nodes and of the
inputs, and finding nodes."""

from __future__ import annotations

from fxstudio.qt.window.actions.action import DOC, EDIT, SELECTION, SEP, SK, Action, Entries

MENU = "&Edit"

ENTRIES: Entries = (
    "@undo",
    SEP,
    Action(
        id="actionInsert",
        text="&Insert node…",
        menu=MENU,
        run=lambda w: w.dialogs.insert(),
        keys="Ctrl+I",
        tip="Insert a function, method, module or weight after the selected node, or on the "
        "selected edge",
        icon="insert.svg",
        needs=DOC | EDIT,
    ),
    Action(
        id="actionDelete",
        text="&Delete",
        menu=MENU,
        run=lambda w: w.edits.delete_selection(),
        keys="Del",
        tip="Delete the selected nodes (their users take their input when it fits)",
        icon="delete.svg",
        needs=DOC | SELECTION | EDIT,
    ),
    Action(
        id="actionCopy",
        text="&Copy nodes",
        menu=MENU,
        run=lambda w: w.edits.copy_selection(),
        keys="Ctrl+C",
        needs=DOC | SELECTION,
    ),
    Action(
        id="actionPaste",
        text="&Paste nodes",
        menu=MENU,
        run=lambda w: w.edits.paste(),
        keys="Ctrl+V",
        tip="Copies of the copied nodes, with new names, after the last of them",
        needs=DOC | EDIT,
        when=lambda w: w.edits.can_paste(),
    ),
    Action(
        id="actionRename",
        text="Re&name node…",
        menu=MENU,
        run=lambda w: w.dialogs.rename(),
        keys="F2",
        needs=DOC | SELECTION | EDIT,
    ),
    Action(
        id="actionChangeTarget",
        text="Change &target…",
        menu=MENU,
        run=lambda w: w.dialogs.change_target(),
        keys="Ctrl+T",
        tip="Call another function, method or submodule (e.g. relu → gelu)",
        needs=DOC | SELECTION | EDIT,
    ),
    Action(
        id="actionReturnSelected",
        text="Return the selected &values",
        menu=MENU,
        run=lambda w: w.edits.set_outputs(list(w.selection.names)),
        tip="Make the graph return the selected nodes' values",
        needs=DOC | SELECTION | EDIT,
    ),
    Action(
        id="actionAddInput",
        text="Add &input…",
        menu=MENU,
        run=lambda w: w.dialogs.add_input(),
        tip="A new argument of forward, with an optional default value",
        needs=DOC | EDIT,
    ),
    Action(
        id="actionInputEarlier",
        text="Move input &earlier",
        menu=MENU,
        run=lambda w: w.edits.move_input(-1),
        needs=DOC | SELECTION | EDIT,
        when=lambda w: w.edits.can_move_input(-1),
    ),
    Action(
        id="actionInputLater",
        text="Move input &later",
        menu=MENU,
        run=lambda w: w.edits.move_input(+1),
        needs=DOC | SELECTION | EDIT,
        when=lambda w: w.edits.can_move_input(+1),
    ),
    SEP,
    Action(
        id="actionFind",
        text="&Find node…",
        menu=MENU,
        run=lambda w: w.search.show(),
        keys=SK.Find,
        needs=DOC,
    ),
    Action(
        id="actionFindNext",
        text="Find ne&xt",
        menu=MENU,
        run=lambda w: w.search.next(),
        keys=SK.FindNext,
        needs=DOC,
    ),
    Action(
        id="actionFindPrevious",
        text="Find pre&vious",
        menu=MENU,
        run=lambda w: w.search.previous(),
        keys=SK.FindPrevious,
        needs=DOC,
    ),
)
