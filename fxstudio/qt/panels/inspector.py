"""The inspector: everything about the current node, read from the document.  A node that
holds weights in a structure-only document (a parameter read by ``get_attr``, a module
called) says it has none -- its tensors' shapes and dtypes, no values."""

from __future__ import annotations

import functools
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem, QWidget
from torch import Tensor, fx, nn

from fxstudio.core.flows.run import NodeProfile, NodeTime, format_rate
from fxstudio.core.graph.document import ChangeKind, DocumentEvent, GraphDocument
from fxstudio.core.graph.graphviews import called_module
from fxstudio.qt.forms import child, load_form
from fxstudio.qt.panels.base import DocumentPanel
from fxstudio.qt.wrapped_text import wrap_column

#: The properties a user can edit in place (double-click the value), and what they mean.
EDITABLE = {
    "name": "a new name",
    "target": "another function, method or submodule",
    "args": "arguments as Python: node names and values, e.g. x, 2.0",
    "kwargs": "keyword arguments, e.g. dim=-1",
}


class InspectorPanel(DocumentPanel):
    """The *Inspector* dock: everything about the current node.  Editable values (name,
    target, arguments) are edited in place: ``edit(name, property, text)`` -- the edit
    controller's -- makes each one undoable edit."""

    id, title = "inspector", "Inspector"
    tree: QTreeWidget  # the form's inspector

    def build(self) -> QWidget:
        body = QWidget()
        load_form("inspector_panel", body)
        self.tree = child(body, QTreeWidget, "inspector")
        self.edit: Callable[[str, str, str], object] | None = None  # set by the window
        self._filling = False
        self.tree.setHeaderLabels(["Property", "Value"])
        self.tree.setColumnWidth(0, 110)
        # a long value (a path, many arguments) is shown whole, wrapped at word boundaries
        # (the form's wordWrap alone sized rows for one line and elided the rest)
        self.values = wrap_column(self.tree, 1)
        self.selection.changed.connect(lambda _names: self.refresh())
        self.tree.itemChanged.connect(self._changed)
        self.session.profileChanged.connect(lambda _profile: self.refresh())
        return body

    @property
    def profile(self) -> NodeProfile | None:
        """The last per-node profile (a NodeProfile) of this document, or None (it may be
        stale: ``session.profile_current``)."""
        return self.session.profile

    def on_document(self, doc: GraphDocument | None) -> None:
        self.refresh()

    def on_change(self, event: DocumentEvent) -> None:
        if event.kind is not ChangeKind.VIEW_CHANGED:
            self.refresh()

    def properties(self) -> list[tuple[str, str]]:
        """What the inspector shows for the current node, as (label, value) pairs."""
        doc, name = self.document, self.selection.current
        if doc is None or name is None:
            return []
        try:
            row = doc.row(name)
        except KeyError:
            return []
        loc = doc.source_location(name)
        inputs = ", ".join(f"{label}: {src}" for label, src in doc.inputs(name))
        unknown = "being worked out…" if doc.shapes_stale else "unknown"
        props = [
            ("name", row.name),
            ("op", row.opcode),
            ("target", row.target),
            ("args", row.args),
            ("kwargs", row.kwargs),
            ("shape", row.shape or unknown),
            ("dtype", row.dtype or unknown),
            ("module", row.module_path or "(top level)"),
            ("inputs", inputs or "none"),
            ("users", ", ".join(doc.users(name)) or "none"),
            ("source", f"{loc.short()}\n{loc.text.strip()}" if loc else "unknown"),
        ]
        node = doc.node(name)
        called = called_module(doc.graph_module, node)
        if called is not None:  # the module it calls: class and constructor arguments
            cls, made_with = called
            props[3:3] = [("class", cls), ("constructor", made_with or "no arguments")]
        bare = _structure_only(doc.graph_module, node)
        if bare:
            props.append(("weights", bare))
        made = node.meta.get("fxstudio_rewrite")
        if made:  # provenance: which rewrite made this node, from which nodes
            props.append(
                (
                    "rewritten by",
                    f"{made['rewrite']} (pattern {made['pattern']})\n"
                    f"from {', '.join(made['from'])}",
                )
            )
        timed = self.profile.node(name) if self.profile is not None else None
        if timed is not None:
            rows = _timing_rows(timed)
            if not self.session.profile_current:
                label, value = rows[0]
                rows[0] = (label, f"{value}\nstale: measured before the graph last changed")
            props += rows
        return props

    def refresh(self) -> None:
        self._filling = True
        try:
            self.tree.clear()
            items = [QTreeWidgetItem([label, value]) for label, value in self.properties()]
            doc, current = self.document, self.selection.current
            if not items or doc is None or current is None:  # (no items without them)
                doc = current = None
            node = doc.node(current) if doc is not None and current is not None else None
            loc = doc.source_location(current) if doc is not None and current is not None else None
            for item in items:
                label = item.text(0)
                item.setTextAlignment(0, Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
                item.setToolTip(1, item.text(1))
                if label == "source" and loc is not None:  # the full path
                    item.setToolTip(1, loc.describe())
                if self.edit is not None and label in EDITABLE and _editable(node, label):
                    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
                    item.setToolTip(1, f"{item.text(1)}\nDouble-click to change: {EDITABLE[label]}")
                    if label in ("args", "kwargs"):  # edited without the brackets
                        item.setText(1, item.text(1)[1:-1].rstrip(","))
            self.tree.addTopLevelItems(items)
        finally:
            self._filling = False

    def _changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._filling or self.edit is None or self.selection.current is None:
            return
        if column == 1:
            self.edit(self.selection.current, item.text(0), item.text(1))
        self.refresh()  # shows the document: the edit, or the old value after a refusal


def _timing_rows(n: NodeTime) -> list[tuple[str, str]]:
    """The profiled time, FLOPs and roofline place of one node, for the inspector."""
    rows = [
        (
            "time",
            f"{n.time_s * 1e3:.3f} ms ± {n.iqr_s * 1e3:.3f} (IQR) · {n.share:.1%} of the whole",
        )
    ]
    work = f"{n.flops:,} FLOPs · {n.bytes:,} bytes moved"
    rows.append(("work", work))
    if n.flops_per_s or n.bytes_per_s:
        rate = []
        if n.flops_per_s:
            rate.append(format_rate(n.flops_per_s, "FLOP/s"))
        if n.bytes_per_s:
            rate.append(format_rate(n.bytes_per_s, "B/s"))
        if n.bound == "invalid":
            rate.append("above the device's peak: a measurement error, not a fast node")
        elif n.bound:
            rate.append(f"{n.bound}-bound, {n.peak_share:.0%} of peak")
            if n.from_cache:
                rate.append("faster than memory: the data was in cache")
        rows.append(("achieved", " · ".join(rate)))
    return rows


#: What a structure-only node's weights are.
NO_WEIGHTS = "no weights (structure only): shapes and dtypes, no values"


def held_tensors(gm: fx.GraphModule, node: fx.Node) -> list[tuple[str, Tensor]]:
    """The tensors ``node`` reads from the module: the attribute of a ``get_attr``, the
    parameters and buffers of the module a ``call_module`` calls (its own, not its
    children's); none for other nodes, or one whose target is gone."""
    try:
        if node.op == "get_attr":
            held = functools.reduce(getattr, str(node.target).split("."), gm)
            return [(str(node.target), held)] if isinstance(held, Tensor) else []
        if node.op == "call_module":
            module = gm.get_submodule(str(node.target))
            if isinstance(module, nn.Module):
                return [
                    *module.named_parameters(recurse=False),
                    *module.named_buffers(recurse=False),
                ]
    except AttributeError:
        pass
    return []


def _structure_only(gm: fx.GraphModule, node: fx.Node) -> str:
    """What the inspector says of ``node``'s weights when they are ``meta`` tensors (a
    structure-only document): that there are none, and each tensor's shape and dtype; ""
    for a node with real weights or none."""
    held = held_tensors(gm, node)
    if not any(t.is_meta for _, t in held):
        return ""
    if node.op == "get_attr":  # (its shape and dtype are the node's)
        return NO_WEIGHTS
    shapes = [f"{name}: {'x'.join(map(str, t.shape)) or 'scalar'} {_dtype(t)}" for name, t in held]
    return "\n".join([NO_WEIGHTS, *shapes])


def _dtype(t: Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _editable(node, label: str) -> bool:
    if node is None:
        return False
    if node.op == "output":  # what the graph returns
        return label == "args"
    if label == "target":
        return node.op in ("call_function", "call_method", "call_module")
    return node.op != "placeholder" or label == "name"
