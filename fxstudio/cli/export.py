"""``fxstudio export``: the captured model saved -- a standalone ``.py``, the forward code,
TorchScript, ``.pt2`` or ONNX -- and, with ``--verify``, the saved module checked."""

from __future__ import annotations

import argparse
import sys

from fxstudio.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    MODEL_HELP,
    AddParser,
    data_out,
    model_options,
    request_from,
)


def add_parser(add: AddParser) -> argparse.ArgumentParser:
    p = add(
        "export",
        parents=[model_options()],
        description="Save the captured model. The format follows OUT's suffix (.py: a "
        "standalone module with a .safetensors file beside it; .pt: TorchScript; .pt2: "
        "torch.export; .onnx: ONNX) unless --format says otherwise.",
    )
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")
    p.add_argument(
        "--format",
        choices=("py", "code", "torchscript", "pt2", "onnx"),
        help="py: standalone module; code: the forward code only; torchscript; pt2; onnx",
    )
    p.add_argument("--force", action="store_true", help="replace files that already exist")
    p.add_argument(
        "--verify",
        action="store_true",
        help="(py) import the saved module in a fresh process and compare its outputs",
    )
    p.set_defaults(command=cmd_export)
    return p


def cmd_export(ns: argparse.Namespace) -> int:
    from fxstudio.core.flows import export, open_document
    from fxstudio.core.flows.save import format_for, verify_standalone

    fmt = format_for(ns.output, ns.format)  # a bad name fails before the model is built
    doc = open_document(request_from(ns))
    result = export(doc, ns.output, fmt, force=ns.force)
    for path in result.paths:
        print(f"wrote {path}", file=data_out())
    for note in result.notes:
        print(f"fxstudio: note: {note}", file=sys.stderr)
    if ns.verify:
        if fmt != "py":
            print("fxstudio: note: --verify checks .py modules only", file=sys.stderr)
            return EXIT_OK
        check = verify_standalone(ns.output, doc)
        print(f"verified: {check}", file=data_out())
        if not check.ok:
            print(
                "fxstudio: error: the saved module does not reproduce the model "
                f"({check.one_thread.describe() if not check.bitwise_equal else check})",
                file=sys.stderr,
            )
            return EXIT_USAGE
    return EXIT_OK
