"""Export benchmarks: fxstudio's standalone module against GraphModule.to_folder."""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

from fxstudio.core.graph.request import OpenRequest
from fxstudio.core.saving.export import export
from fxstudio.core.sessions.documents import open_document

SYNTHETIC = Path(__file__).resolve().parent / "synthetic.py"


def _size(paths) -> int:
    return sum(p.stat().st_size for p in paths)


def bench_export(emit, timed) -> None:
    cases = [
        ("resnet50 (synthetic, 25.6 M parameters)", f"{SYNTHETIC}:resnet50", ("1x3x224x224",), 3),
        ("deep residual MLP", f"{SYNTHETIC}:deep_10000", (), 3),
    ]
    for label, spec, inputs, repeats in cases:
        doc = open_document(OpenRequest(spec, inputs=inputs))
        gm = doc.graph_module
        work = Path(tempfile.mkdtemp(prefix="fxs-bench-"))
        try:
            counter = iter(range(10**6))

            def ours(doc=doc, work=work, counter=counter):
                export(doc, work / f"m{next(counter)}.py")

            def to_folder(gm=gm, work=work, counter=counter):
                gm.to_folder(work / f"folder{next(counter)}", "Module")

            t_ours = timed(ours, repeats)
            t_base = timed(to_folder, repeats)
            py = next(work.glob("m*.py"))
            ours_files = [py, py.with_suffix(".safetensors")]
            folder = next(work.glob("folder*"))
            base_files = [p for p in folder.rglob("*") if p.is_file()]
            common = {"bench": "export", "model": label, "nodes": len(doc), "repeats": repeats}
            emit(
                **common,
                what="baseline: GraphModule.to_folder",
                median_s=round(statistics.median(t_base), 4),
                files=len(base_files),
                bytes=_size(base_files),
            )
            emit(
                **common,
                what="fxstudio standalone .py + .safetensors",
                median_s=round(statistics.median(t_ours), 4),
                ratio_vs_to_folder=round(statistics.median(t_ours) / statistics.median(t_base), 2),
                files=2,
                bytes=_size(ours_files),
                py_bytes=py.stat().st_size,
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)
