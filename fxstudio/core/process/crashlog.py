"""The crash log: what a crashed fxstudio printed, kept for the next start to point at.

Each running window writes ``crash-<pid>.log`` in one folder (beside the recovery folder):
a line saying when it started, then -- only if the process dies of a fatal signal (a
segmentation fault, an abort) -- every thread's Python stack, written by :mod:`faulthandler`.
A clean exit deletes the file.  So a ``crash-<pid>.log`` whose process is gone is an
unclean end (a crash, or a kill that left no trace); the next start renames it
``crashed-<time>.log``, keeps the last :data:`KEEP` of them, and says where it is.

Example (what the next start finds after a run that was killed)::

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "crash-999999999.log").write_text("fxstudio started ...\\n")
    >>> crash = CrashLog(folder).collect()
    >>> crash.traced, crash.path.name.startswith("crashed-")
    (False, True)
    >>> CrashLog(folder).collect() is None  # told once
    True
"""

from __future__ import annotations

import faulthandler
import os
import time
from pathlib import Path
from typing import IO

__all__ = ["KEEP", "CrashLog", "LastCrash", "pid_alive"]

KEEP = 5  # crashed-*.log files kept


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` runs now (this one does)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


class LastCrash:
    """An unclean end found at start: ``path`` (the kept log) and whether it holds a fatal
    error's stacks (``traced``; False: the process was killed, or the machine went down)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        text = path.read_text(errors="replace")
        self.traced = "Fatal Python error" in text
        self.summary = next(
            (line.strip() for line in text.splitlines() if line.startswith("Fatal Python error")),
            "it ended without a word (killed, or the machine stopped)",
        )

    def describe(self) -> str:
        return (
            f"fxstudio closed unexpectedly last time ({self.summary}). What it left is in "
            f"{self.path}; please attach it to a bug report."
        )


class CrashLog:
    """The crash log of this process, in ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / f"crash-{os.getpid()}.log"
        self._file: IO[str] | None = None

    def start(self) -> LastCrash | None:
        """Keep what an earlier run left (the newest unclean end, if any: returned), then
        write this run's log and have :mod:`faulthandler` write into it on a fatal error.
        A folder that cannot be written is no reason not to start: no log then."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            found = self.collect()
            self._file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - open until end()
            self._file.write(f"fxstudio started {time.ctime()} (pid {os.getpid()})\n")
            self._file.flush()
            faulthandler.enable(self._file, all_threads=True)
        except OSError:
            return None
        return found

    def end(self) -> None:
        """A clean exit: no crash to tell of."""
        if self._file is None:
            return
        faulthandler.disable()
        self._file.close()
        self._file = None
        self.path.unlink(missing_ok=True)

    def collect(self) -> LastCrash | None:
        """Keep the logs of runs that ended uncleanly as ``crashed-*.log`` (the last
        :data:`KEEP`); the newest of those just found, if any."""
        newest: Path | None = None
        for path in sorted(self.folder.glob("crash-*.log"), key=lambda p: p.stat().st_mtime):
            try:
                pid = int(path.stem.split("-", 1)[1])
            except ValueError:
                continue
            if pid_alive(pid):
                continue  # another window, running now
            stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(path.stat().st_mtime))
            kept = path.with_name(f"crashed-{stamp}-{pid}.log")
            path.rename(kept)
            newest = kept
        kept_logs = sorted(self.folder.glob("crashed-*.log"), key=lambda p: p.stat().st_mtime)
        for old in kept_logs[:-KEEP]:
            old.unlink(missing_ok=True)
        return LastCrash(newest) if newest is not None else None
