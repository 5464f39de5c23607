"""The File menu: open, reload, save, export, compare, close, quit."""

from __future__ import annotations

from collections.abc import Callable

from fxstudio.core.flows.diff import last_rewrite
from fxstudio.qt.window import compare_flow, report_export
from fxstudio.qt.window.actions.action import DOC, SEP, SK, Action, Entries, Window

MENU = "&File"


def export(fmt: str) -> Callable[[Window], None]:
    """The command that asks where to export the model as ``fmt``, and does."""
    return lambda w: w.saving.export_dialog(fmt)


ENTRIES: Entries = (
    Action(
        id="actionOpen",
        text="&Open model…",
        menu=MENU,
        run=lambda w: w.show_open_dialog(),
        keys=SK.Open,
        tip="Open a model file, an importable model or a built-in example",
        icon="open.svg",
    ),
    "@recent",
    Action(
        id="actionReload",
        text="&Reload",
        menu=MENU,
        run=lambda w: w.session.reload(),
        keys=SK.Refresh,
        tip="Load and capture the current model again",
        icon="reload.svg",
        needs=DOC,
    ),
    SEP,
    Action(
        id="actionSaveSession",
        text="&Save session",
        menu=MENU,
        run=lambda w: w.saving.save_session(),
        keys=SK.Save,
        tip="Save the model, its edits and the view as a .fxstudio session",
        icon="save.svg",
        needs=DOC,
    ),
    Action(
        id="actionSaveSessionAs",
        text="Save session &as…",
        menu=MENU,
        run=lambda w: w.saving.save_session(ask=True),
        keys=SK.SaveAs,
        needs=DOC,
    ),
    SEP,
    Action(
        id="actionSavePython",
        text="Save as &Python module…",
        menu=MENU,
        run=export("py"),
        keys="Ctrl+E",
        tip="A standalone .py module with its weights in a .safetensors file beside it",
        icon="save-python.svg",
        needs=DOC,
    ),
    Action(
        id="actionSaveCode", text="Save &forward code…", menu=MENU, run=export("code"), needs=DOC
    ),
    Action(
        id="actionExportTorchScript",
        text="Export &TorchScript…",
        menu=MENU,
        run=export("torchscript"),
        needs=DOC,
    ),
    Action(
        id="actionExportPt2",
        text="Export torch.e&xport program (.pt2)…",
        menu=MENU,
        run=export("pt2"),
        needs=DOC,
    ),
    Action(id="actionExportOnnx", text="Export &ONNX…", menu=MENU, run=export("onnx"), needs=DOC),
    SEP,
    Action(
        id="actionExportImage",
        text="Export &picture (PNG, SVG, PDF)…",
        menu=MENU,
        run=lambda w: w.saving.export_image_dialog(),
        tip="Save the canvas: the whole graph (SVG and PDF: vector, the text searchable), or "
        "the visible area",
        needs=DOC,
    ),
    Action(
        id="actionExportReport",
        text="Export r&eport…",
        menu=MENU,
        run=lambda w: report_export.export_report(w),
        tip="One HTML file that opens in any browser, no server: the graph (pan, zoom, modules "
        "collapse, a node's details), the rewrites with their checks, and the docks' profile, "
        "memory and kernels",
        needs=DOC,
    ),
    SEP,
    Action(
        id="actionCompareWith",
        text="Co&mpare with…",
        menu=MENU,
        run=lambda w: compare_flow.compare_with(w),
        tip="Open another model or session beside this graph: nodes aligned, differences "
        "listed, values compared on the same inputs",
        needs=DOC,
    ),
    Action(
        id="actionCompareBeforeRewrite",
        text="Compare with &before the last rewrite",
        menu=MENU,
        run=lambda w: compare_flow.compare_before_rewrite(w),
        tip="This graph beside the same model before its last rewrite",
        needs=DOC,
        when=lambda w: w.document is not None and last_rewrite(w.document) is not None,
    ),
    SEP,
    Action(
        id="actionClose",
        text="&Close model",
        menu=MENU,
        run=lambda w: w.close_document(),
        keys=SK.Close,
        tip="Close the model (asks to save changes first)",
        needs=DOC,
    ),
    Action(id="actionQuit", text="&Quit", menu=MENU, run=lambda w: w.close(), keys=SK.Quit),
)
