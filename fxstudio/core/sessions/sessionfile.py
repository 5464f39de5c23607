"""Session files (``.fxstudio``): what the user opened and what they saw, as JSON.

A session records the model spec, frontend, inputs, seed and leaf modules, the generated
code of the graph (to notice a model file that changed since), the edit history, and the
view state (node positions, collapsed groups, pattern boxes).  Reopening captures the model
again, replays the edits and restores the view.  Model file paths are stored relative to
the session file, so a folder with both can be moved.

Reading one back (capturing the model again, replaying its edits) is
:func:`fxstudio.core.sessions.documents.open_session`'s, with :mod:`fxstudio.core.sessions.replay`.

Example:
    >>> import tempfile, pathlib
    >>> from fxstudio.core.model.opening import open_model
    >>> doc = open_model("examples:simple")
    >>> doc.set_positions({"fc1": (10.0, 20.0)})
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.fxstudio"
    >>> save_session(doc, path)
    >>> data = read_session(path)
    >>> data.positions, data.request.spec, data.request.frontend
    ({'fc1': (10.0, 20.0)}, 'examples:simple', 'fx')
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fxstudio.core.edits.records import encode_record
from fxstudio.core.errors import LoadError
from fxstudio.core.graph.document import GraphDocument, PatternBox
from fxstudio.core.graph.request import OpenRequest, frontend_named
from fxstudio.core.model.modelspec import parse_spec
from fxstudio.core.process.files import atomic_write

FORMAT = "fxstudio-session"
VERSION = 1


@dataclass
class SessionData:
    """A session file read back: the model's request, and what only the session holds."""

    request: OpenRequest  # the model (its frontend the one it was captured with)
    code: str = ""
    edits: list[dict[str, Any]] = field(default_factory=list)
    positions: dict[str, tuple[float, float]] = field(default_factory=dict)
    collapsed: list[str] = field(default_factory=list)
    pattern_boxes: list[PatternBox] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def session_json(doc: GraphDocument, path: str | os.PathLike[str], **extra: Any) -> str:
    """The session file text for ``doc`` saved at ``path``."""
    folder = Path(path).resolve().parent
    req = doc.request
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "model": {
            "spec": _portable_spec(req.spec, folder),
            "frontend": req.frontend,
            "inputs": list(req.inputs),
            "seed": req.seed,
            "leaf_modules": list(req.leaf_modules),
            "train": req.train,
            "weights": req.weights,
        },
        "graph": {"code": doc.code(), "nodes": len(doc)},
        "edits": [encode_record(r) for r in doc.history],  # replayed on opening
        "view": {
            "positions": {k: list(v) for k, v in doc.positions.items()},
            "collapsed": sorted(doc.collapsed),
            "pattern_boxes": [{"name": b.name, "nodes": list(b.nodes)} for b in doc.pattern_boxes],
        },
    }
    data.update(extra)
    return json.dumps(data, indent=2) + "\n"


def save_session(doc: GraphDocument, path: str | os.PathLike[str], **extra: Any) -> None:
    """Write the session atomically (the caller has asked before replacing a file)."""
    atomic_write(path, session_json(doc, path, **extra))


def read_session(path: str | os.PathLike[str]) -> SessionData:
    """Parse a session file; a file that is not one gets a :class:`LoadError`."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise LoadError(f"No such file: {p}.") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LoadError(f"{p} is not a readable fxstudio session ({exc}).") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise LoadError(f"{p} is not an fxstudio session file.")
    if int(data.get("version", 0)) > VERSION:
        raise LoadError(
            f"{p} was written by a newer fxstudio (session version {data['version']}); "
            "update fxstudio to open it."
        )
    try:
        model, view = data["model"], data.get("view", {})
        request = OpenRequest(
            _resolve_spec(model["spec"], p.resolve().parent),
            frontend_named(model.get("frontend"), "fx"),
            tuple(model.get("inputs", ())),
            int(model.get("seed", 0)),
            tuple(model.get("leaf_modules", ())),
            bool(model.get("train", False)),
            bool(model.get("weights", True)),
        )
        return SessionData(
            request=request,
            code=data.get("graph", {}).get("code", ""),
            edits=list(data.get("edits", [])),
            positions={k: (float(v[0]), float(v[1])) for k, v in view.get("positions", {}).items()},
            collapsed=list(view.get("collapsed", [])),
            pattern_boxes=[
                PatternBox(b["name"], tuple(b["nodes"])) for b in view.get("pattern_boxes", [])
            ],
            extra={k: v for k, v in data.items() if k not in _KNOWN},
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise LoadError(
            f"{p} is a damaged fxstudio session ({type(exc).__name__}: {exc})."
        ) from exc


_KNOWN = {"format", "version", "model", "graph", "edits", "view"}


def _portable_spec(spec: str, folder: Path) -> str:
    if not spec:
        return spec
    ms = parse_spec(spec)
    if ms.kind not in ("file", "pt2"):
        return spec
    location = Path(ms.location).expanduser().resolve()
    try:
        rel = os.path.relpath(location, folder)
    except ValueError:  # another drive on Windows
        rel = str(location)
    return f"{rel}:{ms.name}" if ms.name else rel


def _resolve_spec(spec: str, folder: Path) -> str:
    ms = parse_spec(spec)
    if ms.kind not in ("file", "pt2") or os.path.isabs(ms.location):
        return spec
    location = str((folder / ms.location).resolve())
    return f"{location}:{ms.name}" if ms.name else location
