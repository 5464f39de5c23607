"""A rewrite at scale, quiet and under load: 3,330 matches (one per block) on the 20,000-node
nested synthetic graph, through the very paths the command line and the window run --
``rewrite_flow`` on the document (``fxstudio rewrite``), and on a detached copy in a worker,
its shapes propagated, its views made and adopted as one edit (the Patterns dock; and so
again with the matches found first, untimed, as the dock's *Find* before *Replace*) -- each
split into its parts: match, replace (the edit's steps), validate, recompile (left to the
module's first call since an edit no longer compiles), shapes, and the numerical check (the
model before and after, run for values).  Each path twice: the first rewrite on the document
(the model before it run on the check's 3 inputs, then the model after it) and a rewrite after
a rewrite (A, then its way back B, then A...: the last check's outputs are the model before,
so only the model after runs).  Then one edit of one node
on the same graph, as the window makes it (deferred): until it is applied and shown, and
until its code, rows and shapes have caught up (:mod:`fxstudio.core.edits.catchup`) -- the
first edit after the open too.

Baselines, measured in the same run: ``torch.fx.replace_pattern`` of the same pattern on a
fresh trace (no checks, no shapes), one run of the model, and the model's run with torch's
threads as they are against the bookkeeping count (one, for ops this small) while the load
runs -- the oversubscription the check and the shape runs avoid.

The load: two processes busy-looping, one a core of this 2-core machine, started before and
stopped after each loaded measurement.  Figures are medians.

    python tests/bench/bench_rewrite_scale.py   # or: python tests/bench/run.py rewrite_scale
"""

from __future__ import annotations

import contextlib
import functools
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SPEC = f"{ROOT / 'tests' / 'bench' / 'synthetic.py'}:nested_20000"
PATTERN = "def pattern(x):\n    return x * 0.1\n"
REPLACEMENT = "def replacement(x):\n    return torch.mul(x, 0.1)\n"
#: the way back, for one rewrite after another (A, B, A, ...)
BACK = (
    "def pattern(x):\n    return torch.mul(x, 0.1)\n",
    "def replacement(x):\n    return x * 0.1\n",
)
REPEATS = 3


def _spec(back: bool = False) -> Any:
    from fxstudio.core.patterns.apply import RewriteSpec

    pattern, replacement = BACK if back else (PATTERN, REPLACEMENT)
    return RewriteSpec(pattern_code=pattern, replacement_code=replacement)


@contextlib.contextmanager
def load(on: bool) -> Iterator[None]:
    """Two busy processes for the while (none when ``on`` is False)."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 if on else 0)
    ]
    try:
        time.sleep(0.5 if on else 0)
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


class Parts:
    """Seconds spent in the named functions of fxstudio's modules while installed."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._undo: list[tuple[Any, str, Any]] = []

    def wrap(self, module: Any, name: str, label: str) -> None:
        fn = getattr(module, name)

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - t0

        self._undo.append((module, name, fn))
        setattr(module, name, timed)

    def remove(self) -> None:
        for module, name, fn in reversed(self._undo):
            setattr(module, name, fn)


def _parts() -> Parts:
    from fxstudio.core.edits import engine, snapshots
    from fxstudio.core.patterns import apply

    parts = Parts()
    parts.wrap(apply, "reference", "before")
    parts.wrap(apply, "check", "check")
    parts.wrap(engine, "validate", "validate")  # lint, targets, calls on fake tensors (+compile)
    parts.wrap(engine, "_recompile", "recompile")
    parts.wrap(engine, "recheck_shapes", "shapes")
    parts.wrap(snapshots, "recheck_shapes", "shapes")
    parts.wrap(snapshots, "detached", "copy")
    parts.wrap(snapshots, "views", "views")
    return parts


def _median(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r.get(k, 0.0) for r in rows), 3) for k in rows[0]}


def rewrite_cli(doc: Any, after: bool = False, keep: bool = False) -> dict[str, float]:
    """``fxstudio rewrite``'s path: ``rewrite_flow`` on the document itself.  The first
    rewrite (the model run before it: nothing kept) is undone after unless ``keep``;
    ``after``: one rewrite after another (A, B, A, ...: the last check's outputs are the
    model before), kept."""
    from fxstudio.core.patterns.apply import RewriteRequest, rewrite_flow

    fresh = not doc.kept_values()
    parts = _parts()
    try:
        t0 = time.perf_counter()
        report = rewrite_flow(doc, RewriteRequest(_spec(back=_back(doc))))
        total = time.perf_counter() - t0
    finally:
        parts.remove()
    _expect(report)
    if not (after or keep):
        report.result.edit.undo()
    assert fresh == (not after), "a first rewrite with values kept, or one after without"
    return _split(total, report, parts.seconds)


def rewrite_window(
    doc: Any, after: bool = False, keep: bool = False, found: bool = False
) -> dict[str, float]:
    """The Patterns dock's path: on a detached copy (a worker's), shapes propagated and views
    made there, adopted as one edit; a first one undone after and caught up again (``after``:
    as :func:`rewrite_cli`'s).  ``found``: the matches found first, untimed, as the dock's
    *Find* does before *Replace* (the time from the click on *Replace*)."""
    from fxstudio.core.edits import snapshots
    from fxstudio.core.edits.catchup import catch_up
    from fxstudio.core.patterns.apply import RewriteRequest, pattern_of, rewrite_flow
    from fxstudio.core.patterns.matcher import Matcher

    fresh = not doc.kept_values()
    spec = _spec(back=_back(doc))
    request = RewriteRequest(spec)
    if found:
        pattern = pattern_of(doc, spec)
        request = RewriteRequest(
            spec, pattern=pattern, found=Matcher(pattern).find(doc.graph_module)
        )
    parts = _parts()
    try:
        t0 = time.perf_counter()
        snap = snapshots.snapshot(doc)
        copy = snapshots.detached(snap)
        report = rewrite_flow(copy, request)
        snapshots.propagated(copy)
        known = snapshots.views(copy)
        edit = snapshots.adopt(doc, snap, copy, report.result.edit, known)
        total = time.perf_counter() - t0
    finally:
        parts.remove()
    _expect(report)
    if not (after or keep):
        edit.undo()
    catch_up(doc)
    assert fresh == (not after), "a first rewrite with values kept, or one after without"
    out = _split(total, report, parts.seconds)
    if found:
        out["match_s"] = 0.0  # (found before the click)
    return out


def rewrite_window_found(doc: Any, after: bool = False, keep: bool = False) -> dict[str, float]:
    return rewrite_window(doc, after, keep, found=True)


def _back(doc: Any) -> bool:
    """Whether the graph is rewritten already (its multiplications torch.mul calls)."""
    import torch

    return _a_mul(doc).target is torch.mul


def _a_mul(doc: Any) -> Any:
    """The first multiplication by 0.1 (its name changes with each rewrite)."""
    import operator

    import torch

    return next(
        n
        for n in doc.graph.nodes
        if n.op == "call_function" and n.target in (operator.mul, torch.mul)
    )


def _expect(report: Any) -> None:
    replaced = len(report.result.replaced)
    if replaced != 3330 or report.check is None or not report.check.ok:
        raise AssertionError(f"expected 3,330 replacements, checked: {report.describe()}")
    if report.check.runs != 3:
        raise AssertionError(f"the check ran on {report.check.runs} inputs, not 3")


def _split(total: float, report: Any, seconds: dict[str, float]) -> dict[str, float]:
    r = report.result
    copied = "copy" in seconds  # the window's path: shapes after the edit, not within it
    shapes = seconds.get("shapes", 0.0)
    validate = seconds.get("validate", 0.0)
    out = {
        "total_s": total,
        "without_check_s": total - seconds.get("before", 0.0) - seconds.get("check", 0.0),
        "match_s": r.seconds_match,
        "replace_steps_s": r.seconds_replace - validate - (0.0 if copied else shapes),
        "validate_s": validate - seconds.get("recompile", 0.0),
        "recompile_s": seconds.get("recompile", 0.0),
        "shapes_s": shapes,
        "check_s": seconds.get("before", 0.0) + seconds.get("check", 0.0),
        "of_which_model_before_s": seconds.get("before", 0.0),  # ~0 when kept
    }
    if copied:
        out["copy_s"] = seconds["copy"]
        out["views_s"] = seconds["views"]
    return out


def one_edit(doc: Any, i: int) -> dict[str, float]:
    """One node's target changed, as the window edits a big graph (deferred): applied and
    its event sent (what the canvas draws from), then caught up (code, rows, shapes)."""
    from fxstudio.core import edits
    from fxstudio.core.edits.catchup import catch_up

    name = _a_mul(doc).name
    t0 = time.perf_counter()
    edits.set_target(doc, name, "torch.mul" if i % 2 == 0 else "operator.mul")
    shown = time.perf_counter() - t0
    catch_up(doc)
    return {"shown_ms": shown * 1000, "caught_up_s": time.perf_counter() - t0}


def baselines(doc: Any, loaded: Any) -> list[dict[str, Any]]:
    import torch
    import torch.fx as fx

    from fxstudio.core.graph.execution import threads

    out = []

    def fx_replace() -> float:
        gm = fx.symbolic_trace(loaded.module)
        t0 = time.perf_counter()
        ns: dict[str, Any] = {"torch": torch}
        exec(PATTERN + REPLACEMENT, ns)  # noqa: S102 - the bench's own two functions
        n = len(fx.replace_pattern(gm, ns["pattern"], ns["replacement"]))
        assert n == 3330, n
        return time.perf_counter() - t0

    out.append(
        {
            "what": "baseline: torch.fx.replace_pattern (+ recompile), no checks, no shapes",
            "median_s": round(statistics.median(fx_replace() for _ in range(REPEATS)), 3),
        }
    )
    gm, x = doc.graph_module, doc.example_inputs
    for n in (torch.get_num_threads(), 1):
        with threads(n), torch.no_grad():
            runs = []
            for _ in range(5):
                t0 = time.perf_counter()
                gm(*x)
                runs.append(time.perf_counter() - t0)
        out.append(
            {
                "what": f"baseline: one run of the model, {n} thread(s)",
                "median_s": round(statistics.median(runs), 3),
            }
        )
    return out


def bench_rewrite_scale(emit: Callable[..., None]) -> None:
    from fxstudio.core.model.loading import load_model
    from fxstudio.core.sessions.documents import open_document

    doc = open_document(SPEC, ("2x8",))
    doc.rows()  # (the window's open makes them for its table: open_prepared)
    assert doc.weights  # (asked by the window's title and status bar: known since the open)
    loaded = load_model(SPEC, ("2x8",))
    common = {"bench": "rewrite_scale", "nodes": len(doc), "matches": 3330}
    doc.defer_heavy = True  # the first edit after the open (and its way back)
    first = [one_edit(doc, i) for i in range(2)]
    emit(**common, what="the first edit after the open (deferred)", load="quiet", **first[0])
    doc.defer_heavy = False
    doc.ensure_compiled()
    rewrite_cli(doc)  # warm-up: the first pattern trace
    for loaded_on in (False, True):
        with load(loaded_on):
            state = "under load (2 busy processes)" if loaded_on else "quiet"
            for row in baselines(doc, loaded):
                emit(**common, **row, load=state)
            for path, rewrite_once in (
                ("command line path (rewrite_flow)", rewrite_cli),
                ("window path (copy, adopt)", rewrite_window),
                ("window path, matches found first (Find, then Replace)", rewrite_window_found),
            ):
                doc.defer_heavy = rewrite_once is not rewrite_cli
                first = _median([rewrite_once(doc) for _ in range(REPEATS)])
                emit(**common, what=f"first rewrite, {path}", load=state, **first)
                rewrite_once(doc, keep=True)  # A: the model after it kept (not timed)
                then = _median([rewrite_once(doc, after=True) for _ in range(REPEATS)])
                emit(**common, what=f"rewrite after a rewrite, {path}", load=state, **then)
                assert not _back(doc)  # B, A, B: back where it started
                doc.drop_caches()  # (nothing kept: the next first rewrite runs the model)
            doc.defer_heavy = True
            edit = _median([one_edit(doc, i) for i in range(2 * REPEATS)])
            emit(**common, what="one edit of one node (deferred)", load=state, **edit)
            doc.defer_heavy = False
            doc.ensure_compiled()


if __name__ == "__main__":

    def _emit(**record: object) -> None:
        print(json.dumps(record), flush=True)

    bench_rewrite_scale(_emit)
