"""Check a saved standalone module: it computes what the editor's model computes -- bit for
bit on one thread, within a tolerance derived from the dtype on all of them
(:func:`verify_standalone`, run in a fresh process by :func:`run_standalone`); and the
comparison of two sets of outputs every feature uses (:func:`compare_outputs`,
:func:`largest_difference`, :func:`tolerance`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from safetensors.torch import save_file

from fxstudio.core.errors import ExportError
from fxstudio.core.fxcompat import pytree
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.modes import eval_mode
from fxstudio.core.saving.tensorfiles import read_tensors, storable

# --- checking a standalone module ------------------------------------------------------------
#
# The promise: *the saved module computes what the editor's model computes* -- the same
# outputs, bit for bit, on the same device, with the same dtype and the same number of CPU
# threads.  The saved module runs the same ATen ops in the same order on the same weights, so
# only what changes the order of floating-point sums can make it differ: another thread count
# (reductions are split differently), another device or BLAS build, or memory at another
# alignment (MKL's sgemm takes another kernel path for data that is not 64-byte aligned).  So
# every tensor that reaches a comparison is an ordinary torch-allocated tensor (never a view
# into a file: ``load_file``'s tensors sit at whatever offset the file's header leaves), and
# the check is made once on one thread (bit for bit) and, where the machine has more, once on
# all of them, where only a tolerance derived from the dtype is promised.

_VERIFY = r"""
import importlib.util, sys
class NoFxstudio:
    def find_spec(self, name, path=None, target=None):
        if name == "fxstudio" or name.startswith("fxstudio."):
            raise ImportError("the exported module must not need fxstudio")
sys.meta_path.insert(0, NoFxstudio())
import torch
import torch.utils._pytree as pytree
from safetensors.torch import load_file, save_file
py_path, data_path, out_path, threads = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
spec = importlib.util.spec_from_file_location("exported_model", py_path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
model = mod.load()
# Copies: the loaded tensors point into the file at unaligned offsets (another sgemm path).
data = {k: v.clone() for k, v in load_file(data_path).items()}
inputs = [data[f"in.{i}"] for i in range(len(data))]
results = {}
for run, n in enumerate(int(t) for t in threads.split(",")):
    torch.set_num_threads(n)
    with torch.no_grad():
        out = model(*inputs)
    leaves = [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]
    # Copies: outputs may be an input, a weight, one tensor twice or the same tensor on both
    # runs, and safetensors refuses to save tensors that share memory.
    results.update(
        {
            f"{run}.{i}": t.detach().to("cpu", memory_format=torch.contiguous_format, copy=True)
            for i, t in enumerate(leaves)
        }
    )
save_file(results, out_path, metadata={"runs": threads})
"""


def tolerance(dtype: torch.dtype) -> float:
    """The relative and absolute tolerance for one value of ``dtype`` computed two ways that
    may sum in another order (other threads, another device): 100 ulps at 1.0 for 32- and
    64-bit floats (float32: 1.2e-05), 10 for 16-bit ones (float16: 9.8e-03, bfloat16:
    7.8e-02); integers and bools must be equal.

    >>> tolerance(torch.float32), tolerance(torch.int64)
    (1.1920928955078125e-05, 0.0)
    """
    if not (dtype.is_floating_point or dtype.is_complex):
        return 0.0
    info = torch.finfo(dtype)
    return info.eps * (100 if info.bits >= 32 else 10)


@dataclass(frozen=True)
class Comparison:
    """Outputs computed two ways, compared: bit for bit, and against the dtype's tolerance
    (``|a - b| <= tol + tol * |b|`` for every element)."""

    bitwise_equal: bool
    outputs: int
    expected: int
    max_abs_diff: float = 0.0
    max_rel_diff: float = 0.0
    tolerance: float = 0.0  # the loosest tolerance of the outputs' dtypes
    within_tolerance: bool = True
    mismatch: str = ""  # a count, shape or dtype that differs, when one does

    def describe(self) -> str:
        if self.mismatch:
            return self.mismatch
        if self.bitwise_equal:
            return f"{self.outputs} output(s) equal bit for bit"
        verdict = "within" if self.within_tolerance else "BEYOND"
        return (
            f"not bit for bit: max |diff| {self.max_abs_diff:.3g}, max relative diff "
            f"{self.max_rel_diff:.3g}, {verdict} the tolerance {self.tolerance:.3g}"
        )


def compare_outputs(got: list[torch.Tensor], expected: list[torch.Tensor]) -> Comparison:
    """Compare two lists of output tensors (in one process: both are in memory here).

    >>> a = [torch.tensor([1.0, 2.0])]
    >>> compare_outputs(a, [torch.tensor([1.0, 2.0])]).bitwise_equal
    True
    >>> c = compare_outputs(a, [torch.tensor([1.0, 2.000001])])
    >>> c.bitwise_equal, c.within_tolerance, f"{c.max_abs_diff:.1e}"
    (False, True, '9.5e-07')
    """
    n, m = len(got), len(expected)
    if n != m:
        return Comparison(
            False, n, m, within_tolerance=False, mismatch=f"{n} output(s) where {m} were expected"
        )
    worst_abs = worst_rel = tol_used = 0.0
    same = within = True
    for i, (a, b) in enumerate(zip(got, expected, strict=True)):
        if a.shape != b.shape or a.dtype != b.dtype:
            return Comparison(
                False,
                n,
                m,
                within_tolerance=False,
                mismatch=f"output {i} is {_kind(a)} where {_kind(b)} was expected",
            )
        a, b = a.detach().cpu(), b.detach().cpu()
        if torch.equal(_bytes(a), _bytes(b)):
            continue
        same = False
        tol = tolerance(b.dtype)
        tol_used = max(tol_used, tol)
        wide = torch.complex128 if b.dtype.is_complex else torch.float64
        a64, b64 = a.to(wide), b.to(wide)
        # NaN in the same places is equal; elsewhere a NaN is a difference no tolerance covers.
        both_nan = torch.isnan(a64) & torch.isnan(b64)
        diff = torch.where(both_nan, 0.0, (a64 - b64).abs())
        diff = torch.nan_to_num(diff, nan=float("inf"))
        scale = torch.where(both_nan, 0.0, b64.abs())
        if diff.numel():
            worst_abs = max(worst_abs, float(diff.max()))
            rel = diff / scale.clamp_min(torch.finfo(torch.float64).tiny)
            worst_rel = max(worst_rel, float(torch.where(diff == 0, 0.0, rel).max()))
            within = within and bool((diff <= tol + tol * scale).all())
    return Comparison(same, n, m, worst_abs, worst_rel, tol_used, same or within)


def largest_difference(got: torch.Tensor, expected: torch.Tensor) -> tuple[float, float]:
    """The largest ``|got - expected|`` (NaN ignored), and that relative to ``expected``'s
    largest magnitude -- not element by element, which a value near zero would blow up (what
    a fold or another dtype changes is rounding, measured against the output's scale).

    >>> largest_difference(torch.tensor([1.0, 100.0]), torch.tensor([1.5, 100.0]))
    (0.5, 0.005)
    """
    d = (got.detach().double().cpu() - expected.detach().double().cpu()).nan_to_num(0.0).abs()
    worst = float(d.max()) if d.numel() else 0.0
    scale = (
        float(expected.detach().double().nan_to_num(0.0).abs().max()) if expected.numel() else 0.0
    )
    return worst, (worst / scale if scale > 0 else worst)


def _bytes(t: torch.Tensor) -> torch.Tensor:
    """The tensor's bytes (bit for bit: NaN equals the same NaN, -0.0 differs from 0.0)."""
    return t.contiguous().reshape(-1).view(torch.uint8)


def _kind(t: torch.Tensor) -> str:
    return f"{'x'.join(map(str, t.shape)) or 'scalar'}:{str(t.dtype).removeprefix('torch.')}"


@dataclass(frozen=True)
class Verification:
    """A saved module run in a fresh process against the editor's model: on one thread (the
    promise: bit for bit) and, where the machine has more, on all of them (a tolerance)."""

    one_thread: Comparison
    threaded: Comparison | None = None
    threads: int = 1

    @property
    def bitwise_equal(self) -> bool:
        return self.one_thread.bitwise_equal

    @property
    def ok(self) -> bool:
        """Bit for bit on one thread, and within the dtype's tolerance on all threads."""
        return self.bitwise_equal and (self.threaded is None or self.threaded.within_tolerance)

    def __str__(self) -> str:
        if self.one_thread.bitwise_equal:
            text = (
                f"the saved module's {self.one_thread.outputs} output(s) equal the editor's "
                "bit for bit (same device and dtype, one thread)"
            )
        else:
            text = (
                f"the saved module's outputs differ from the editor's: {self.one_thread.describe()}"
            )
        if self.threaded is not None:
            text += f"; on {self.threads} threads: {self.threaded.describe()}"
        return text


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """Run torch on ``n`` threads: bit-for-bit comparisons between processes need the same
    order of floating-point sums, which another number of threads does not promise."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def one_thread() -> contextlib.AbstractContextManager[None]:
    """:func:`threads` (1)."""
    return threads(1)


def reference_outputs(doc: GraphDocument, n_threads: int = 1) -> list[torch.Tensor]:
    """The document's model run in eval mode on its example inputs: tensor leaves, in order."""
    gm = doc.graph_module
    doc.ensure_compiled()
    with eval_mode(gm), torch.no_grad(), threads(n_threads):
        out = gm(*doc.example_inputs)
    return [t for t in pytree.tree_leaves(out) if isinstance(t, torch.Tensor)]


def verify_standalone(py_path: str | os.PathLike[str], doc: GraphDocument) -> Verification:
    """Import the saved module in a fresh Python process (with fxstudio unimportable), load
    its weights and compare its outputs with the document's on the example inputs: on one
    thread, and on all of this machine's threads when it has more than one."""
    n = torch.get_num_threads()
    expected = {1: reference_outputs(doc)}
    if n > 1:
        expected[n] = reference_outputs(doc, n)
    return run_standalone(py_path, doc.example_inputs, expected)


def run_standalone(
    py_path: str | os.PathLike[str],
    inputs: tuple[Any, ...],
    expected: list[torch.Tensor] | dict[int, list[torch.Tensor]],
) -> Verification:
    """Run a saved module's ``load()(*inputs)`` in a fresh process and compare its outputs
    with ``expected``: a list computed on one thread, or ``{threads: outputs}`` (1 among
    them) for a run on each of those thread counts."""
    if not inputs or not all(isinstance(t, torch.Tensor) for t in inputs):
        raise ExportError("Checking the saved module needs tensor example inputs (--input).")
    by_threads = expected if isinstance(expected, dict) else {1: expected}
    counts = sorted(by_threads)
    if counts[0] != 1:
        raise ValueError("run_standalone needs the one-thread outputs")
    data = storable({f"in.{i}": t for i, t in enumerate(inputs)})
    with tempfile.TemporaryDirectory() as tmp:
        data_path, out_path = os.path.join(tmp, "in.safetensors"), os.path.join(tmp, "out.st")
        save_file(data, data_path)
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                _VERIFY,
                os.path.abspath(py_path),  # it runs in the temporary folder
                data_path,
                out_path,
                ",".join(map(str, counts)),
            ],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        if result.returncode != 0:
            raise ExportError(
                "The saved module failed to run in a fresh Python process: "
                + error_line(result.stderr)
            )
        got = read_tensors(out_path)
    comparisons = []
    for run, n in enumerate(counts):
        outs = [got[f"{run}.{i}"] for i in range(sum(k.startswith(f"{run}.") for k in got))]
        comparisons.append(compare_outputs(outs, by_threads[n]))
    return Verification(comparisons[0], comparisons[-1] if len(counts) > 1 else None, counts[-1])


def error_line(stderr: str) -> str:
    """The exception a Python process died of (its last traceback's ``Type: message``, a
    message of several lines on one), else the last line it wrote.

    >>> error_line("Traceback (most recent call last):\\n  File ...\\nValueError:\\n  bad\\n")
    'ValueError: bad'
    """
    lines = [line for line in stderr.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")]
    if starts:
        for i in range(starts[-1] + 1, len(lines)):
            if not lines[i][:1].isspace():
                return " ".join(line.strip() for line in lines[i:])[:500]
    return lines[-1][:500] if lines else "it wrote no error message"
