"""``fxstudio memory``: the Memory dock without a window -- where the bytes go, estimated from
the graph without running it (any input size, structure-only models too), measured in a real
run on request, for a training step on request, and before and after against a baseline."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from fxstudio.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    MODEL_HELP,
    AddParser,
    add_overlay_outputs,
    data_out,
    model_options,
    overlay_outputs,
    request_from,
    write_overlays,
)

if TYPE_CHECKING:
    from fxstudio.core.flows import MemoryResult


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    p = add(
        "memory",
        parents=[model_options()],
        conflict_handler="resolve",  # --train: a training step here (its graph in train mode)
        description="Where the model's memory goes, worked out from the graph without running "
        "it (fake tensors: any --input size, structure-only models with --no-weights too): "
        "each node's bytes (views and in-place ops allocate nothing), the live bytes after "
        "it, the peak and what is live there, parameters and buffers apart, per module. "
        "--measure runs it and measures; --train adds a training step; --against compares "
        "with a baseline (before and after a rewrite).",
    )
    p.add_argument("model", help=MODEL_HELP + " (or a .fxstudio session)")
    p.add_argument(
        "--train",
        action="store_true",
        help="a training step too: the training-mode graph, its backward, gradients and the "
        "optimizer's state",
    )
    p.add_argument(
        "--optimizer",
        choices=("sgd", "momentum", "adam", "adamw"),
        default="adamw",
        help="the optimizer of --train: sgd (no state), momentum (1 state), adam and adamw "
        "(2 states; default adamw)",
    )
    p.add_argument(
        "--backward",
        action="store_true",
        help="with --train: print the backward's nodes in order, each with the bytes it "
        "allocates, the live bytes after it and the document's node it comes from",
    )
    p.add_argument(
        "--measure", action="store_true", help="also run the model and measure its memory"
    )
    p.add_argument("--device", default="cpu", help="where --measure runs: cpu, cuda, cuda:N")
    p.add_argument(
        "--against",
        metavar="MODEL_OR_SESSION",
        help="the baseline (before) to compare with, opened with the same options",
    )
    p.add_argument(
        "--module",
        metavar="PATH",
        help="also say this module's bytes and its largest values (e.g. layers.0)",
    )
    p.add_argument("--json", metavar="OUT", help="write the result as JSON here")
    add_overlay_outputs(p, "the bytes each node allocates (MiB)")
    p.add_argument("--force", action="store_true", help="replace existing output files")
    p.set_defaults(command=cmd_memory)
    return p


def cmd_memory(ns: argparse.Namespace) -> int:
    from dataclasses import replace

    from fxstudio.core.flows import MemoryRequest, memory_flow, open_document
    from fxstudio.core.process.files import check_writable

    if ns.backward and not ns.train:
        print(
            "fxstudio: error: --backward lists a training step's backward: add --train.",
            file=sys.stderr,
        )
        return EXIT_USAGE
    for out in (ns.json, *overlay_outputs(ns)):
        if out:
            check_writable(out, ns.force)
    if ns.measure:
        from fxstudio.core.runtime.devices import resolve

        resolve(ns.device)  # a missing device is said before the model is built
    request = request_from(ns)
    doc = open_document(request)
    base = open_document(replace(request, spec=ns.against)) if ns.against else None
    result = memory_flow(
        doc, MemoryRequest(None, ns.train, ns.optimizer, ns.measure, ns.device), base
    )
    if ns.module is not None:
        said = _module(result, ns.module)
        if said is None:
            return EXIT_USAGE
    print(result.describe(), file=data_out())
    if ns.module is not None:
        print(said, file=data_out())
    if ns.backward and result.training is not None:
        print(_backward(result.training), file=data_out())
    if ns.json:
        result.write(ns.json)
        print(f"wrote {ns.json}", file=sys.stderr)
    if overlay_outputs(ns):
        write_overlays(ns, result.node_bytes())
    refused = next((r.refused for r in (result, result.before) if r is not None and r.refused), "")
    if refused:  # the estimate is printed; the measurement asked for was not made
        print(f"fxstudio: error: {refused}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK


def _module(result: MemoryResult, path: str) -> str | None:
    """The module's lines, or None (said on stderr) when the graph has no such module."""
    from fxstudio.core.flows.memory import format_bytes

    est = result.estimate
    m = est.module(path)
    if m is None:
        known = [x.path for x in est.modules if x.path.count(".") <= path.count(".")]
        near = [k for k in known if path.split(".")[-1] in k][:5] or known[:5]
        print(
            f"fxstudio: error: the graph has no module '{path}'. Modules there: "
            f"{', '.join(near)}{' ...' if len(known) > len(near) else ''} "
            "(fxstudio show MODEL lists each node's module).",
            file=sys.stderr,
        )
        return None
    inside = [n for n in est.nodes if n.module == path or n.module.startswith(path + ".")]
    largest = sorted((n for n in inside if n.bytes), key=lambda n: -n.bytes)[:5]
    return (
        f"  {path}: allocates {format_bytes(m.bytes)} in {len(inside)} node(s), peak "
        f"{format_bytes(m.peak_live_bytes)} live while it runs, parameters and buffers "
        f"{format_bytes(m.params_bytes)}"
        + (
            "; largest: " + ", ".join(f"{n.name} {format_bytes(n.bytes)}" for n in largest)
            if largest
            else ""
        )
    )


def _backward(step: Any) -> str:
    """The training step's backward nodes in order: bytes, live after, where each comes from."""
    from fxstudio.core.flows.memory import format_bytes

    rows = step.backward
    width = min(max((len(n.name) for n in rows), default=4), 28)  # (a longer name: its own)
    lines = [
        f"  backward: {len(rows)} node(s) in order -- bytes it allocates, live after it, the "
        "document's node it comes from"
    ]
    for i, n in enumerate(rows):
        origin = step.origins.get(n.name)
        if origin and n.target == n.name:
            came = f"saved by the forward, from {origin}"
        elif origin:
            came = f"from {origin}"
        elif n.name.startswith("tangents"):
            came = "(the loss's gradient)"
        elif n.target == n.name:
            came = "(an input: a parameter or a model input)"
        else:
            came = "(autograd's own)"
        made = format_bytes(n.bytes) if n.bytes else "-"
        lines.append(
            f"  {i:>5}  {n.name:<{width}}  {made:>10}  {format_bytes(n.live_bytes):>10}  {came}"
        )
    return "\n".join(lines)
