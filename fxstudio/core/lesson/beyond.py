"""Steps 8–10 of *Learn FX*, beyond the graph in hand: what symbolic tracing cannot capture
(the traps, each explained and fixed), a real pass measured (conv + BatchNorm folding), and
what ``torch.export`` captures instead -- each step's text and check, as plain functions of
(document, state) like :mod:`.checks`' steps 1–7.
"""

from __future__ import annotations

from fxstudio.core.fxcompat import BatchNormBase
from fxstudio.core.graph.document import GraphDocument
from fxstudio.core.graph.graphviews import format_target
from fxstudio.core.lesson.state import (
    PASS_MODEL,
    TRAPS,
    LessonState,
    Verdict,
    count_word,
    edits_word,
)

# 8. the classic failures -------------------------------------------------------------------------


def case_fixed(doc: GraphDocument | None, spec: str) -> bool:
    """Whether ``doc`` is a capture of trap ``spec`` without the trap (a failure that now
    traces, or a silent trap gone)."""
    from fxstudio.core.model.fixes import diagnose_graph

    return doc is not None and doc.request.spec == spec and not diagnose_graph(doc, try_fixes=False)


def failures_intro(doc: GraphDocument | None, state: LessonState) -> str:
    rows = "\n".join(f"- **{label}** (`{spec}`)" for _, spec, label in TRAPS)
    return (
        "Symbolic tracing records what happens to Proxies, so code that needs a *value* "
        "fails, and code that makes a value without one is silently frozen. The "
        f"{count_word(len(TRAPS))} classic cases:\n\n"
        + rows
        + "\n\nOpen each: fxstudio shows the rule at your line and the fix it can make "
        "itself — each fix captures the model again (a leaf module, the export frontend, the "
        "training mode)."
    )


def failures_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    fixed = set(state.facts.get("fixed", []))
    left = [label for cid, _, label in TRAPS if cid not in fixed]
    if left:
        return Verdict(
            False, f"Fixed {len(TRAPS) - len(left)} of {len(TRAPS)}; still: {', '.join(left)}."
        )
    return Verdict(True, f"All {count_word(len(TRAPS))} traps explained and fixed.")


# 9. a real pass --------------------------------------------------------------------------------


def batchnorms(doc: GraphDocument) -> int:
    return sum(
        1
        for n in doc.graph.nodes
        if n.op == "call_module"
        and isinstance(doc.graph_module.get_submodule(str(n.target)), BatchNormBase)
    )


def pass_intro(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "A real pass: fold each BatchNorm into the convolution before it (the FX tutorial "
        "`fx_conv_bn_fuser`). In eval mode BN is an affine map per channel, so "
        "`w' = w·γ/σ`, `b' = (b−μ)·γ/σ + β` — one op instead of two, the same numbers up to "
        "rounding. Measure it: pin the graph as the baseline in the **Run** dock, fold, and "
        "compare (both versions timed interleaved, a 95 % interval on the speed-up)."
    )


def pass_task(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "Press Pin baseline in the Run dock; choose Rewrite ▸ Fold conv + BatchNorm and press "
        "Replace in the Patterns dock; then press Compare in the Run dock."
    )


def pass_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    if doc is None or doc.request.spec != PASS_MODEL:
        return Verdict(False, f"This step works on {PASS_MODEL}: press Open the ResNet.")
    left = batchnorms(doc)
    if left:
        fold = "Rewrite ▸ Fold conv + BatchNorm"
        return Verdict(False, f"{left} BatchNorm nodes left: fold them ({fold}).")
    speedup = state.facts.get("speedup")
    if speedup is None:
        return Verdict(
            False, "Folded. Now press Compare in the Run dock: the pinned baseline against this."
        )
    lo, hi = state.facts.get("ci", (speedup, speedup))
    verdict = (
        "a significant change" if state.facts.get("significant") else "not a significant change"
    )
    return Verdict(
        True, f"Folded and measured: {speedup:.2f}× (95 % CI {lo:.2f}–{hi:.2f}), {verdict}."
    )


# 10. torch.export -------------------------------------------------------------------------------


def export_begin(doc: GraphDocument | None, state: LessonState) -> None:
    """The symbolically traced graph open now, to compare the export graph with: its size,
    its edits and -- when it is the trace as made -- the trace's size (``fx_nodes``; of an
    edited graph, :func:`~fxstudio.core.flows.lesson.traced_nodes` counts a fresh trace and
    :func:`~fxstudio.core.lesson.syllabus.record_trace_size` records it)."""
    if doc is None or doc.request.frontend != "fx":
        return
    edits = len(doc.history)
    state.baseline.update(fx_spec=doc.request.spec, fx_open=len(doc), fx_edits=edits)
    if edits:
        state.baseline.pop("fx_nodes", None)  # not the trace's: counted afresh
    else:
        state.baseline["fx_nodes"] = len(doc)


def trace_size_wanted(state: LessonState) -> str | None:
    """The spec of the model whose fresh trace step 10 still needs counted, if any."""
    base = state.baseline
    if base.get("fx_spec") and base.get("fx_edits") and base.get("fx_nodes") is None:
        return str(base["fx_spec"])
    return None


def export_intro(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "`torch.export` captures the same model differently: it runs `forward` with fake "
        "tensors of real shapes, so sizes, `len()` and `torch.randn` are known or recorded, "
        "and it decomposes to **ATen** ops (`torch.ops.aten.linear.default`), parameters read "
        "by `get_attr`, with guards on the shapes it assumed. A branch on a value still needs "
        "`torch.cond`; `torch.compile` goes further and splits at *graph breaks* "
        "(`TORCH_LOGS=graph_breaks`, tlparse, depyf show them)."
    )


def export_task(doc: GraphDocument | None, state: LessonState) -> str:
    return (
        "Press Open with torch.export (the same model, through the export frontend), and "
        "compare the tables."
    )


def _fx_said(doc: GraphDocument, state: LessonState) -> str:
    """What step 10 says of the symbolic trace of the same model: the size of a fresh trace
    and, when the graph open before was edited, its size too (never one for the other)."""
    base = state.baseline
    if base.get("fx_spec") != doc.request.spec:
        return ""
    said = []
    if base.get("fx_nodes") is not None:
        said.append(f"symbolic tracing gives {base['fx_nodes']}")
    if base.get("fx_edits"):
        said.append(
            f"the fx graph you had open has {base['fx_open']} after "
            f"{edits_word(int(base['fx_edits']))}"
        )
    return f" ({'; '.join(said)})" if said else ""


def export_check(doc: GraphDocument | None, state: LessonState) -> Verdict:
    if doc is None or doc.request.frontend != "export":
        return Verdict(
            False, "Press Open with torch.export (the model through the export frontend)."
        )
    aten = sum(
        1
        for n in doc.graph.nodes
        if n.op == "call_function" and format_target(n).startswith("torch.ops.aten")
    )
    gets = sum(1 for n in doc.graph.nodes if n.op == "get_attr")
    return Verdict(
        True,
        f"The export graph has {len(doc)} nodes{_fx_said(doc, state)}: {aten} ATen calls, "
        f"{gets} get_attr reads of its parameters, buffers and constants.",
    )
