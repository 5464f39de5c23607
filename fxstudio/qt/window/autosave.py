"""Autosave to a recovery file, and find the recovery files of sessions that crashed.

While a document has changes no session file holds, the window writes it every N seconds
to ``recovery-<pid>.fxstudio`` in the recovery folder (atomically).  A clean exit deletes
the file; a file whose process is gone is what a crash left behind, and the next start
offers to restore it.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QStandardPaths, QTimer, Signal

from fxstudio.core.errors import UserError
from fxstudio.core.flows.save import pid_alive, save_session
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.request import SESSION_SUFFIX

log = logging.getLogger("fxstudio.autosave")

DEFAULT_INTERVAL_S = 60.0
#: While a big graph's code is being generated, autosave waits this long, this many times.
WAIT_STEP_MS = 250
WAIT_FOR_CODE = 20


def recovery_dir() -> Path:
    """``$FXSTUDIO_RECOVERY_DIR``, else the platform's app-data folder + ``recovery``."""
    env = os.environ.get("FXSTUDIO_RECOVERY_DIR")
    if env:
        return Path(env)
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".fxstudio") / "recovery"


def find_recoveries(directory: Path | None = None) -> list[Path]:
    """Recovery files left by fxstudio processes that are no longer running, newest first."""
    folder = directory or recovery_dir()
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob(f"recovery-*{SESSION_SUFFIX}"):
        try:
            pid = int(path.stem.split("-", 1)[1])
        except ValueError:
            continue
        if not pid_alive(pid):
            found.append(path)
    return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)


class Autosaver(QObject):
    """Writes the session's document to the recovery file while it has changes the file does
    not hold yet (``session.autosave_pending``)."""

    saved = Signal(str)
    failed = Signal(str)

    def __init__(
        self, session: Any, directory: Path, interval_s: float, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.directory = directory
        self.path = directory / f"recovery-{os.getpid()}{SESSION_SUFFIX}"
        self._waited = 0
        self.timer = QTimer(self)
        self.timer.timeout.connect(self.save_now)
        if interval_s > 0:
            self.timer.start(int(interval_s * 1000))

    def save_now(self) -> bool:
        doc: GraphDocument | None = self.session.document
        if doc is None or not self.session.autosave_pending:
            return False
        if not doc.code_ready() and self._waited < WAIT_FOR_CODE:
            # A big graph's code is being generated in a worker: save it in a moment rather
            # than generate it again here, on the GUI thread.
            self._waited += 1
            QTimer.singleShot(WAIT_STEP_MS, self.save_now)
            return False
        self._waited = 0
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            save_session(doc, self.path, recovery={"pid": os.getpid(), "saved_at": time.time()})
        except (UserError, OSError) as exc:
            log.warning("autosave failed: %s", exc)
            self.failed.emit(str(exc))
            return False
        self.session.autosave_pending = False
        log.info("autosaved to %s", self.path)
        self.saved.emit(str(self.path))
        return True

    def discard(self) -> None:
        """Remove this process's recovery file (a clean exit, or the session was saved)."""
        self.path.unlink(missing_ok=True)
