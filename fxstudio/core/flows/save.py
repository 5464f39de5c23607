"""The save flow's front for the window: *File ▸ Save* (a ``.fxstudio`` session:
:func:`save_session`), *File ▸ Export* (:func:`~fxstudio.core.flows.export`, with the formats'
names in :data:`DESCRIPTIONS` and the weights file beside a ``.py``: :func:`weights_path`),
and what keeps a crash from losing work: autosave's recovery files (whose owner is known
alive by :func:`pid_alive`) and the crash log (:class:`CrashLog`, :class:`LastCrash`).
``fxstudio export`` (which also reads the format from the file's name: :func:`format_for`, and
runs the saved ``.py`` on its own: :func:`verify_standalone`) and ``fxstudio edit`` /
``rewrite`` (``--session``) save through the same functions.

Called by ``fxstudio.qt.window.saving`` (Save / Export), ``autosave`` (recovery files),
``session`` (DocumentSession's save), ``messages`` and ``main_window`` (offering recovery
after a crash) and ``fxstudio.qt.app`` (the crash log).

Exposes (re-exported, nothing worked out here): :func:`save_session`, :data:`DESCRIPTIONS`,
:func:`weights_path`, :func:`format_for`, :func:`verify_standalone`, :func:`pid_alive`,
:class:`CrashLog`, :class:`LastCrash`.

Example:
    >>> DESCRIPTIONS["py"]
    'standalone Python module (.py + .safetensors)'
    >>> weights_path("net.py").name
    'net.safetensors'
"""

from __future__ import annotations

from fxstudio.core.process.crashlog import CrashLog, LastCrash, pid_alive
from fxstudio.core.saving.export import DESCRIPTIONS, format_for, weights_path
from fxstudio.core.saving.verify import verify_standalone
from fxstudio.core.sessions.sessionfile import save_session

__all__ = [
    "DESCRIPTIONS",
    "CrashLog",
    "LastCrash",
    "format_for",
    "pid_alive",
    "save_session",
    "verify_standalone",
    "weights_path",
]
