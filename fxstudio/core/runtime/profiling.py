"""Profiling as the Run dock and ``fxstudio profile`` run it: one function, one result.

:func:`profile` times the document's model (:func:`~fxstudio.core.runtime.ondevice.profile_whole`),
or -- given a baseline -- both interleaved (:func:`~fxstudio.core.runtime.speedup.compare`),
and returns a :class:`Profile` whose :meth:`~Profile.to_json` is what either saves: the JSON
a user exports from the window is the one ``fxstudio profile --json`` writes for the same
model and options.

Example:
    >>> from fxstudio.core.sessions.documents import open_document
    >>> doc = open_document("examples:simple")
    >>> result = profile(doc, ProfileOptions(min_time=0.05))
    >>> sorted(result.to_json())[:4], result.ok
    (['check', 'env', 'notes', 'options'], True)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.process.files import atomic_path, atomic_write, write_json
from fxstudio.core.results import Json
from fxstudio.core.runtime.ondevice import RunError, WholeModel, profile_whole
from fxstudio.core.runtime.speedup import Comparison, compare

__all__ = ["Profile", "ProfileOptions", "profile"]


@dataclass(frozen=True)
class ProfileOptions:
    """How to run: the device, CPU threads, dtype, batch, seconds of timing, torch.compile,
    a cold L2, and whether to profile node by node (with how many calls)."""

    device: str = "cpu"
    threads: int | None = None
    dtype: str | None = None
    min_time: float = 1.0  # seconds of timed blocks (a comparison: for each side, doubled)
    per_node: bool = False
    calls: int | None = None  # profiled calls for per_node (None: about half a second)
    compile: str | None = None  # a torch.compile backend
    cold_l2: bool = False
    batch: int | None = None
    replicates: int = 9  # interleaved replicates a side, against a baseline

    def to_json(self) -> Json:
        return asdict(self)


@dataclass
class Profile:
    """What a run measured: the model's :class:`WholeModel` and, against a baseline, the
    :class:`Comparison` (whose ``before`` is the baseline's own run)."""

    after: WholeModel
    options: ProfileOptions
    comparison: Comparison | None = None

    @property
    def ok(self) -> bool:
        """The outputs were finite (both sides') and no recompilation spoiled the timing."""
        ok = self.after.check.ok and self.after.valid
        if self.comparison is not None:
            ok = ok and self.comparison.before.check.ok
        return ok

    def to_json(self) -> Json:
        data = {**self.after.to_json(), "options": self.options.to_json()}
        if self.comparison is not None:
            data["compare"] = self.comparison.to_json()
            data["against"] = self.comparison.before.to_json()
        return data

    def describe(self) -> str:
        text = self.after.describe()
        if self.comparison is not None:
            text += "\n\n" + self.comparison.describe()
        return text

    def write(self, path: str | os.PathLike[str]) -> None:
        """The result as JSON, written atomically."""
        write_json(path, self.to_json(), indent=2, default=str)

    def write_csv(self, path: str | os.PathLike[str]) -> None:
        """The per-node table as CSV (a per-node run only)."""
        atomic_write(path, self._nodes().to_csv())

    def node_times(self) -> Any:
        """Each node's time (ms) as per-node data (a per-node run only): an
        :class:`~fxstudio.core.compare.overlay.Overlay`."""
        from fxstudio.core.graph.nodedata import Overlay

        return Overlay("time", {n.name: n.time_s * 1e3 for n in self._nodes().nodes}, "ms")

    def write_trace(self, path: str | os.PathLike[str]) -> None:
        """The profiled calls as a Chrome/Perfetto trace (a per-node run only)."""
        nodes = self._nodes()
        with atomic_path(path) as tmp:
            nodes.write_trace(tmp)

    def _nodes(self) -> Any:
        if self.after.nodes is None:
            raise RunError(
                "The trace and the node table come from a per-node run: profile per node "
                "(--per-node, or tick 'Per node') and run again."
            )
        return self.after.nodes


def profile(
    doc: GraphDocument,
    options: ProfileOptions,
    baseline: GraphDocument | None = None,
    stage: Callable[[str], None] | None = None,
) -> Profile:
    """Run and time ``doc`` as ``options`` say; against ``baseline``, both interleaved.
    ``stage(text)`` hears what runs now (a progress line)."""
    o = options
    for d in (doc, baseline):
        if d is not None:
            d.require_weights("Running and timing the model")
    if baseline is None:
        after = profile_whole(
            doc,
            o.device,
            o.threads,
            o.dtype,
            o.min_time,
            o.per_node,
            o.calls,
            o.compile,
            o.cold_l2,
            o.batch,
            stage,
        )
        return Profile(after, o)
    if o.compile or o.cold_l2:
        raise RunError("A comparison times eager models with a warm L2 (no compile, no cold L2).")
    result = compare(
        baseline,
        doc,
        o.device,
        o.threads,
        o.dtype,
        2 * o.min_time,
        o.replicates,
        o.per_node,
        o.batch,
        stage,
    )
    return Profile(result.after, o, result)
