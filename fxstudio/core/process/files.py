"""Safe file writing: atomic replace, no silent overwrite, clear errors.

Every file fxstudio writes goes through :func:`atomic_write`: the bytes go to a temporary
file in the same folder, are flushed to disk, and replace the target with ``os.replace``.
A failed write (read-only folder, full disk) leaves any old file as it was.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from fxstudio.core.errors import UserError


class WriteError(UserError):
    """A file could not be written; nothing on disk changed."""


def check_writable(path: str | os.PathLike[str], force: bool) -> Path:
    """Refuse to overwrite an existing file unless ``force``; the folder must exist."""
    p = Path(path)
    if p.exists() and not force:
        raise WriteError(f"{p} already exists. Choose another name, or pass --force to replace it.")
    if p.exists() and p.is_dir():
        raise WriteError(f"{p} is a folder; give a file name.")
    if not p.parent.exists():
        raise WriteError(f"The folder {p.parent} does not exist; create it first.")
    return p


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` atomically.

    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out.txt"
    >>> with atomic_path(target) as tmp:
    ...     _ = tmp.write_text("hello")
    >>> target.read_text()
    'hello'
    """
    target = Path(path)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise WriteError(_explain(target, exc)) from exc
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        if target.exists():  # keep the permissions a user gave the old file
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise WriteError(_explain(target, exc)) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically (text is written as UTF-8)."""
    with atomic_path(path) as tmp:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)


def write_json(
    path: str | os.PathLike[str],
    data: object,
    indent: int = 2,
    default: Callable[[Any], Any] | None = None,
) -> None:
    """``data`` as JSON (indented, a newline at the end), written atomically: every result's
    ``write(path)``."""
    atomic_write(path, json.dumps(data, indent=indent, default=default) + "\n")


def _explain(target: Path, exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    return (
        f"Could not write {target}: {reason}. Nothing was changed on disk; choose a folder you "
        "can write to, or free some space."
    )
