"""A ``.pt2``'s first picture, read straight from its archive before torch is imported.

A ``.pt2`` is a zip holding the exported program as JSON (``<name>/models/model.json``, torch's
``torch._export.serde`` schema): every node with its target, its arguments by name and its
outputs' shapes.  Reading that JSON takes milliseconds where importing torch and
deserialising the program take seconds, so the window draws the graph from it first --
every node as the canvas draws it (name, target, shape; parameters and buffers as the
``get_attr`` nodes they become) -- and replaces it with the editable document once that is
loaded.  :func:`read_archive` reads it (``None`` where the file is not such an archive: the
normal open then says what is wrong), :func:`first_picture` lays it out (graphviz ``dot`` up
to :data:`DOT_UP_TO` nodes, the layered layout beyond).  Torch-free.

Example:
    >>> import json, zipfile, tempfile, os
    >>> graph = {"inputs": [{"as_tensor": {"name": "x"}}],
    ...     "outputs": [{"as_tensor": {"name": "relu"}}],
    ...     "nodes": [{"name": "relu", "target": "torch.ops.aten.relu.default",
    ...     "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}}],
    ...     "outputs": [{"as_tensor": {"name": "relu"}}]}],
    ...     "tensor_values": {n: {"sizes": [{"as_int": 2}, {"as_int": 3}]} for n in ("x", "relu")}}
    >>> program = {"graph_module": {"graph": graph, "signature": {"input_specs": [
    ...     {"user_input": {"arg": {"as_tensor": {"name": "x"}}}}]}}}
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.pt2")
    >>> with zipfile.ZipFile(path, "w") as z:
    ...     z.writestr("tiny/models/model.json", json.dumps(program))
    >>> picture = first_picture(path)
    >>> [(n.name, n.op, n.shape) for n in picture.nodes]
    [('x', 'placeholder', '2x3'), ('relu', 'call_function', '2x3'), ('output', 'output', '(2x3)')]
    >>> picture.edges
    [('x', 'relu', 'self'), ('relu', 'output', 'output')]
"""

from __future__ import annotations

import json
import os
import re
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from fxstudio.core.graph.notation import format_shape
from fxstudio.core.layout.boxes import NODE_HEIGHT, Box
from fxstudio.core.layout.dot import dot_positions, layered
from fxstudio.core.layout.labels import ESTIMATE, TextMetrics
from fxstudio.core.process.archives import archive_problem

#: Graphs up to this many nodes are laid out by ``dot`` (a fraction of a second); bigger ones
#: by the layered layout, which takes a second at 20,000 nodes where ``dot`` takes minutes.
DOT_UP_TO = 600
#: The program's JSON in the archive (``models/model.json``; other names for other methods).
_PROGRAM = re.compile(r"(^|/)models/[^/]+\.json$")
#: What an input of the signature is drawn as: the get_attr node it becomes, named as the
#: unlifted graph names it (``conv1.weight`` -> ``conv1_weight``), and the key of its target.
_STATE = {
    "parameter": "parameter_name",
    "buffer": "buffer_name",
    "tensor_constant": "tensor_constant_name",
}


@dataclass(frozen=True)
class PreviewNode:
    name: str
    op: str  # placeholder, get_attr, call_function, output: as the canvas colours it
    target: str
    shape: str  # as the canvas writes it: ``1x64x112x112``, ``(2x8, 2x8)``, ``scalar``


@dataclass
class FirstPicture:
    """The archive's graph, laid out: nodes, edges (producer, user, the argument it feeds) and
    where each box goes."""

    title: str
    nodes: list[PreviewNode]
    edges: list[tuple[str, str, str]]
    boxes: dict[str, Box] = field(default_factory=dict)
    width: float = 0.0
    height: float = 0.0
    engine: str = ""
    seconds: float = 0.0


def read_archive(path: str) -> tuple[list[PreviewNode], list[tuple[str, str, str]]] | None:
    """The nodes and edges of the program in the ``.pt2`` at ``path``; ``None`` where it is
    not a zip holding a program's JSON this reader knows (the normal open says why)."""
    if archive_problem(path):  # a record that cannot be held: the open says so
        return None
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if _PROGRAM.search(n)]
            if not names:
                return None
            chosen = next((n for n in names if n.endswith("/model.json")), names[0])
            program = json.loads(archive.read(chosen))
        module = program["graph_module"]
        return _graph(module["graph"], module.get("signature") or {})
    except (OSError, zipfile.BadZipFile, ValueError, KeyError, TypeError, AttributeError):
        return None


def first_picture(path: str, metrics: TextMetrics = ESTIMATE) -> FirstPicture | None:
    """The ``.pt2`` at ``path`` read and laid out, boxes sized for ``metrics``; ``None``
    where it cannot be read (see :func:`read_archive`)."""
    t0 = time.perf_counter()
    read = read_archive(path)
    if read is None:
        return None
    nodes, edges = read
    picture = FirstPicture(os.path.basename(path), nodes, edges)
    keys = [n.name for n in nodes]
    sizes = {n.name: (metrics.box_width(n.name, n.target, n.shape), NODE_HEIGHT) for n in nodes}
    wires = [(a, b) for a, b, _ in edges if a != b]
    beside = _weights_beside(nodes, edges)
    picture.engine = "dot"
    try:
        if len(keys) > DOT_UP_TO:
            raise ValueError("too many nodes for dot")
        centres, picture.width, picture.height = dot_positions(keys, sizes, wires, beside)
    except Exception:  # graphviz missing or failing, or too big for it: layered
        picture.engine = "layered"
        centres, picture.width, picture.height = layered(keys, sizes, wires, beside)
    for name, (cx, cy) in centres.items():
        w, h = sizes[name]
        picture.boxes[name] = Box(cx - w / 2, cy - h / 2, w, h)
    picture.seconds = time.perf_counter() - t0
    return picture


def _weights_beside(nodes: list[PreviewNode], edges: list[tuple[str, str, str]]) -> dict[str, str]:
    """Each weight beside its user's first input that is not a weight (a convolution's
    weight beside the activation it convolves, one rank above the convolution), as the
    canvas draws it -- not all in one row on top, where every source would go."""
    weights = {n.name for n in nodes if n.op == "get_attr"}
    first_user: dict[str, str] = {}
    data_input: dict[str, str] = {}
    for a, b, _ in edges:
        if a in weights:
            first_user.setdefault(a, b)
        else:
            data_input.setdefault(b, a)
    beside = {w: data_input[u] for w, u in first_user.items() if u in data_input}
    by_module = {_module_of(n.target): beside[n.name] for n in nodes if n.name in beside}
    for n in nodes:  # one no node uses (a batch norm's count): beside its module's others
        if n.name in weights and n.name not in first_user:
            partner = by_module.get(_module_of(n.target))
            if partner is not None:
                beside[n.name] = partner
    return beside


def _module_of(target: str) -> str:
    return target.rpartition(".")[0]


def _graph(graph: dict, signature: dict) -> tuple[list[PreviewNode], list[tuple[str, str, str]]]:
    values = graph.get("tensor_values") or {}
    state = {}  # an input's argument name -> (the get_attr node's name, its target)
    for spec in signature.get("input_specs") or []:
        for kind, key in _STATE.items():
            if kind in spec:
                target = spec[kind][key]
                state[_names(spec[kind]["arg"])[0]] = (target.replace(".", "_"), target)
    nodes: list[PreviewNode] = []
    made: dict[str, str] = {}  # a value's name -> the node making it
    for value in graph["inputs"]:
        for name in _names(value):
            drawn, target = state.get(name, (name, name))
            op = "get_attr" if name in state else "placeholder"
            nodes.append(PreviewNode(drawn, op, target, _shape([name], values)))
            made[name] = drawn
    edges: list[tuple[str, str, str]] = []
    for node in graph["nodes"]:
        outputs = [n for out in node.get("outputs") or [] for n in _names(out)]
        name = node.get("name") or (outputs[0] if outputs else f"node_{len(nodes)}")
        nodes.append(
            PreviewNode(name, "call_function", _target(node["target"]), _shape(outputs, values))
        )
        for argument in node.get("inputs") or []:
            for used in _names(argument.get("arg")):
                if used in made:
                    edges.append((made[used], name, argument.get("name") or ""))
        several = any("as_tensors" in out for out in node.get("outputs") or [])
        for out in outputs:
            if several:  # each taken out by a getitem node, as the unlifted graph has it
                nodes.append(
                    PreviewNode(out, "call_function", "operator.getitem", _shape([out], values))
                )
                edges.append((name, out, "self"))
            made[out] = out if several else name
    returned = [n for value in graph.get("outputs") or [] for n in _names(value)]
    shapes = format_shape([_sizes(values.get(n)) for n in returned])
    nodes.append(PreviewNode("output", "output", "output", shapes))
    edges.extend((made[used], "output", "output") for used in returned if used in made)
    return nodes, edges


def _names(arg: Any) -> list[str]:
    """The values an argument names: tensors (one, a list, optional ones) and symbolic ints."""
    return list(_walk(arg))


def _walk(arg: Any) -> Iterator[str]:
    if isinstance(arg, dict):
        for key, value in arg.items():
            if key in ("name", "as_name") and isinstance(value, str):
                yield value
            elif isinstance(value, dict | list):
                yield from _walk(value)
    elif isinstance(arg, list):
        for item in arg:
            yield from _walk(item)


def _target(target: str) -> str:
    """As the canvas writes it: ``torch.ops.aten.relu.default``, ``operator.getitem``."""
    return "operator." + target[len("_operator.") :] if target.startswith("_operator.") else target


def _shape(outputs: list[str], values: dict) -> str:
    """As the canvas writes it (:func:`format_shape`): one output's shape, several's list."""
    shapes = [_sizes(values.get(o)) for o in outputs]
    return format_shape(shapes[0] if len(shapes) == 1 else shapes) if shapes else ""


def _sizes(value: dict | None) -> tuple[int, ...] | None:
    """A tensor value's sizes (a symbolic one as -1: written ``?``); None for no tensor."""
    if not value or "sizes" not in value:
        return None
    return tuple(d["as_int"] if "as_int" in d else -1 for d in value["sizes"])
