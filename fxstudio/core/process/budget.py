"""How much memory fxstudio may still take, and model code held to it.

:func:`available_memory` is the least of what the machine has left (Linux's
``MemAvailable``), what the process's control group still allows (a container's or a
systemd unit's limit, cgroup v1 or v2) and what its address-space limit (``ulimit -v``)
leaves -- the kernel's out-of-memory killer acts on the first two, long before the
machine's memory is gone.

:func:`bounded` holds model code to it: while the code runs, the process's address-space
limit (``RLIMIT_AS``) is set to what it has mapped now plus nine tenths of what is
available, so an allocation past that fails at once -- torch raises its ``can't allocate
memory`` error, which :mod:`fxstudio.core.process.guard` words -- instead of the kernel
killing the window with the user's work.  The kernel grants memory lazily: without the
limit a 40 GiB run on a 24 GiB machine is not refused; it is killed halfway, with the
editor.  The limit is the process's (there is no other), set by the outermost
:func:`bounded` and restored when it ends; on a machine with a CUDA device, CUDA is
started first (its start maps a large address range that the limit would refuse).

Example:
    >>> with bounded():
    ...     inside = current_bound()
    >>> inside is None or inside > 0, current_bound() is None
    (True, True)
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

try:
    import resource
except ImportError:  # Windows: no address-space limit to set
    resource = None  # type: ignore[assignment]

#: The share of what is available that a bounded run may take (the rest is left to the
#: window, the other threads and the machine's other programs).
SHARE = 0.9
#: A control group's "no limit" (cgroup v1 writes the largest page-aligned 64-bit number).
_NO_LIMIT = 2**62

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, int] | None = None  # the limit before the outermost bounded()
_bound: int | None = None


def format_bytes(n: float) -> str:
    """``3.6 TiB``.

    >>> format_bytes(4e12), format_bytes(512), format_bytes(3 * 2**20)
    ('3.6 TiB', '512 B', '3.0 MiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def available_memory() -> int | None:
    """Bytes of memory this process can still take, if known: the least of the machine's
    ``MemAvailable``, its control group's limit less its use, and its address-space limit
    less what it has mapped."""
    known = [n for n in (_machine(), _cgroup(), _address_space()) if n is not None]
    return max(0, min(known)) if known else None


def _machine() -> int | None:
    meminfo = _fields("/proc/meminfo")
    if "MemAvailable" in meminfo:
        return meminfo["MemAvailable"] * 1024
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup() -> int | None:
    """What the process's memory control group still allows: its limit less its use, the
    page cache it could drop counted as free (cgroup v2's ``memory.max`` of its group and
    the groups above it; v1's hierarchical limit); None without a limit."""
    try:
        with open("/proc/self/cgroup", encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # v2: one hierarchy, each group above may limit it too
            left = [_v2_left(os.path.join("/sys/fs/cgroup", *parts)) for parts in _ups(path)]
            known = [n for n in left if n is not None]
            if known:
                return min(known)
        elif "memory" in controllers.split(","):
            base = os.path.join("/sys/fs/cgroup/memory", path.lstrip("/"))
            stat = _fields(os.path.join(base, "memory.stat"))
            limit = stat.get("hierarchical_memory_limit", _NO_LIMIT)
            used = _number(os.path.join(base, "memory.usage_in_bytes"))
            if limit < _NO_LIMIT and used is not None:
                return limit - used + stat.get("total_inactive_file", 0)
    return None


def _ups(path: str) -> list[list[str]]:
    """A cgroup's path and those of the groups above it (the root left out)."""
    parts = [p for p in path.split("/") if p]
    return [parts[:n] for n in range(len(parts), 0, -1)]


def _v2_left(base: str) -> int | None:
    limit = _number(os.path.join(base, "memory.max"))
    used = _number(os.path.join(base, "memory.current"))
    if limit is None or used is None or limit >= _NO_LIMIT:
        return None
    return limit - used + _fields(os.path.join(base, "memory.stat")).get("inactive_file", 0)


def _address_space() -> int | None:
    """What ``ulimit -v`` leaves: the soft address-space limit less what is mapped now --
    when someone other than :func:`bounded` set it."""
    if resource is None or _bound is not None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    mapped = mapped_bytes()
    if soft == resource.RLIM_INFINITY or mapped is None:
        return None
    return soft - mapped


def mapped_bytes() -> int | None:
    """The process's address space now (``VmSize``), in bytes, if known."""
    status = _fields("/proc/self/status")
    return status["VmSize"] * 1024 if "VmSize" in status else None


def resident_bytes() -> int | None:
    """The process's resident memory now (``VmRSS``), in bytes, if known."""
    status = _fields("/proc/self/status")
    return status["VmRSS"] * 1024 if "VmRSS" in status else None


def current_bound() -> int | None:
    """The address-space limit :func:`bounded` has set, in bytes, or None outside one."""
    return _bound


@contextlib.contextmanager
def bounded() -> Iterator[None]:
    """Model code runs inside: an allocation that would take more than :data:`SHARE` of
    what is available when the outermost one starts fails (torch: ``RuntimeError: ...
    can't allocate memory``; Python: ``MemoryError``).  Nested: the outermost sets the
    limit, and puts back what it was."""
    global _depth
    with _lock:
        _depth += 1
        if _depth == 1:
            _set()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _restore()


def _set() -> None:
    global _saved, _bound
    if resource is None or not hasattr(resource, "RLIMIT_AS"):
        return
    _start_cuda()
    avail, mapped = available_memory(), mapped_bytes()
    if avail is None or mapped is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    bound = mapped + int(avail * SHARE)
    if hard != resource.RLIM_INFINITY:
        bound = min(bound, hard)
    if soft != resource.RLIM_INFINITY and soft <= bound:
        return  # already held tighter (ulimit -v)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (bound, hard))
    except (ValueError, OSError):
        return
    _saved, _bound = (soft, hard), bound


def _restore() -> None:
    global _saved, _bound
    if _saved is not None and resource is not None:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_AS, _saved)
    _saved, _bound = None, None


def _start_cuda() -> None:
    """Start CUDA before the limit is set, where there is a CUDA device: its start reserves
    address space by the hundreds of GiB, which the limit would refuse."""
    import torch

    if torch.cuda.is_available() and not torch.cuda.is_initialized():
        with contextlib.suppress(Exception):
            torch.cuda.init()


def _fields(path: str) -> dict[str, int]:
    """``Name: 123 kB`` lines as ``{"Name": 123}`` (the number, the unit dropped)."""
    out: dict[str, int] = {}
    try:
        with open(path, encoding="ascii") as f:
            for line in f:
                key, _, rest = line.replace(":", " ", 1).partition(" ")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    out[key] = int(parts[0])
    except OSError:
        pass
    return out


def _number(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as f:
            text = f.read().strip()
    except OSError:
        return None
    return _NO_LIMIT if text == "max" else int(text) if text.isdigit() else None
