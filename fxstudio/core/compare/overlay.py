"""Per-node data -- a number for each of some nodes (a time, a share, FLOPs, a value
difference) -- written in the formats other viewers read, and read back from them.

- **Model Explorer node data** (what its *Node data* pane loads):
  ``{graph_id: {"results": {node_id: {"value": v}}, "gradient": [...]}}``; the node ids are
  FX node names and the graph id ``"graph"``, which is what Model Explorer's PyTorch adapter
  gives an exported program's graph.
- **Netron metrics** (an attachment its sidebar shows):
  ``{"signature": "netron:attachment", "metrics": [{"kind": "node", "target": NODE,
  "name": WHAT, "value": V, "type": "float32"}]}``.
- **CSV**: a header naming a ``node`` (or ``name``) column and a value column, one row a node.
- **JSON of our own**: ``{"nodes": [{"name": ..., "value": ...}]}`` or ``{name: value}``.

Example:
    >>> o = Overlay("time", {"conv": 2.0, "relu": 0.5}, "ms")
    >>> data = to_model_explorer(o)
    >>> data["graph"]["results"]["conv"], read_overlay_data(data).values == o.values
    ({'value': 2.0}, True)
    >>> read_overlay_data(to_netron(o)).values == o.values
    True
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

from fxstudio.core.errors import UserError
from fxstudio.core.graph.nodedata import Overlay
from fxstudio.core.process.files import write_json

#: The graph id Model Explorer's PyTorch adapter gives the graph of an exported program.
GRAPH_ID = "graph"
NETRON_SIGNATURE = "netron:attachment"
#: Low values green, high values red (Model Explorer interpolates between the stops).
GRADIENT = [
    {"stop": 0, "bgColor": "#2e7d32"},
    {"stop": 0.5, "bgColor": "#f9a825"},
    {"stop": 1, "bgColor": "#c62828"},
]


class OverlayError(UserError):
    """A per-node data file could not be read; nothing was changed."""


def to_model_explorer(overlay: Overlay, graph_id: str = GRAPH_ID) -> dict[str, Any]:
    results = {
        name: {"value": value} for name, value in overlay.values.items() if math.isfinite(value)
    }
    return {graph_id: {"results": results, "gradient": GRADIENT}}


def write_model_explorer(overlay: Overlay, path: str | os.PathLike[str]) -> None:
    """Write ``overlay`` as Model Explorer node data (atomically: a failure leaves the file
    as it was)."""
    write_json(path, to_model_explorer(overlay), indent=2)


def to_netron(overlay: Overlay) -> dict[str, Any]:
    metrics = [
        {"kind": "node", "target": name, "name": overlay.what, "value": value, "type": "float32"}
        for name, value in overlay.values.items()
        if math.isfinite(value)
    ]
    return {"signature": NETRON_SIGNATURE, "metrics": metrics}


def write_netron(overlay: Overlay, path: str | os.PathLike[str]) -> None:
    """Write ``overlay`` as Netron metrics (atomically)."""
    write_json(path, to_netron(overlay), indent=2)


def read_overlay(path: str | os.PathLike[str]) -> Overlay:
    """A per-node data file: Model Explorer node data, our JSON or a CSV."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise OverlayError(f"Cannot read {p}: {exc.strerror or exc}.") from exc
    except UnicodeDecodeError as exc:
        raise OverlayError(f"{p} is not a text file (per-node data is JSON or CSV).") from exc
    if p.suffix.lower() == ".csv":
        return _from_csv(text, p.stem, p)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OverlayError(f"{p} is not valid JSON: {exc.msg} at line {exc.lineno}.") from exc
    return read_overlay_data(data, p.stem, p)


def read_overlay_data(data: Any, what: str = "value", where: Any = "the data") -> Overlay:
    """Per-node data already parsed from JSON (see the module docstring for the formats)."""
    if isinstance(data, dict) and data.get("signature") == NETRON_SIGNATURE:
        rows = [m for m in data.get("metrics") or [] if isinstance(m, dict)]
        rows = [m for m in rows if m.get("kind", "node") == "node"]
        named = next((str(m["name"]) for m in rows if isinstance(m.get("name"), str)), what)
        return _overlay(named, [(m.get("target"), m.get("value")) for m in rows], where)
    if isinstance(data, dict) and isinstance(data.get("nodes"), list):
        pairs = [
            (row.get("name"), row.get("value")) for row in data["nodes"] if isinstance(row, dict)
        ]
        return _overlay(what, pairs, where)
    if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
        graph = data.get(GRAPH_ID) or next(iter(data.values()))
        results = graph.get("results")
        if isinstance(results, dict):
            pairs = [
                (name, r.get("value") if isinstance(r, dict) else r) for name, r in results.items()
            ]
            return _overlay(what, pairs, where)
    if isinstance(data, dict) and data:
        return _overlay(what, list(data.items()), where)
    raise OverlayError(
        f"{where} holds no per-node data: expected Model Explorer node data "
        '({"graph": {"results": {NODE: {"value": V}}}}), {"nodes": [{"name", "value"}]} '
        "or {NODE: VALUE}."
    )


def _from_csv(text: str, what: str, where: Any) -> Overlay:
    rows = list(csv.DictReader(io.StringIO(text)))
    header = [h.strip() for h in (rows[0].keys() if rows else [])]
    key = next((h for h in header if h.lower() in ("node", "name")), None)
    others = [h for h in header if h != key]
    if key is None or not others:
        raise OverlayError(
            f"{where}: the CSV needs a header with a 'node' (or 'name') column and a value column."
        )
    column = next((h for h in others if h.lower() == "value"), others[0])
    return _overlay(column, [(r.get(key), r.get(column)) for r in rows], where)


def _overlay(what: str, pairs: list[tuple[Any, Any]], where: Any) -> Overlay:
    values: dict[str, float] = {}
    for name, value in pairs:
        if not isinstance(name, str) or not name:
            continue
        try:
            values[name] = float(value)
        except (TypeError, ValueError):
            raise OverlayError(
                f"{where}: the value of node {name!r} is {value!r}, not a number."
            ) from None
    if not values:
        raise OverlayError(f"{where} names no nodes with a value.")
    return Overlay(what, values)
