"""The models a user opened lately, newest first, kept in a small JSON file.

>>> import tempfile, pathlib
>>> recent = RecentModels(pathlib.Path(tempfile.mkdtemp()) / "recent.json")
>>> recent.add(OpenRequest("timm:convnext_atto")); recent.add(OpenRequest("examples:resnet"))
>>> [r.spec for r in recent.load()]
['examples:resnet', 'timm:convnext_atto']
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from fxstudio.core.graph.request import SESSION_SUFFIX, OpenRequest, frontend_named
from fxstudio.core.process.files import atomic_write

KEEP = 12


#: What is remembered of each request.
REMEMBERED = ("spec", "frontend", "inputs", "seed", "weights")


class RecentModels:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def load(self) -> list[OpenRequest]:
        """The recent requests; a missing or unreadable file is an empty list."""
        try:
            items = json.loads(self.path.read_text(encoding="utf-8"))
            return [
                OpenRequest(
                    str(i["spec"]),
                    frontend_named(i.get("frontend")),
                    tuple(i.get("inputs", ())),
                    int(i.get("seed", 0)),
                    weights=bool(i.get("weights", True)),
                )
                for i in items
                if isinstance(i, dict) and i.get("spec")
            ]
        except (OSError, ValueError, TypeError, KeyError):
            return []

    def existing(self) -> list[OpenRequest]:
        """The recent requests whose file (``FILE.py``, ``FILE.py:Name``, ``.pt2``, a
        session) is still there; package and example specs always are."""
        kept = []
        for r in self.load():
            path = _file_of(r.spec)
            if path is None or path.exists():
                kept.append(r)
        return kept

    def clear(self) -> None:
        """Forget them all (a file that cannot be removed stays: see :meth:`add`)."""
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass

    def add(self, request: OpenRequest) -> None:
        """Put ``request`` first (recovery files are not worth remembering).  A file that
        cannot be written is left as it was: remembering is a convenience."""
        if Path(request.spec).name.startswith("recovery-") and request.spec.endswith(
            SESSION_SUFFIX
        ):
            return
        items = [r for r in self.load() if r.spec != request.spec]
        items.insert(0, request)
        data = [{k: v for k, v in asdict(r).items() if k in REMEMBERED} for r in items[:KEEP]]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, json.dumps(data, indent=1))
        except Exception:  # noqa: BLE001, S110 - see above
            pass


def _file_of(spec: str) -> Path | None:
    """The file a model spec names, if it names one (``FILE.py`` or ``FILE.py:Name``, a
    ``.pt2``, a session)."""
    if spec.endswith((SESSION_SUFFIX, ".pt2", ".py")):
        return Path(spec)
    head, sep, _ = spec.rpartition(":")
    if sep and head.endswith(".py"):
        return Path(head)
    return None
