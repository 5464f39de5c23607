"""The View menu: the command palette, zoom, modules expanded or collapsed, node data, the
layout of the graph, the overview map; the task layouts, the docks and the theme (the
window's)."""

from __future__ import annotations

from fxstudio.qt.window.actions.action import DOC, SEP, SK, Action, Entries
from fxstudio.qt.window.node_data import node_data_of

MENU = "&View"

ENTRIES: Entries = (
    Action(
        id="actionCommandPalette",
        text="Command &palette…",
        menu=MENU,
        run=lambda w: w.show_command_palette(),
        keys="Ctrl+Shift+P",
        tip="Find any command by name",
    ),
    Action(
        id="actionFit",
        text="&Fit to window",
        menu=MENU,
        run=lambda w: w.canvas.fit(),
        keys="F",
        icon="fit.svg",
        needs=DOC,
    ),
    Action(
        id="actionZoomIn",
        text="Zoom &in",
        menu=MENU,
        run=lambda w: w.canvas.zoom_in(),
        keys=SK.ZoomIn,
        icon="zoom-in.svg",
        needs=DOC,
    ),
    Action(
        id="actionZoomOut",
        text="Zoom &out",
        menu=MENU,
        run=lambda w: w.canvas.zoom_out(),
        keys=SK.ZoomOut,
        icon="zoom-out.svg",
        needs=DOC,
    ),
    Action(
        id="actionActualSize",
        text="&Actual size (100%)",
        menu=MENU,
        run=lambda w: w.canvas.actual_size(),
        keys="Ctrl+0",
        needs=DOC,
    ),
    SEP,
    Action(
        id="actionExpandAll",
        text="&Expand all modules",
        menu=MENU,
        run=lambda w: w.canvas_controller.expand_all(),
        needs=DOC,
        when=lambda w: w.document is not None and bool(w.document.collapsed),
    ),
    Action(
        id="actionCollapseAll",
        text="&Collapse top-level modules",
        menu=MENU,
        run=lambda w: w.canvas_controller.collapse_top_level(),
        needs=DOC,
    ),
    Action(
        id="actionLoadNodeData",
        text="Load &node data…",
        menu=MENU,
        run=lambda w: node_data_of(w).choose(),
        tip="Tint the canvas by per-node numbers from a file: Model Explorer node data, "
        "Netron metrics, a CSV (node, value) or JSON",
        needs=DOC,
    ),
    Action(
        id="actionClearNodeData",
        text="Clear node data",
        menu=MENU,
        run=lambda w: node_data_of(w).clear(),
        needs=DOC,
        when=lambda w: (
            (data := getattr(w, "node_data", None)) is not None and data.overlay is not None
        ),
    ),
    Action(
        id="actionRelayout",
        text="&Relayout",
        menu=MENU,
        run=lambda w: w.canvas_controller.relayout(from_scratch=True),
        keys="Ctrl+L",
        tip="Lay the graph out again from scratch",
        icon="relayout.svg",
        needs=DOC,
    ),
    Action(
        id="actionMinimap",
        text="&Overview map",
        menu=MENU,
        run=lambda w: w.canvas_controller.show_minimap(w.action("actionMinimap").isChecked()),
        keys="Ctrl+M",
        tip="Show the whole graph small in the canvas corner",
        checkable=True,
        checked=True,
    ),
    SEP,
    "@layouts",
    "@docks",
    "@panel",  # the Memory dock's Estimate memory
    SEP,
    Action(
        id="actionResetLayout",
        text="&Reset layout",
        menu=MENU,
        run=lambda w: w.window_state.reset_layout(),
        tip="Put the docks of this task layout back where they were at the first start",
    ),
    "@theme",
)
